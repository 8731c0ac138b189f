/// The writer thread's buffers of turns that have not ended yet: a turn's bytes go to a segment
/// in one piece when it ends, so each index row names one contiguous range.
///
/// A flow has at most one open turn (turns follow one another), so buffers are keyed by flow.
/// Bounded by `limit` bytes over all open turns; past it, chunk bytes are discarded and their
/// turn is marked incomplete. Not `Sendable`: the writer thread owns it.
struct OpenTurns {
    struct Buffer {
        var turn: Turn
        var bytes: [UInt8] = []
        var lost = false
    }

    /// A turn ready to be written: final figures (kept = bytes actually buffered) and bytes.
    /// The figures are the recorder's (`TurnRecorder`), which already leave out chunks the queue
    /// dropped; the writer changes them only for what it lost itself (its buffers were full, or
    /// the turn's end never came).
    struct Finished {
        var flow: Int64
        var turn: Turn
        var bytes: [UInt8]
    }

    let limit: Int64
    private(set) var buffered: Int64 = 0
    private var open: [Int64: Buffer] = [:]

    init(limit: Int64) { self.limit = limit }

    var isEmpty: Bool { open.isEmpty }

    /// Adds a chunk's kept bytes to its turn.
    /// - Returns: bytes discarded (0 when all fit), and the flow's earlier turn if one was still
    ///   open (its end event was lost).
    mutating func append<Bytes: Collection<UInt8>>(flow: Int64, turn: Turn, bytes: Bytes) -> (discarded: Int, orphan: Finished?) {
        let orphan = takeEarlier(flow: flow, than: turn.number)
        // Mutated in place in the dictionary: copying the buffer out and back would copy every
        // byte of the turn so far at each chunk.
        if buffered + Int64(bytes.count) > limit {
            open[flow, default: Buffer(turn: turn)].lost = true
            return (bytes.count, orphan)
        }
        open[flow, default: Buffer(turn: turn)].bytes.append(contentsOf: bytes)
        buffered += Int64(bytes.count)
        return (0, orphan)
    }

    /// Ends `turn` of `flow` with its final figures.
    /// - Returns: the flow's earlier turn if one was still open, then this one.
    mutating func end(flow: Int64, turn: Turn) -> [Finished] {
        var done = takeEarlier(flow: flow, than: turn.number).map { [$0] } ?? []
        var buffer: Buffer?
        if open[flow]?.turn.number == turn.number { buffer = open.removeValue(forKey: flow) }
        let bytes = buffer?.bytes ?? []
        buffered -= Int64(bytes.count)
        var final = turn
        if buffer?.lost == true || bytes.count != final.keptBytes {
            // Only a loss of the writer's own changes the recorder's figures; a mismatch
            // otherwise is a bug (caught in debug builds; the index never names bytes it lacks).
            assert(buffer?.lost == true, "the recorder's kept figure is the bytes that reached the writer")
            final.keptBytes = bytes.count
            final.incomplete = true
        }
        done.append(Finished(flow: flow, turn: final, bytes: bytes))
        return done
    }

    /// Every open turn, for shutdown: their ends never came, so they are written as incomplete.
    mutating func drain() -> [Finished] {
        let all = open.map { flow, buffer in OpenTurns.finish(flow: flow, buffer: buffer) }
        open = [:]
        buffered = 0
        return all.sorted { ($0.flow, $0.turn.number) < ($1.flow, $1.turn.number) }
    }

    private mutating func takeEarlier(flow: Int64, than number: Int) -> Finished? {
        guard let buffer = open[flow], buffer.turn.number < number else { return nil }
        open[flow] = nil
        buffered -= Int64(buffer.bytes.count)
        return OpenTurns.finish(flow: flow, buffer: buffer)
    }

    /// A turn whose end event never arrived: what was buffered, marked incomplete (its seen figure
    /// is only what its last chunk knew).
    private static func finish(flow: Int64, buffer: Buffer) -> Finished {
        var turn = buffer.turn
        turn.keptBytes = buffer.bytes.count
        turn.seenBytes = max(turn.seenBytes, buffer.bytes.count)
        turn.incomplete = true
        return Finished(flow: flow, turn: turn, bytes: buffer.bytes)
    }
}
