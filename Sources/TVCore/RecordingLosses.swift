import FlowStore
import Recording
import Tunnel

/// What a session did not record, from its writers' counters: flows, content and the decrypted
/// capture's packets that failed to be written (a full disk), and what their queues dropped.
/// Carried over the control socket as `recording.*` values and, for the decrypted capture,
/// `decryptedCapture.*` ones (`values`, `init(values:)`), and said in `tv status` and when the
/// session stops (`RecordingPresentation`).
public struct RecordingLosses: Sendable, Equatable {
    /// Flows given up with no row in the database (see `FlowWriterCounters.flowsNotSaved`).
    public var flowsNotSaved = 0
    /// Flows given up whose row lacks its latest state.
    public var flowUpdatesNotSaved = 0
    /// Flows waiting in memory to be written again (0 once the session stopped): not in the
    /// history yet, and lost if the session stops before the disk has room.
    public var flowsWaiting = 0
    /// Programs the lookup named for flows (or said why not) that were given up with what
    /// waited, so rows that exist lack them (`FlowWriterCounters.programsNotSaved`).
    public var programsNotSaved = 0
    /// Flow transactions that failed, retries included.
    public var flowWritesFailed = 0
    /// Flow events the full queue dropped (the database could not keep up).
    public var flowEventsDropped = 0
    /// True while flow writes fail.
    public var flowsFailing = false
    /// The sentence of the last failed flow write.
    public var lastFlowError: String?
    /// Turns of decrypted content lost to failed writes.
    public var contentTurnsNotSaved = 0
    /// Content writes (segment appends, index transactions) that failed.
    public var contentWritesFailed = 0
    /// Chunks of decrypted content the full queue dropped (their turns are marked incomplete).
    public var contentChunksDropped = 0
    /// The kept bytes those chunks carried.
    public var contentBytesDropped = 0
    /// True while content writes fail.
    public var contentFailing = false
    /// The sentence of the last content failure.
    public var lastContentError: String?
    /// The session writes a decrypted capture (`capture.decrypted`): the figures below are its.
    public var hasDecryptedCapture = false
    /// Packets of the decrypted capture that never reached a file (failed writes: a full disk;
    /// what came while they failed; a tail a file was closed without), the plaintext bytes they
    /// carried, and the inspected flows they belonged to. Before, a full disk stopped the file
    /// for good with nothing said or counted (a trial).
    public var decryptedPacketsNotSaved = 0
    public var decryptedBytesNotSaved = 0
    public var decryptedFlowsNotSaved = 0
    /// The decrypted capture's failed writes.
    public var decryptedWritesFailed = 0
    /// Plaintext bytes and begin/end events the decrypted capture's full queue dropped.
    public var decryptedBytesDropped = 0
    public var decryptedEventsDropped = 0
    /// True while the decrypted capture's writes fail.
    public var decryptedFailing = false
    /// The sentence of the decrypted capture's last failed write.
    public var lastDecryptedError: String?
    /// Flows the shared store (PostgreSQL, `--store`) never received over the session: given
    /// up past its retry limit, or still waiting when the session stopped. They are in this
    /// data folder; set when the session closes.
    public var sharedFlowsNotSaved = 0
    /// The shared store's `host:port/database`, when the session wrote to one.
    public var sharedServer: String?
    /// The URL the session wrote to the shared store with (never holds a password:
    /// `SharedStoreTarget` refuses one), for the `tv store backfill --store` the stop prints.
    public var sharedURL: String?
    /// Events (flow openings, updates, request rows) the shared writer's full queue dropped:
    /// their flows may be missing from the store or stay open there (a trial's stop said 1,116
    /// flows while 9,209 were missing, after 55,316 dropped events went unsaid).
    public var sharedEventsDropped = 0
    /// The shared store's server had not finished a write when the session stopped and waited
    /// no longer (`FlowWriter.close(waitingAtMost:)`).
    public var sharedUnanswered = false

    public init() {}

    /// The losses those counters show (`decrypted`: the decrypted capture's, nil without one).
    public init(flows: FlowWriterCounters, content: ContentCounters, decrypted: DecryptedCaptureCounters? = nil) {
        flowsNotSaved = flows.flowsNotSaved
        flowUpdatesNotSaved = flows.flowUpdatesNotSaved
        flowsWaiting = flows.unwrittenFlows
        programsNotSaved = flows.programsNotSaved
        flowWritesFailed = flows.failedWrites
        flowEventsDropped = flows.dropped
        flowsFailing = flows.failing
        lastFlowError = flows.failedWrites > 0 ? flows.lastError?.message : nil
        contentTurnsNotSaved = content.turnsLost
        contentWritesFailed = content.failedWrites
        contentChunksDropped = content.chunksDropped
        contentBytesDropped = Int(content.bytesDropped)
        contentFailing = content.failing
        // A sweep's failure is no lost turn's; a hold for the flow history is, with no failed
        // write (`HistoryFirst`: its reason went unsaid).
        lastContentError = content.failedWrites > 0 || content.turnsLost > 0 ? content.lastError?.message : nil
        if let decrypted {
            hasDecryptedCapture = true
            decryptedPacketsNotSaved = Int(decrypted.packetsNotSaved)
            decryptedBytesNotSaved = Int(decrypted.bytesNotSaved)
            decryptedFlowsNotSaved = Int(decrypted.flowsNotSaved)
            decryptedWritesFailed = Int(decrypted.failedWrites)
            decryptedBytesDropped = Int(decrypted.bytesDropped)
            decryptedEventsDropped = Int(decrypted.eventsDropped)
            decryptedFailing = decrypted.failing
            lastDecryptedError = decrypted.lastFailure?.message
        }
    }

    /// True when the decrypted capture lost nothing (never failed to write, dropped nothing).
    public var decryptedIsWhole: Bool {
        decryptedPacketsNotSaved == 0 && decryptedBytesNotSaved == 0 && decryptedBytesDropped == 0 && decryptedEventsDropped == 0
    }

    /// True when everything was saved (nothing lost, dropped or waiting), even if some writes
    /// failed and were retried with success.
    public var isEmpty: Bool {
        isEmptyHere && sharedFlowsNotSaved == 0 && sharedEventsDropped == 0 && !sharedUnanswered
    }

    /// True when everything was saved in the data folder (the shared store aside).
    public var isEmptyHere: Bool {
        flowsNotSaved == 0 && flowUpdatesNotSaved == 0 && flowsWaiting == 0 && flowEventsDropped == 0 && programsNotSaved == 0
            && contentTurnsNotSaved == 0 && contentChunksDropped == 0 && decryptedIsWhole
    }

    private static let numbers: [(String, WritableKeyPath<RecordingLosses, Int> & Sendable)] = [
        ("recording.flowsNotSaved", \.flowsNotSaved), ("recording.flowUpdatesNotSaved", \.flowUpdatesNotSaved),
        ("recording.flowsWaiting", \.flowsWaiting), ("recording.flowWritesFailed", \.flowWritesFailed),
        ("recording.programsNotSaved", \.programsNotSaved),
        ("recording.flowEventsDropped", \.flowEventsDropped), ("recording.contentTurnsNotSaved", \.contentTurnsNotSaved),
        ("recording.contentWritesFailed", \.contentWritesFailed), ("recording.contentChunksDropped", \.contentChunksDropped),
        ("recording.contentBytesDropped", \.contentBytesDropped),
        ("recording.sharedFlowsNotSaved", \.sharedFlowsNotSaved), ("recording.sharedEventsDropped", \.sharedEventsDropped),
    ]

    /// The decrypted capture's figures, said only by a session that writes one (`tv status --json`
    /// nests them under `decryptedCapture`, beside what its queue dropped, `QueueStatus`).
    private static let decryptedNumbers: [(String, WritableKeyPath<RecordingLosses, Int> & Sendable)] = [
        ("decryptedCapture.packetsNotSaved", \.decryptedPacketsNotSaved), ("decryptedCapture.bytesNotSaved", \.decryptedBytesNotSaved),
        ("decryptedCapture.flowsNotSaved", \.decryptedFlowsNotSaved), ("decryptedCapture.failedWrites", \.decryptedWritesFailed),
        (QueueStatus.decryptedBytesDropped, \.decryptedBytesDropped), (QueueStatus.decryptedEventsDropped, \.decryptedEventsDropped),
    ]

    /// As control-socket values (`recording.*`; numbers as decimal text, flags as on/off, the
    /// errors only when there is one).
    public var values: [String: String] {
        var values: [String: String] = [:]
        for (key, path) in RecordingLosses.numbers { values[key] = String(self[keyPath: path]) }
        values["recording.flowsFailing"] = flowsFailing ? "on" : "off"
        values["recording.contentFailing"] = contentFailing ? "on" : "off"
        if let lastFlowError { values["recording.lastFlowError"] = lastFlowError }
        if let lastContentError { values["recording.lastContentError"] = lastContentError }
        if let sharedServer { values["recording.sharedServer"] = sharedServer }
        if let sharedURL { values["recording.sharedURL"] = sharedURL }
        if sharedUnanswered { values["recording.sharedUnanswered"] = "on" }
        if hasDecryptedCapture {
            for (key, path) in RecordingLosses.decryptedNumbers { values[key] = String(self[keyPath: path]) }
            values["decryptedCapture.failing"] = decryptedFailing ? "on" : "off"
            if let lastDecryptedError { values["decryptedCapture.lastError"] = lastDecryptedError }
        }
        return values
    }

    /// Read back from control-socket values; nil when they carry none (an older session).
    public init?(values: [String: String]) {
        guard values["recording.flowsNotSaved"] != nil else { return nil }
        for (key, path) in RecordingLosses.numbers { self[keyPath: path] = values[key].flatMap { Int($0) } ?? 0 }
        flowsFailing = values["recording.flowsFailing"] == "on"
        contentFailing = values["recording.contentFailing"] == "on"
        lastFlowError = values["recording.lastFlowError"]
        lastContentError = values["recording.lastContentError"]
        sharedServer = values["recording.sharedServer"]
        sharedURL = values["recording.sharedURL"]
        sharedUnanswered = values["recording.sharedUnanswered"] == "on"
        if values["decryptedCapture.packetsNotSaved"] != nil {
            hasDecryptedCapture = true
            for (key, path) in RecordingLosses.decryptedNumbers { self[keyPath: path] = values[key].flatMap { Int($0) } ?? 0 }
            decryptedFailing = values["decryptedCapture.failing"] == "on"
            lastDecryptedError = values["decryptedCapture.lastError"]
        }
    }
}
