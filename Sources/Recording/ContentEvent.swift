/// What a flow's recorder hands the content writer. Chunk events carry bytes; turn ends carry
/// the final figures, so the writer learns exact `seenBytes` even when chunks were dropped.
enum ContentEvent: Sendable, Equatable {
    /// Kept bytes of a chunk of `turn` (its figures so far): `count` bytes from `start` in block
    /// `block` of the batch's `blocks`.
    case chunk(flow: Int64, turn: Turn, block: Int, start: Int, count: Int)
    /// `turn` ended (change of side, flow closed, recording switched off) with these figures.
    case turnEnded(flow: Int64, turn: Turn)
}

/// Memory a batch copies chunk bytes into: its own allocation, so that the writer hands ranges
/// of it straight to writev(2) (`SegmentAppender.append(pieces:)`) without copying them again.
///
/// A loop's block (`loopOwned`, `LoopContentRecorder`) is filled by that loop thread alone and
/// handed to the queue by reference, one written range at a time, while the loop goes on
/// appending after it; the queue's own blocks are filled under its lock.
///
/// `@unchecked Sendable`: every byte range is written once, by one thread, before it is handed
/// on: a queue block's under the content queue's lock, a loop block's by its loop before the
/// hand-over (made under that lock). The writer reads only ranges handed to it, after
/// `BoundedWriterQueue.run` swapped the batch out of the queue (under that lock), and checks
/// them against the immutable `capacity`, never against `count`, which only the filling thread
/// touches. A queue block is cleared (`reset`) by the writer before it is handed back the same
/// way; a loop block is never reset, only released. Nothing keeps a pointer into a block past
/// `write(_:)`.
final class ContentBlock: @unchecked Sendable, Equatable {
    /// Bytes the block can hold.
    let capacity: Int
    /// Filled by a loop thread (`LoopContentRecorder`), not by the queue.
    let loopOwned: Bool
    /// Bytes written so far (read and written by the filling thread only).
    private(set) var count = 0
    private let base: UnsafeMutableRawPointer

    init(capacity: Int, loopOwned: Bool = false) {
        self.capacity = capacity
        self.loopOwned = loopOwned
        base = .allocate(byteCount: max(capacity, 1), alignment: 16)
    }

    deinit { base.deallocate() }

    /// Room left, in bytes.
    var room: Int { capacity - count }

    /// Copies `bytes` after what the block holds (the caller checked `room`).
    /// - Returns: where they start.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let start = count
        precondition(bytes.count <= room, "a content block is never written past its capacity")
        if let source = bytes.baseAddress, bytes.count > 0 { (base + start).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
        return start
    }

    /// The bytes from `start`, `count` long (a range handed on as written; checked against the
    /// capacity, which is immutable, so the writer never reads the filling thread's `count`).
    func bytes(start: Int, count: Int) -> UnsafeRawBufferPointer {
        precondition(start >= 0 && count >= 0 && start + count <= capacity, "a range inside the block")
        return UnsafeRawBufferPointer(start: base + start, count: count)
    }

    /// Forgets the bytes; the memory is kept for reuse.
    func reset() { count = 0 }

    /// The bytes held, as an array (tests).
    var contents: [UInt8] { Array(bytes(start: 0, count: count)) }

    static func == (a: ContentBlock, b: ContentBlock) -> Bool { a === b }
}

/// What the writer takes from the content queue in one go: the events in the order they were
/// queued, and the kept bytes of their chunks back to back in blocks. The producer copies each
/// chunk once, into a block with room (a new block when none has): no allocation per chunk, and
/// no re-copying as the batch grows; the writer appends them to a segment from the blocks
/// themselves. The first block is reused from batch to batch.
struct ContentBatch: Sendable {
    /// Bytes a block is made with (more when one chunk is bigger).
    static let blockBytes = 262_144

    var events: [ContentEvent] = []
    var blocks: [ContentBlock] = []
    /// The block `appendChunk` copies into (the batch's own, never a loop's).
    private var filling: Int?

    var isEmpty: Bool { events.isEmpty }

    /// Appends a chunk event for `kept`, copying the bytes.
    mutating func appendChunk(flow: Int64, turn: Turn, _ kept: UnsafeRawBufferPointer) {
        if filling == nil || blocks[filling!].room < kept.count {
            blocks.append(ContentBlock(capacity: max(ContentBatch.blockBytes, kept.count)))
            filling = blocks.count - 1
        }
        let block = filling!
        let start = blocks[block].append(kept)
        events.append(.chunk(flow: flow, turn: turn, block: block, start: start, count: kept.count))
    }

    /// Appends a chunk event for bytes already copied into `block` (a loop's), which the batch
    /// refers to from then on (once, however many chunks lie in it).
    mutating func appendChunk(flow: Int64, turn: Turn, in block: ContentBlock, start: Int, count: Int) {
        events.append(.chunk(flow: flow, turn: turn, block: place(of: block), start: start, count: count))
    }

    /// Where `block` is in `blocks`, added at the end when it is not there yet.
    mutating func place(of block: ContentBlock) -> Int {
        if let last = blocks.indices.last, blocks[last] === block { return last }
        if let found = blocks.lastIndex(where: { $0 === block }) { return found }
        blocks.append(block)
        return blocks.count - 1
    }

    /// The bytes of a chunk event's range, valid until the batch is cleared.
    func bytes(block: Int, start: Int, count: Int) -> UnsafeRawBufferPointer {
        blocks[block].bytes(start: start, count: count)
    }

    /// Calls `body` with the bytes of a chunk event's range.
    func withBytes<T>(block: Int, start: Int, count: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(bytes(block: block, start: start, count: count))
    }

    /// Empties the batch for reuse, keeping only its first own block's storage (so one burst
    /// does not pin its high-water mark for the rest of the session) and up to 4,096 events'
    /// room; loops' blocks are let go (their loops may still be filling them).
    mutating func clear() {
        events.removeAll(keepingCapacity: events.capacity <= 4_096)
        let kept = blocks.first { !$0.loopOwned && $0.capacity <= 2 * ContentBatch.blockBytes }
        blocks.removeAll(keepingCapacity: blocks.capacity <= 64)
        filling = nil
        if let kept {
            kept.reset()
            blocks.append(kept)
            filling = 0
        }
    }
}
