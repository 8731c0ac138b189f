/// A flow's id as a hash-table key, hashed with one multiply instead of SipHash.
///
/// `OpenTurns` looks its table up by flow for every chunk and every turn end: with `Int64`
/// keys, a lookup cost 134 instructions, most of them `Hasher`'s SipHash-1-3 (callgrind,
/// `Scripts/bench-callgrind` h1 row, i27-rec; see PERFORMANCE.md for the figure after). The ids
/// are the proxy's own (`FlowFacts.id`), never chosen by a peer, so the table needs no defence
/// against chosen collisions: a multiply by an odd constant (Fibonacci hashing) maps
/// consecutive ids to distinct low bits, the bits `Dictionary` takes its bucket from, and the
/// table's per-instance seed is still mixed in.
struct FlowKey: Hashable {
    var id: Int64

    init(_ id: Int64) { self.id = id }

    func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// `Hashable`'s entry point that `Dictionary` calls (an underscored requirement of the
    /// standard library's protocol): the multiplicative hash, not `hash(into:)`'s SipHash.
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15) ^ seed
    }
}
