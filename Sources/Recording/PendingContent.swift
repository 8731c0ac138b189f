import FlowStore

/// What is handed to the content queue under one lock.
enum ContentOffer {
    /// One chunk of a flow (`FlowContentRecorder`): the end of the turn its change of side ended
    /// (`ended`), then its kept bytes (`kept`, copied) for the open turn `chunkOf`; either may be
    /// absent. `kept` is read during the call only.
    case chunk(flow: Int64, ended: Turn?, chunkOf: Turn?, kept: UnsafeRawBufferPointer)
    /// What a loop thread gathered over one turn of its loop (`LoopContentRecorder`), in order:
    /// its chunks' bytes stay in the loop's blocks, which the batch refers to.
    case gathered(ContentBatch)
}

/// Kept bytes of a turn that the content queue had no room for, answered to the loop that
/// gathered them when the turn is still open there (it leaves them out of the turn's figures).
struct TurnDrop: Sendable, Equatable {
    var flow: Int64
    var turn: Int
    var bytes: Int
}

/// The content queue's answer to an offer.
struct ContentOfferAnswer: Sendable, Equatable {
    /// The offered chunk was queued (true when there was none).
    var chunkQueued = true
    /// Of a gathered batch: bytes dropped of turns that did not end in it, per turn.
    var openTurnDrops: [TurnDrop] = []
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

    /// Queues the offer: a chunk's turn end, then its chunk; or a gathered batch's events in
    /// order. Each is queued when it fits, else dropped and counted.
    /// - Returns: how many events were added, and the answer (for a chunk, false when it was
    ///   dropped; for a gathered batch, its drops in turns still open).
    mutating func add(_ offer: ContentOffer, refusing: Bool, counters: inout ContentCounters) -> (added: Int, outcome: ContentOfferAnswer) {
        switch offer {
        case let .chunk(flow, ended, chunkOf, kept):
            var added = 0
            if let ended { added += addEnd(flow: flow, ended, refusing: refusing, counters: &counters) }
            guard let turn = chunkOf else { return (added, ContentOfferAnswer()) }
            guard admitChunk(kept.count, refusing: refusing, counters: &counters) else {
                return (added, ContentOfferAnswer(chunkQueued: false))
            }
            batch.appendChunk(flow: flow, turn: turn, kept)
            return (added + 1, ContentOfferAnswer())
        case .gathered(let gathered):
            return addGathered(gathered, refusing: refusing, counters: &counters)
        }
    }

    /// A loop's turn of events. A dropped chunk's bytes leave its turn's figures (later chunks
    /// and its end in the batch: `keptBytes` less, `incomplete`), as `TurnRecorder.dropped` does
    /// for the turns that stay open, which the answer names.
    private mutating func addGathered(_ gathered: ContentBatch, refusing: Bool,
                                      counters: inout ContentCounters) -> (added: Int, outcome: ContentOfferAnswer) {
        let places = gathered.blocks.map { batch.place(of: $0) }
        var added = 0
        var drops: [TurnDrop] = []
        for event in gathered.events {
            switch event {
            case .turnEnded(let flow, var turn):
                if !drops.isEmpty, let index = drops.firstIndex(where: { $0.flow == flow && $0.turn == turn.number }) {
                    turn.keptBytes -= drops.remove(at: index).bytes
                    turn.incomplete = true
                }
                added += addEnd(flow: flow, turn, refusing: refusing, counters: &counters)
            case .chunk(let flow, var turn, let block, let start, let count):
                if !drops.isEmpty, let index = drops.firstIndex(where: { $0.flow == flow && $0.turn == turn.number }) {
                    turn.keptBytes -= drops[index].bytes
                    turn.incomplete = true
                }
                if admitChunk(count, refusing: refusing, counters: &counters) {
                    batch.events.append(.chunk(flow: flow, turn: turn, block: places[block], start: start, count: count))
                    added += 1
                } else if let index = drops.firstIndex(where: { $0.flow == flow && $0.turn == turn.number }) {
                    drops[index].bytes += count
                } else {
                    drops.append(TurnDrop(flow: flow, turn: turn.number, bytes: count))
                }
            }
        }
        return (added, ContentOfferAnswer(openTurnDrops: drops))
    }

    /// Queues a turn end when it fits; 1 when it did.
    private mutating func addEnd(flow: Int64, _ ended: Turn, refusing: Bool, counters: inout ContentCounters) -> Int {
        guard !refusing, policy.admitsEnd(pendingEnds: pendingEnds) else {
            counters.turnEndsDropped += 1
            return 0
        }
        pendingEnds += 1
        batch.events.append(.turnEnded(flow: flow, turn: ended))
        return 1
    }

    /// Whether a chunk of `count` bytes fits (counted as queued), else counted as dropped.
    private mutating func admitChunk(_ count: Int, refusing: Bool, counters: inout ContentCounters) -> Bool {
        guard !refusing, policy.admitsChunk(count: count, pendingBytes: pendingBytes, pendingChunks: pendingChunks) else {
            counters.chunksDropped += 1
            counters.bytesDropped += Int64(count)
            return false
        }
        pendingChunks += 1
        pendingBytes += Int64(count)
        counters.chunksQueued += 1
        return true
    }

    mutating func removeAll() {
        batch.clear()
        pendingBytes = 0
        pendingChunks = 0
        pendingEnds = 0
    }
}
