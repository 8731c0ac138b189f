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
        /// What it held was deleted (`forgetHeld`, `tv content delete`): what it holds now came after.
        var forgotten = false
        /// False once the turn was taken out (it ended, or was written as an orphan): the entry
        /// stays in the table until the batch ends, so the flow's next turn reuses it.
        var isOpen = true
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
        /// Deleted while open, with nothing after: no row is written for it.
        var deleted = false
    }

    let limit: Int64
    private(set) var buffered: Int64 = 0
    /// A flow's entry, open or idle (keyed by `FlowKey`: no SipHash). An ended turn's entry
    /// stays (idle) until `endBatch`: a small request's turns follow one another on one flow
    /// (request, response, request …), and removing the entry at each end and inserting it
    /// again at the next turn's first chunk took four hash lookups a turn; reused in place,
    /// each chunk and each end takes one (callgrind, `Scripts/bench-callgrind` h1 row, i26-rec).
    private var open: [FlowKey: Buffer] = [:]
    /// Entries of `open` whose turn is open.
    private var openCount = 0
    /// `endBatch`'s list of idle entries to remove (kept from batch to batch).
    private var idle: [FlowKey] = []
    /// Bytes of open turns that came in earlier batches, copied when their batch ended, by flow
    /// (only turns that outlive a batch have any).
    private var carried: [Int64: [UInt8]] = [:]
    /// The ranges of the batch being written (emptied by `endBatch`).
    private(set) var pieces: [Piece] = []

    init(limit: Int64) { self.limit = limit }

    /// No turn is open.
    var isEmpty: Bool { openCount == 0 }

    /// Entries in the table, open and idle (tests: an idle entry lasts until `endBatch`).
    var entries: Int { open.count }

    /// Adds a chunk's kept bytes (`count` bytes at `start` of block `block` of the batch being
    /// written) to its turn. One hash lookup: the table's default subscript finds the flow's
    /// entry or inserts one, and the entry is changed in place.
    /// - Returns: bytes discarded (0 when all fit), and the flow's earlier turn if one was still
    ///   open (its end event was lost).
    mutating func append(flow: Int64, turn: Turn, block: Int, start: Int, count: Int) -> (discarded: Int, orphan: Finished?) {
        OpenTurns.append(to: &open[FlowKey(flow), default: Buffer(turn: turn, isOpen: false)], flow: flow, turn: turn,
                         piece: Piece(block: block, start: start, count: count),
                         limit: limit, buffered: &buffered, openCount: &openCount, pieces: &pieces, carried: &carried)
    }

    /// `append`'s work on the flow's entry (distinct stored properties passed in-out, so the
    /// entry is borrowed from the table only once).
    private static func append(to buffer: inout Buffer, flow: Int64, turn: Turn, piece: Piece, limit: Int64,
                               buffered: inout Int64, openCount: inout Int, pieces: inout [Piece],
                               carried: inout [Int64: [UInt8]]) -> (discarded: Int, orphan: Finished?) {
        var orphan: Finished?
        if buffer.isOpen, buffer.turn.number < turn.number {
            // Its end was lost: the earlier turn is written as it is, and this one starts afresh.
            orphan = take(buffer, flow: flow, ending: nil, buffered: &buffered, carried: &carried)
            buffer = Buffer(turn: turn)
        } else if !buffer.isOpen {
            buffer = Buffer(turn: turn)
            openCount += 1
        }
        if buffered + Int64(piece.count) > limit {
            buffer.lost = true
            return (piece.count, orphan)
        }
        let index = pieces.count
        pieces.append(piece)
        if buffer.lastPiece < 0 { buffer.firstPiece = index } else { pieces[buffer.lastPiece].next = index }
        buffer.lastPiece = index
        buffer.count += piece.count
        buffered += Int64(piece.count)
        return (0, orphan)
    }

    /// Ends `turn` of `flow` with its final figures. One hash lookup; the flow's entry stays,
    /// idle, until the batch ends.
    /// - Returns: the flow's earlier turn if one was still open, then this one.
    mutating func end(flow: Int64, turn: Turn) -> (earlier: Finished?, ended: Finished) {
        // The flow's open turn is an earlier one (its end was lost), this one, or a later one
        // (left open: a writer that sees events in order never meets it).
        var earlier: Finished?
        if let index = open.index(forKey: FlowKey(flow)), open.values[index].isOpen {
            let taken = open.values[index]
            if taken.turn.number <= turn.number {
                open.values[index].isOpen = false
                openCount -= 1
                if taken.turn.number == turn.number {
                    return (nil, OpenTurns.take(taken, flow: flow, ending: turn, buffered: &buffered, carried: &carried))
                }
                earlier = OpenTurns.take(taken, flow: flow, ending: nil, buffered: &buffered, carried: &carried)
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
    /// blocks are about to be reused), the pieces are forgotten, and idle entries are removed
    /// (a flow that ended leaves none behind).
    mutating func endBatch(_ batch: ContentBatch) {
        var index = open.startIndex
        while index != open.endIndex {
            if !open.values[index].isOpen {
                idle.append(open.keys[index])
            } else if open.values[index].firstPiece >= 0 {
                let flow = open.keys[index].id
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
        for flow in idle { open.removeValue(forKey: flow) }
        idle.removeAll(keepingCapacity: idle.capacity <= 4_096)
        pieces.removeAll(keepingCapacity: pieces.capacity <= 65_536)
    }

    /// Forgets what every open turn holds (`tv content delete`, between batches): their later
    /// bytes, if any, are written as the turn, marked `startDeleted` (not `incomplete`: nothing
    /// was lost while recording, and a trial's turn blamed the recording queue); a turn that
    /// gets none has no row.
    mutating func forgetHeld() {
        for index in open.indices where open.values[index].isOpen {
            open.values[index].count = 0
            open.values[index].hasCarried = false
            open.values[index].firstPiece = -1
            open.values[index].lastPiece = -1
            open.values[index].forgotten = true
        }
        carried = [:]
        buffered = 0
    }

    /// Every open turn, for shutdown (after the last batch ended): their ends never came, so they
    /// are written as incomplete.
    mutating func drain() -> [Finished] {
        var all: [Finished] = []
        for (flow, buffer) in open where buffer.isOpen {
            all.append(OpenTurns.take(buffer, flow: flow.id, ending: nil, buffered: &buffered, carried: &carried))
        }
        open = [:]
        openCount = 0
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

    /// The turn `buffer` holds, taken out of the record (the caller marks its entry idle):
    /// with `ending`'s figures when its end came (kept = the bytes held: only a loss of the
    /// writer's own makes them differ), else as a turn whose end never came.
    private static func take(_ buffer: Buffer, flow: Int64, ending: Turn?, buffered: inout Int64,
                             carried: inout [Int64: [UInt8]]) -> Finished {
        buffered -= Int64(buffer.count)
        let bytes = buffer.hasCarried ? carried.removeValue(forKey: flow) ?? [] : []
        guard var final = ending else { return OpenTurns.finish(flow: flow, buffer: buffer, carried: bytes) }
        if buffer.forgotten && buffer.count == 0 {
            return Finished(flow: flow, turn: final, carried: [], firstPiece: -1, deleted: true)
        }
        if buffer.forgotten {
            // What came after the deletion, whole unless the writer lost some of it too.
            final.keptBytes = buffer.count
            final.startDeleted = true
            final.incomplete = final.incomplete || buffer.lost
        } else if buffer.lost || buffer.count != final.keptBytes {
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
        if buffer.forgotten && buffer.count == 0 {
            return Finished(flow: flow, turn: buffer.turn, carried: [], firstPiece: -1, deleted: true)
        }
        var turn = buffer.turn
        turn.keptBytes = buffer.count
        turn.seenBytes = max(turn.seenBytes, buffer.count)
        turn.incomplete = true
        turn.startDeleted = buffer.forgotten
        return Finished(flow: flow, turn: turn, carried: carried, firstPiece: buffer.firstPiece)
    }
}
