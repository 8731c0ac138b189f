import FlowStore

/// What one chunk of a flow hands the content queue, under one lock: the end of the turn its
/// change of side ended (`ended`), then its kept bytes (`kept`, copied) for the open turn
/// `chunkOf`; either may be absent. `kept` is read during the call only.
struct ContentOffer {
    var flow: Int64
    var ended: Turn?
    var chunkOf: Turn?
    var kept: UnsafeRawBufferPointer
}

/// The content waiting for the content writer: the batch (chunk bytes copied back to back) and
/// its figures against the limits of `policy`. A chunk or turn end that does not fit is dropped
/// and counted (`ContentCounters`), as is everything offered once the writer stops.
struct PendingContent: WriterBatch {
    let policy: ContentBatchPolicy
    private(set) var batch = ContentBatch()
    private(set) var pendingBytes: Int64 = 0
    private(set) var pendingChunks = 0
    private(set) var pendingEnds = 0

    init(policy: ContentBatchPolicy) { self.policy = policy }

    var count: Int { batch.events.count }

    /// Half of any limit reached (`ContentBatchPolicy.writeNow`).
    var isWorthWritingNow: Bool {
        policy.writeNow(pendingBytes: pendingBytes, pendingChunks: pendingChunks, pendingEnds: pendingEnds)
    }

    /// Queues the offer's turn end, then its chunk, each when it fits.
    /// - Returns: false when the chunk was dropped (true when there was none).
    mutating func add(_ offer: ContentOffer, refusing: Bool, counters: inout ContentCounters) -> (added: Int, outcome: Bool) {
        var added = 0
        if let ended = offer.ended {
            if !refusing, policy.admitsEnd(pendingEnds: pendingEnds) {
                pendingEnds += 1
                batch.events.append(.turnEnded(flow: offer.flow, turn: ended))
                added += 1
            } else {
                counters.turnEndsDropped += 1
            }
        }
        var queued = true
        if let turn = offer.chunkOf {
            let kept = offer.kept
            if !refusing, policy.admitsChunk(count: kept.count, pendingBytes: pendingBytes, pendingChunks: pendingChunks) {
                pendingChunks += 1
                pendingBytes += Int64(kept.count)
                counters.chunksQueued += 1
                batch.appendChunk(flow: offer.flow, turn: turn, kept)
                added += 1
            } else {
                counters.chunksDropped += 1
                counters.bytesDropped += Int64(kept.count)
                queued = false
            }
        }
        return (added, queued)
    }

    mutating func removeAll() {
        batch.clear()
        pendingBytes = 0
        pendingChunks = 0
        pendingEnds = 0
    }
}
