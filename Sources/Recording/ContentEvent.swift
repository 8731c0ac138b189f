/// What a flow's recorder hands the content writer. Chunk events carry bytes; turn ends carry
/// the final figures, so the writer learns exact `seenBytes` even when chunks were dropped.
enum ContentEvent: Sendable, Equatable {
    /// Kept bytes of a chunk of `turn` (its figures so far): `count` bytes from `start` in block
    /// `block` of the batch's `blocks`.
    case chunk(flow: Int64, turn: Turn, block: Int, start: Int, count: Int)
    /// `turn` ended (change of side, flow closed, recording switched off) with these figures.
    case turnEnded(flow: Int64, turn: Turn)
}

/// What the writer takes from the content queue in one go: the events in the order they were
/// queued, and the kept bytes of their chunks back to back in blocks. The producer copies each
/// chunk once, into a block with room (a new block when none has): no allocation per chunk, and
/// no re-copying as the batch grows. The first block is reused from batch to batch.
struct ContentBatch: Sendable {
    /// Bytes a block is made with (more when one chunk is bigger).
    static let blockBytes = 262_144

    var events: [ContentEvent] = []
    var blocks: [[UInt8]] = []

    var isEmpty: Bool { events.isEmpty }

    /// Appends a chunk event for `kept`, copying the bytes.
    mutating func appendChunk(flow: Int64, turn: Turn, _ kept: UnsafeRawBufferPointer) {
        if blocks.isEmpty || blocks[blocks.count - 1].capacity - blocks[blocks.count - 1].count < kept.count {
            var block: [UInt8] = []
            block.reserveCapacity(max(ContentBatch.blockBytes, kept.count))
            blocks.append(block)
        }
        let last = blocks.count - 1
        events.append(.chunk(flow: flow, turn: turn, block: last, start: blocks[last].count, count: kept.count))
        blocks[last].append(contentsOf: kept)
    }

    /// Calls `body` with the bytes of a chunk event's range.
    func withBytes<T>(block: Int, start: Int, count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try blocks[block].withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    /// Empties the batch for reuse, keeping only its first block's storage (so one burst does
    /// not pin its high-water mark for the rest of the session) and up to 4,096 events' room.
    mutating func clear() {
        events.removeAll(keepingCapacity: events.capacity <= 4_096)
        if blocks.count > 1 { blocks.removeLast(blocks.count - 1) }
        if !blocks.isEmpty {
            if blocks[0].capacity > 2 * ContentBatch.blockBytes { blocks = [] } else { blocks[0].removeAll(keepingCapacity: true) }
        }
    }
}
