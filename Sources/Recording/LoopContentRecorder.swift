import FlowTerms

/// One loop thread's content recording (issue 21: no lock per chunk on the loop thread): the
/// flows that loop serves, each a `TurnRecorder` the loop owns, and what they kept during the
/// current turn of the loop, handed to the content writer's queue at its end under one lock.
/// A chunk's kept bytes are copied once, into the loop's block, which the writer reads them from
/// (the queue refers to the block, it does not copy it).
///
/// - A flow is taken at its first chunk while content is kept (one lock, for its budget); it
///   keeps its recorder until it ends, even once it stopped recording, so a flow whose
///   recording ended is not recorded again from the middle (as `ContentRecorder`).
/// - Content switched off (`ContentRecorder.apply`, `stop`): at the end of the loop's next turn
///   every flow taken before the switch ends its open turn as incomplete and keeps nothing more.
/// - A chunk the queue has no room for is dropped and counted there; its turn is incomplete and
///   its kept figure leaves the bytes out (`PendingContent`, then `TurnRecorder.dropped`).
/// - A flow's end (`flowEnded`) ends its open turn; what is queued is then written without
///   waiting out the writer's linger (`ContentWriter.expedite`), once per loop turn.
///
/// Not Sendable: made by `ContentRecorder.loopRecorder()` for one loop thread and used only there.
public final class LoopContentRecorder: LoopChunkRecorder {
    private struct Flow {
        var turns: TurnRecorder
        /// `ContentRecorder.switchOffs` when the flow was taken.
        let switchOffs: Int
        var recording = true
    }

    private let session: ContentRecorder
    private var flows: [UInt64: Flow] = [:]
    /// Flows in `flows` still recording.
    private var recordingFlows = 0
    /// The switch-offs this loop has applied.
    private var switchOffsSeen: Int
    /// This loop turn's events; its chunks lie in `block` (and in blocks it filled before).
    private var gathered = ContentBatch()
    /// The block chunks are copied into; the queue refers to it; a full one is let go.
    private var block: ContentBlock?
    /// A flow ended this turn: the writer is asked not to linger.
    private var expedite = false

    init(session: ContentRecorder) {
        self.session = session
        switchOffsSeen = session.switchOffs
    }

    /// What is still gathered goes to the queue (a loop that stopped without a last turn end).
    deinit { handOver() }

    public func record(flow id: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        guard let index = flows.index(forKey: id) ?? take(id) else { return }
        guard flows.values[index].recording else { return }
        let flow = Int64(id)
        let verdict = flows.values[index].turns.take(direction, at: offsetMicros, count: bytes.count)
        if let ended = verdict.ended { gathered.events.append(.turnEnded(flow: flow, turn: ended)) }
        if verdict.keep > 0, let open = flows.values[index].turns.openTurn {
            keep(UnsafeRawBufferPointer(rebasing: bytes[..<verdict.keep]), flow: flow, turn: open)
        }
        if flows.values[index].turns.isDone { stopRecording(index) }
    }

    public func flowEnded(flow id: UInt64, cutOff: Bool) {
        guard let ended = flows.removeValue(forKey: id), ended.recording else { return }
        var turns = ended.turns
        if let last = turns.finish() { gathered.events.append(.turnEnded(flow: Int64(id), turn: last)) }
        recordingFlows -= 1
        session.loopFlowStopped()
        expedite = true
    }

    public func loopTurnEnded() {
        if recordingFlows > 0 {
            let switchOffs = session.switchOffs
            if switchOffs != switchOffsSeen {
                switchOffsSeen = switchOffs
                stopFlows(takenBefore: switchOffs)
            }
        }
        handOver()
    }

    /// A new flow, when content is kept: its place in `flows`.
    private func take(_ id: UInt64) -> Dictionary<UInt64, Flow>.Index? {
        guard let start = session.startLoopFlow() else { return nil }
        flows[id] = Flow(turns: TurnRecorder(budget: start.budget), switchOffs: start.switchOffs)
        recordingFlows += 1
        return flows.index(forKey: id)
    }

    /// Copies `kept` into the loop's block (a new one when it has no room) and notes the chunk.
    private func keep(_ kept: UnsafeRawBufferPointer, flow: Int64, turn: Turn) {
        if block == nil || block!.room < kept.count {
            block = ContentBlock(capacity: max(ContentBatch.blockBytes, kept.count), loopOwned: true)
        }
        let start = block!.append(kept)
        gathered.appendChunk(flow: flow, turn: turn, in: block!, start: start, count: kept.count)
    }

    private func stopRecording(_ index: Dictionary<UInt64, Flow>.Index) {
        flows.values[index].recording = false
        recordingFlows -= 1
        session.loopFlowStopped()
        expedite = true
    }

    /// Content was switched off: every flow taken before ends its open turn as incomplete.
    private func stopFlows(takenBefore switchOffs: Int) {
        var index = flows.startIndex
        while index != flows.endIndex {
            if flows.values[index].recording, flows.values[index].switchOffs < switchOffs {
                flows.values[index].turns.markIncomplete()
                if let last = flows.values[index].turns.finish() {
                    gathered.events.append(.turnEnded(flow: Int64(flows.keys[index]), turn: last))
                }
                stopRecording(index)
            }
            index = flows.index(after: index)
        }
    }

    /// The turn's events to the queue; the drops it answers leave the open turns' figures.
    private func handOver() {
        guard !gathered.isEmpty else { return }
        let drops = session.writer.enqueue(gathered: gathered)
        gathered.clear()
        for drop in drops {
            guard let index = flows.index(forKey: UInt64(drop.flow)), flows.values[index].recording,
                  flows.values[index].turns.openTurn?.number == drop.turn else { continue }
            flows.values[index].turns.dropped(drop.bytes)
        }
        if expedite {
            expedite = false
            session.writer.expedite()
        }
    }
}
