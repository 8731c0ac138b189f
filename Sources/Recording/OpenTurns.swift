/// The writer thread's record of turns that have not ended yet: a turn's bytes go to a segment
/// in one piece when it ends, so each index row names one contiguous range.
///
/// A turn's bytes stay where the loop copied them, in the blocks of the batch being written
/// (`pieces`, chained per turn): a turn that starts and ends within one batch — every turn of a
/// small request — is appended to its segment from those blocks, never copied again. Only a turn
/// still open when its batch ends has its pieces copied (`endBatch`, into `carried`), because the
/// batch's blocks are reused.
///
/// A flow has at most one open turn (turns follow one another), so buffers are keyed by flow.
/// Bounded by `limit` bytes over all open turns; past it, chunk bytes are discarded and their
/// turn is marked incomplete. Not `Sendable`: the writer thread owns it.
struct OpenTurns {
    /// A range of a block of the batch being written; `next` chains a turn's ranges (-1: last).
    struct Piece: Equatable {
        var block: Int
        var start: Int
        var count: Int
        var next = -1
    }

    /// A flow's open turn. Plain values only (no array): copying one, or moving it in and out
    /// of the table, is a few loads and stores. With the carried bytes inside it, every read of
    /// a buffer out of the table retained and released them through outlined copies: ~700
    /// instructions a turn end (callgrind, `Scripts/bench-callgrind` h1 row, i25-rec).
    struct Buffer {
        var turn: Turn
        /// This batch's ranges, first and last index in `pieces` (-1: none).
        var firstPiece = -1
        var lastPiece = -1
        /// Bytes held: those carried (in `carried`) and the pieces.
        var count = 0
        /// Whether `carried` holds bytes of this turn from earlier batches.
        var hasCarried = false
        var lost = false
    }

    /// A turn ready to be written: final figures (kept = bytes actually held) and where its bytes
    /// are: `carried`, then the pieces from `firstPiece` on (in the batch being written).
    /// The figures are the recorder's (`TurnRecorder`), which already leave out chunks the queue
    /// dropped; the writer changes them only for what it lost itself (its buffers were full, or
    /// the turn's end never came).
    struct Finished {
        var flow: Int64
        var turn: Turn
        var carried: [UInt8]
        var firstPiece: Int
    }

    let limit: Int64
    private(set) var buffered: Int64 = 0
    private var open: [Int64: Buffer] = [:]
    /// Bytes of open turns that came in earlier batches, copied when their batch ended, by flow
    /// (only turns that outlive a batch have any).
    private var carried: [Int64: [UInt8]] = [:]
    /// The ranges of the batch being written (emptied by `endBatch`).
    private(set) var pieces: [Piece] = []

    init(limit: Int64) { self.limit = limit }

    var isEmpty: Bool { open.isEmpty }

    /// Adds a chunk's kept bytes (`count` bytes at `start` of block `block` of the batch being
    /// written) to its turn.
    /// - Returns: bytes discarded (0 when all fit), and the flow's earlier turn if one was still
    ///   open (its end event was lost).
    mutating func append(flow: Int64, turn: Turn, block: Int, start: Int, count: Int) -> (discarded: Int, orphan: Finished?) {
        var orphan: Finished?
        var found = open.index(forKey: flow)
        if let index = found, open.values[index].turn.number < turn.number {
            // Its end was lost: the earlier turn is written as it is, and this one starts afresh.
            orphan = take(open.remove(at: index).value, flow: flow, ending: nil)
            found = nil
        }
        let index: Dictionary<Int64, Buffer>.Index
        if let found {
            index = found
        } else {
            open[flow] = Buffer(turn: turn)
            index = open.index(forKey: flow)!
        }
        // Mutated in place in the table: one lookup per chunk, no copy of the buffer.
        if buffered + Int64(count) > limit {
            open.values[index].lost = true
            return (count, orphan)
        }
        let piece = pieces.count
        pieces.append(Piece(block: block, start: start, count: count))
        let previous = open.values[index].lastPiece
        if previous < 0 { open.values[index].firstPiece = piece } else { pieces[previous].next = piece }
        open.values[index].lastPiece = piece
        open.values[index].count += count
        buffered += Int64(count)
        return (0, orphan)
    }

    /// Ends `turn` of `flow` with its final figures.
    /// - Returns: the flow's earlier turn if one was still open, then this one.
    mutating func end(flow: Int64, turn: Turn) -> (earlier: Finished?, ended: Finished) {
        // One lookup: the flow's open turn is an earlier one (its end was lost), this one, or a
        // later one (put back: a writer that sees events in order never meets it).
        var earlier: Finished?
        if let taken = open.removeValue(forKey: flow) {
            if taken.turn.number < turn.number {
                earlier = take(taken, flow: flow, ending: nil)
            } else if taken.turn.number == turn.number {
                return (nil, take(taken, flow: flow, ending: turn))
            } else {
                open[flow] = taken
            }
        }
        var final = turn
        if final.keptBytes != 0 {
            // Nothing of it reached the writer although the recorder kept bytes: only a loss of
            // the writer's own could do that (caught in debug builds).
            assertionFailure("the recorder's kept figure is the bytes that reached the writer")
            final.keptBytes = 0
            final.incomplete = true
        }
        return (earlier, Finished(flow: flow, turn: final, carried: [], firstPiece: -1))
    }

    /// The batch being written is done with: the turns still open copy their pieces of it (its
    /// blocks are about to be reused), and the pieces are forgotten.
    mutating func endBatch(_ batch: ContentBatch) {
        guard !pieces.isEmpty else { return }
        var index = open.startIndex
        while index != open.endIndex {
            if open.values[index].firstPiece >= 0 {
                let flow = open.keys[index]
                var next = open.values[index].firstPiece
                while next >= 0 {
                    let piece = pieces[next]
                    carried[flow, default: []].append(contentsOf: batch.bytes(block: piece.block, start: piece.start, count: piece.count))
                    next = piece.next
                }
                open.values[index].hasCarried = true
                open.values[index].firstPiece = -1
                open.values[index].lastPiece = -1
            }
            index = open.index(after: index)
        }
        pieces.removeAll(keepingCapacity: pieces.capacity <= 65_536)
    }

    /// Every open turn, for shutdown (after the last batch ended): their ends never came, so they
    /// are written as incomplete.
    mutating func drain() -> [Finished] {
        let buffers = open
        let all = buffers.map { flow, buffer in take(buffer, flow: flow, ending: nil) }
        open = [:]
        carried = [:]
        buffered = 0
        return all.sorted { ($0.flow, $0.turn.number) < ($1.flow, $1.turn.number) }
    }

    /// The bytes of `finished`, in order: `carried`, then its pieces in `batch` (tests, and a
    /// reader that wants them in one array).
    func bytes(of finished: Finished, in batch: ContentBatch?) -> [UInt8] {
        var out = finished.carried
        var next = finished.firstPiece
        while next >= 0, let batch {
            let piece = pieces[next]
            out.append(contentsOf: batch.bytes(block: piece.block, start: piece.start, count: piece.count))
            next = piece.next
        }
        return out
    }

    /// The turn `buffer` holds, taken out of the record (the caller removed it from `open`):
    /// with `ending`'s figures when its end came (kept = the bytes held: only a loss of the
    /// writer's own makes them differ), else as a turn whose end never came.
    private mutating func take(_ buffer: Buffer, flow: Int64, ending: Turn?) -> Finished {
        buffered -= Int64(buffer.count)
        let bytes = buffer.hasCarried ? carried.removeValue(forKey: flow) ?? [] : []
        guard var final = ending else { return OpenTurns.finish(flow: flow, buffer: buffer, carried: bytes) }
        if buffer.lost || buffer.count != final.keptBytes {
            // Only a loss of the writer's own changes the recorder's figures; a mismatch
            // otherwise is a bug (caught in debug builds; the index never names bytes it lacks).
            assert(buffer.lost, "the recorder's kept figure is the bytes that reached the writer")
            final.keptBytes = buffer.count
            final.incomplete = true
        }
        return Finished(flow: flow, turn: final, carried: bytes, firstPiece: buffer.firstPiece)
    }

    /// A turn whose end event never arrived: what was held, marked incomplete (its seen figure
    /// is only what its last chunk knew).
    private static func finish(flow: Int64, buffer: Buffer, carried: [UInt8]) -> Finished {
        var turn = buffer.turn
        turn.keptBytes = buffer.count
        turn.seenBytes = max(turn.seenBytes, buffer.count)
        turn.incomplete = true
        return Finished(flow: flow, turn: turn, carried: carried, firstPiece: buffer.firstPiece)
    }
}
