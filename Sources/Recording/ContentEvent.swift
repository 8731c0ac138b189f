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
/// `@unchecked Sendable`: a block belongs to one `ContentBatch`, and a batch is touched by one
/// thread at a time: the loops append under the content queue's lock; the writer reads it only
/// after `BoundedWriterQueue.run` swapped it out of the queue (under that lock), and clears it
/// before handing it back the same way. Nothing keeps a pointer into it past `write(_:)`.
final class ContentBlock: @unchecked Sendable, Equatable {
    /// Bytes the block can hold.
    let capacity: Int
    /// Bytes written so far.
    private(set) var count = 0
    private let base: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
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

    /// The bytes from `start`, `count` long (inside what was written).
    func bytes(start: Int, count: Int) -> UnsafeRawBufferPointer {
        precondition(start >= 0 && count >= 0 && start + count <= self.count, "a range inside the block's bytes")
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

    var isEmpty: Bool { events.isEmpty }

    /// Appends a chunk event for `kept`, copying the bytes.
    mutating func appendChunk(flow: Int64, turn: Turn, _ kept: UnsafeRawBufferPointer) {
        if blocks.isEmpty || blocks[blocks.count - 1].room < kept.count {
            blocks.append(ContentBlock(capacity: max(ContentBatch.blockBytes, kept.count)))
        }
        let last = blocks.count - 1
        let start = blocks[last].append(kept)
        events.append(.chunk(flow: flow, turn: turn, block: last, start: start, count: kept.count))
    }

    /// The bytes of a chunk event's range, valid until the batch is cleared.
    func bytes(block: Int, start: Int, count: Int) -> UnsafeRawBufferPointer {
        blocks[block].bytes(start: start, count: count)
    }

    /// Calls `body` with the bytes of a chunk event's range.
    func withBytes<T>(block: Int, start: Int, count: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(bytes(block: block, start: start, count: count))
    }

    /// Empties the batch for reuse, keeping only its first block's storage (so one burst does
    /// not pin its high-water mark for the rest of the session) and up to 4,096 events' room.
    mutating func clear() {
        events.removeAll(keepingCapacity: events.capacity <= 4_096)
        if blocks.count > 1 { blocks.removeLast(blocks.count - 1) }
        if !blocks.isEmpty {
            if blocks[0].capacity > 2 * ContentBatch.blockBytes { blocks = [] } else { blocks[0].reset() }
        }
    }
}
