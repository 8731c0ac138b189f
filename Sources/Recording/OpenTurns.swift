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

    struct Buffer {
        var turn: Turn
        /// Bytes that came in earlier batches, copied when their batch ended.
        var carried: [UInt8] = []
        /// This batch's ranges, first and last index in `pieces` (-1: none).
        var firstPiece = -1
        var lastPiece = -1
        /// Bytes held: `carried` and the pieces.
        var count = 0
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
    /// The slot in `slots` of each flow with an open turn. The table holds plain integers and
    /// the buffers live in an array, so finding, reading and taking a buffer neither copies it
    /// nor retains its `carried` bytes: with the buffers as the table's values, reading a turn's
    /// number through `values[index]` copied the whole buffer, ~700 instructions a turn end
    /// (callgrind, `Scripts/bench-callgrind` h1 row, i25-rec).
    private var slotOf: [Int64: Int] = [:]
    /// Buffers by slot; nil: free (its index is in `freeSlots`).
    private var slots: [Buffer?] = []
    private var freeSlots: [Int] = []
    /// The ranges of the batch being written (emptied by `endBatch`).
    private(set) var pieces: [Piece] = []

    init(limit: Int64) { self.limit = limit }

    var isEmpty: Bool { slotOf.isEmpty }

    /// Adds a chunk's kept bytes (`count` bytes at `start` of block `block` of the batch being
    /// written) to its turn.
    /// - Returns: bytes discarded (0 when all fit), and the flow's earlier turn if one was still
    ///   open (its end event was lost).
    mutating func append(flow: Int64, turn: Turn, block: Int, start: Int, count: Int) -> (discarded: Int, orphan: Finished?) {
        var orphan: Finished?
        let slot: Int
        if let found = slotOf[flow] {
            if slots[found]!.turn.number < turn.number {
                // Its end was lost: the earlier turn is written as it is, this one takes the slot.
                let earlier = take(slot: found)
                buffered -= Int64(earlier.count)
                orphan = OpenTurns.finish(flow: flow, buffer: earlier)
                slots[found] = Buffer(turn: turn)
            }
            slot = found
        } else {
            slot = makeSlot(Buffer(turn: turn))
            slotOf[flow] = slot
        }
        // Mutated in place in the array: no copy of the buffer per chunk.
        if buffered + Int64(count) > limit {
            slots[slot]!.lost = true
            return (count, orphan)
        }
        let index = pieces.count
        pieces.append(Piece(block: block, start: start, count: count))
        let previous = slots[slot]!.lastPiece
        if previous < 0 { slots[slot]!.firstPiece = index } else { pieces[previous].next = index }
        slots[slot]!.lastPiece = index
        slots[slot]!.count += count
        buffered += Int64(count)
        return (0, orphan)
    }

    /// Ends `turn` of `flow` with its final figures.
    /// - Returns: the flow's earlier turn if one was still open, then this one.
    mutating func end(flow: Int64, turn: Turn) -> (earlier: Finished?, ended: Finished) {
        // The flow's open turn is an earlier one (its end was lost), this one, or a later one
        // (left open: a writer that sees events in order never meets it).
        var earlier: Finished?
        var buffer: Buffer?
        if let slot = slotOf[flow] {
            let number = slots[slot]!.turn.number
            if number <= turn.number {
                slotOf[flow] = nil
                let taken = take(slot: slot)
                freeSlots.append(slot)
                if number < turn.number {
                    buffered -= Int64(taken.count)
                    earlier = OpenTurns.finish(flow: flow, buffer: taken)
                } else {
                    buffer = taken
                }
            }
        }
        let count = buffer?.count ?? 0
        buffered -= Int64(count)
        var final = turn
        if buffer?.lost == true || count != final.keptBytes {
            // Only a loss of the writer's own changes the recorder's figures; a mismatch
            // otherwise is a bug (caught in debug builds; the index never names bytes it lacks).
            assert(buffer?.lost == true, "the recorder's kept figure is the bytes that reached the writer")
            final.keptBytes = count
            final.incomplete = true
        }
        return (earlier, Finished(flow: flow, turn: final, carried: buffer?.carried ?? [], firstPiece: buffer?.firstPiece ?? -1))
    }

    /// The batch being written is done with: the turns still open copy their pieces of it (its
    /// blocks are about to be reused), and the pieces are forgotten.
    mutating func endBatch(_ batch: ContentBatch) {
        guard !pieces.isEmpty else { return }
        for slot in slotOf.values where slots[slot]!.firstPiece >= 0 {
            var next = slots[slot]!.firstPiece
            while next >= 0 {
                let piece = pieces[next]
                slots[slot]!.carried.append(contentsOf: batch.bytes(block: piece.block, start: piece.start, count: piece.count))
                next = piece.next
            }
            slots[slot]!.firstPiece = -1
            slots[slot]!.lastPiece = -1
        }
        pieces.removeAll(keepingCapacity: pieces.capacity <= 65_536)
    }

    /// Every open turn, for shutdown (after the last batch ended): their ends never came, so they
    /// are written as incomplete.
    mutating func drain() -> [Finished] {
        let all = slotOf.map { flow, slot in OpenTurns.finish(flow: flow, buffer: slots[slot]!) }
        slotOf = [:]
        slots = []
        freeSlots = []
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

    /// Puts `buffer` in a free slot (or a new one). - Returns: the slot.
    private mutating func makeSlot(_ buffer: Buffer) -> Int {
        if let free = freeSlots.popLast() {
            slots[free] = buffer
            return free
        }
        slots.append(buffer)
        return slots.count - 1
    }

    /// Moves the buffer out of `slot`, leaving it nil (the caller frees or refills it).
    private mutating func take(slot: Int) -> Buffer {
        var taken: Buffer?
        swap(&taken, &slots[slot])
        return taken!
    }

    /// A turn whose end event never arrived: what was held, marked incomplete (its seen figure
    /// is only what its last chunk knew).
    private static func finish(flow: Int64, buffer: Buffer) -> Finished {
        var turn = buffer.turn
        turn.keptBytes = buffer.count
        turn.seenBytes = max(turn.seenBytes, buffer.count)
        turn.incomplete = true
        return Finished(flow: flow, turn: turn, carried: buffer.carried, firstPiece: buffer.firstPiece)
    }
}
