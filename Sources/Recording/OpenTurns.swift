/// The writer thread's buffers of turns that have not ended yet: a turn's bytes go to a segment
/// in one piece when it ends, so each index row names one contiguous range.
///
/// Bounded by `limit` bytes over all open turns; past it, chunk bytes are discarded and their
/// turn is marked incomplete. Not `Sendable`: the writer thread owns it.
struct OpenTurns {
    struct Key: Hashable {
        var flow: Int64
        var number: Int
    }

    struct Buffer {
        var turn: Turn
        var bytes: [UInt8] = []
        var lost = false
    }

    /// A turn ready to be written: final figures (kept = bytes actually buffered) and bytes.
    struct Finished {
        var flow: Int64
        var turn: Turn
        var bytes: [UInt8]
    }

    let limit: Int64
    private(set) var buffered: Int64 = 0
    private var open: [Key: Buffer] = [:]

    init(limit: Int64) { self.limit = limit }

    var isEmpty: Bool { open.isEmpty }

    /// Adds a chunk's kept bytes to its turn. - Returns: bytes discarded (0 when all fit), plus
    /// turns of the same flow that must have ended (an earlier number still open: its end was
    /// lost).
    mutating func append(flow: Int64, turn: Turn, bytes: [UInt8]) -> (discarded: Int, orphans: [Finished]) {
        let orphans = takeEarlier(flow: flow, than: turn.number)
        let key = Key(flow: flow, number: turn.number)
        var buffer = open[key] ?? Buffer(turn: turn)
        if buffered + Int64(bytes.count) > limit {
            buffer.lost = true
            open[key] = buffer
            return (bytes.count, orphans)
        }
        buffer.bytes += bytes
        buffered += Int64(bytes.count)
        open[key] = buffer
        return (0, orphans)
    }

    /// Ends `turn` of `flow` with its final figures. - Returns: it, and any earlier turn of the
    /// flow still open.
    mutating func end(flow: Int64, turn: Turn) -> [Finished] {
        var done = takeEarlier(flow: flow, than: turn.number)
        let buffer = open.removeValue(forKey: Key(flow: flow, number: turn.number))
        let bytes = buffer?.bytes ?? []
        buffered -= Int64(bytes.count)
        var final = turn
        if buffer?.lost == true || bytes.count < turn.keptBytes { final.incomplete = true }
        final.keptBytes = bytes.count
        done.append(Finished(flow: flow, turn: final, bytes: bytes))
        return done
    }

    /// Every open turn, for shutdown: their ends never came, so they are written as incomplete.
    mutating func drain() -> [Finished] {
        let all = open.map { key, buffer in OpenTurns.finish(flow: key.flow, buffer: buffer, endLost: true) }
        open = [:]
        buffered = 0
        return all.sorted { ($0.flow, $0.turn.number) < ($1.flow, $1.turn.number) }
    }

    private mutating func takeEarlier(flow: Int64, than number: Int) -> [Finished] {
        let keys = open.keys.filter { $0.flow == flow && $0.number < number }.sorted { $0.number < $1.number }
        return keys.map { key in
            let buffer = open.removeValue(forKey: key)!
            buffered -= Int64(buffer.bytes.count)
            return OpenTurns.finish(flow: flow, buffer: buffer, endLost: true)
        }
    }

    /// A turn whose end event never arrived: what was buffered, marked incomplete when the end
    /// was lost (its seen figure is then only what the last chunk knew).
    private static func finish(flow: Int64, buffer: Buffer, endLost: Bool) -> Finished {
        var turn = buffer.turn
        turn.keptBytes = buffer.bytes.count
        turn.seenBytes = max(turn.seenBytes, buffer.bytes.count)
        if endLost || buffer.lost { turn.incomplete = true }
        return Finished(flow: flow, turn: turn, bytes: buffer.bytes)
    }
}
