import FlowStore
import Recording
import TVHome
import Tunnel

/// What a session says about recording (pure): one line when writes start failing and when they
/// resume, the `tv status` lines, and the sentence when it stops (what was saved, or exactly
/// what was not).
public enum RecordingPresentation {
    /// The line a session says when flow writes start failing or resume.
    /// - Parameter wayOn: the full disk's way on for what the data folder holds
    ///   (`DataFolderHoldings.wayOn`), said in place of the generic one (nil: not read).
    public static func flowNotice(_ change: WriteHealth.Change, _ counters: FlowWriterCounters, wayOn: String? = nil) -> String {
        switch change {
        case .startedFailing:
            let cause = counters.lastError.map { error in wayOn.flatMap { error.fullDiskMessage(wayOn: $0) } ?? error.message }
                ?? "A write to the flow database failed."
            return "Flows are not being saved: \(cause) Connections are still forwarded; tv keeps the unsaved flows in memory (up to \(Units.grouped(Int64(FlowWriter.defaultRetryLimit)))), retries every second and says when recording resumes."
        case .resumed:
            let lost = counters.flowsNotSaved + counters.flowUpdatesNotSaved
            return lost == 0
                ? "Recording resumed: flows are saved again, none was lost."
                : "Recording resumed: flows are saved again; \(flows(counters.flowsNotSaved)) could not be saved and \(flows(counters.flowUpdatesNotSaved)) lost their last update."
        }
    }

    /// The line a session says once, while flow writes fail, when the flows waiting in memory
    /// reach the retry limit and the oldest start being given up (only a counter said it before).
    public static func flowsGivenUpNotice(_ counters: FlowWriterCounters) -> String {
        "Flows are being lost: \(Units.grouped(Int64(FlowWriter.defaultRetryLimit))) unsaved flows wait in memory, the most tv keeps, so from now on each new one pushes the oldest out unsaved (`tv status` counts them) until the data folder's disk has room again."
    }

    /// The line a session says when storing decrypted content starts failing or resumes.
    /// - Parameter wayOn: as `flowNotice`'s.
    public static func contentNotice(_ change: WriteHealth.Change, _ counters: ContentCounters, wayOn: String? = nil) -> String {
        switch change {
        case .startedFailing:
            let cause = counters.lastError.map { error in wayOn.flatMap { error.fullDiskMessage(wayOn: $0) } ?? error.message }
                ?? "A write of decrypted content failed."
            return "Decrypted content is not being saved: \(cause) Connections are still forwarded; tv tries again with the next turns and says when recording resumes."
        case .resumed:
            return "Recording resumed: decrypted content is saved again (\(turns(counters.turnsLost)) could not be saved)."
        }
    }

    /// The line a session says when the decrypted capture's writes start failing or resume:
    /// before, a full disk stopped it for good with nothing said (a trial's file stayed at 9.1 MB
    /// after 21 MB were freed, while `tv captures` said Recording and `tv stop` that everything
    /// was saved).
    /// - Parameters:
    ///   - retryCapSeconds: the longest wait between tries (`DecryptedCaptureConfiguration`).
    ///   - wayOn: as `flowNotice`'s.
    public static func decryptedCaptureNotice(_ change: WriteHealth.Change, _ counters: DecryptedCaptureCounters,
                                              retryCapSeconds: Int = 8, wayOn: String? = nil) -> String {
        switch change {
        case .startedFailing:
            let cause = counters.lastFailure.map { error in wayOn.flatMap { error.fullDiskMessage(wayOn: $0) } ?? error.message }
                ?? "A write of the decrypted capture failed."
            return "The decrypted capture is not being saved: \(cause) Connections are still forwarded; the file being written was closed at its last whole packet, and tv tries a new file with the next packets (at most every \(retryCapSeconds) s) and says when recording resumes."
        case .resumed:
            let file = counters.recording.map { " in \($0)" } ?? ""
            return "Recording resumed: the decrypted capture is saved again\(file) (\(packets(Int(counters.packetsNotSaved))) of \(flows(Int(counters.flowsNotSaved))) could not be saved)."
        }
    }

    /// The `tv status` lines about losses (none when nothing was lost or failed).
    public static func statusLines(_ losses: RecordingLosses) -> [String] {
        var lines: [String] = []
        if losses.flowWritesFailed > 0 || losses.flowsNotSaved > 0 || losses.flowUpdatesNotSaved > 0 {
            let state = losses.flowsFailing ? "failing now" : "working again"
            // The flows waiting lead, as what is missing now: said as "0 (… 5382 waiting to be
            // retried …)", a trial read it as nothing lost while 5,382 flows were in memory only.
            var counts: [String] = []
            if losses.flowsWaiting > 0 { counts.append("\(Units.grouped(Int64(losses.flowsWaiting))) waiting in memory, not in the history yet;") }
            counts.append("\(Units.grouped(Int64(losses.flowsNotSaved))) given up (never saved), \(Units.grouped(Int64(losses.flowUpdatesNotSaved))) without their last update"
                + (losses.programsNotSaved > 0 ? ", \(Units.grouped(Int64(losses.programsNotSaved))) without their program" : "") + ";")
            lines.append("flows not saved   \(counts.joined(separator: " ")) \(losses.flowWritesFailed) failed writes, \(state)")
            if let error = losses.lastFlowError { lines.append("  last error      \(error)") }
        }
        if losses.contentWritesFailed > 0 || losses.contentTurnsNotSaved > 0 {
            let state = losses.contentFailing ? "failing now" : "working again"
            lines.append("content not saved \(turns(losses.contentTurnsNotSaved)) (\(losses.contentWritesFailed) failed writes, \(state))")
            if let error = losses.lastContentError { lines.append("  last error      \(error)") }
        }
        // What the full queues dropped is lost as surely as a failed write (a trial's 5,931
        // dropped chunks were said only by `tv diag`, while this said nothing).
        if losses.flowEventsDropped > 0 {
            lines.append("flows dropped     \(Units.grouped(Int64(losses.flowEventsDropped))) flow \(losses.flowEventsDropped == 1 ? "event" : "events") while the database fell behind: some flows lack their latest state")
        }
        if losses.contentChunksDropped > 0 {
            lines.append("content dropped   \(Units.grouped(Int64(losses.contentChunksDropped))) \(losses.contentChunksDropped == 1 ? "chunk" : "chunks") (\(Units.bytes(Int64(losses.contentBytesDropped)))) while the content writer fell behind: the turns they belonged to are marked incomplete (`tv turns`)")
        }
        if losses.decryptedWritesFailed > 0 || losses.decryptedPacketsNotSaved > 0 {
            let state = losses.decryptedFailing ? "failing now" : "working again"
            lines.append("decrypted capture \(packets(losses.decryptedPacketsNotSaved)) not saved (\(Units.bytes(Int64(losses.decryptedBytesNotSaved))) of plaintext, \(flows(losses.decryptedFlowsNotSaved)); \(losses.decryptedWritesFailed) failed writes, \(state))")
            if let error = losses.lastDecryptedError { lines.append("  last error      \(error)") }
        }
        if losses.decryptedBytesDropped > 0 || losses.decryptedEventsDropped > 0 {
            lines.append("decrypted dropped \(Units.bytes(Int64(losses.decryptedBytesDropped))) of plaintext and \(Units.grouped(Int64(losses.decryptedEventsDropped))) flow \(losses.decryptedEventsDropped == 1 ? "beginning or end" : "beginnings or ends") while the decrypted capture's writer fell behind: its streams show the gaps")
        }
        return lines
    }

    /// The sentence when the session has stopped: everything saved, or exactly what was not.
    /// - Parameter folder: the data folder.
    public static func stopped(_ losses: RecordingLosses, folder: String) -> String {
        var sentence = stoppedHere(losses, folder: folder)
        if losses.sharedFlowsNotSaved > 0 {
            // A lost shared store was said when it went; what it never got is said at the end,
            // since no session sends those flows later (a trial's 100 waiting flows went unsaid):
            // `tv store backfill` does, when asked.
            // Counted when given up, so a `tv store backfill` run meanwhile is not known here
            // (a trial's 3 missing flows were said as 2,620): said as what this session sent.
            let one = losses.sharedFlowsNotSaved == 1
            sentence += " This session could not send \(flows(losses.sharedFlowsNotSaved)) to the shared store"
                + (losses.sharedServer.map { " at \($0)" } ?? "") + "; this data folder has \(one ? "it" : "them") (`\(backfill(losses))` sends whatever is still missing once the store answers)."
        }
        let store = losses.sharedServer.map { "the shared store at \($0)" } ?? "the shared store"
        if losses.sharedEventsDropped > 0 {
            sentence += " \(losses.sharedEventsDropped) events for \(store) were dropped while it fell behind, so some flows may be missing there or still open; this data folder has them all (`\(backfill(losses))` sends them)."
        }
        if losses.sharedUnanswered {
            sentence += " \(store.prefix(1).uppercased() + store.dropFirst()) did not answer a write for 15 s, so tv stopped without it: what it had not confirmed may be missing there (`\(backfill(losses))` sends it once it answers)."
        }
        return sentence
    }

    /// The backfill a stop's sentence names, with the session's `--store` (run without it, a
    /// backfill reads the `store.url` setting, and refuses when the session's store came from
    /// `--store` alone).
    static func backfill(_ losses: RecordingLosses) -> String {
        "tv store backfill " + (losses.sharedURL.map { "--store \(ShellWord.quote($0)) " } ?? "") + "--since SPAN"
    }

    private static func stoppedHere(_ losses: RecordingLosses, folder: String) -> String {
        guard !losses.isEmptyHere else { return "everything is saved in \(folder)." }
        let parts = lossParts(losses)
        // The error of what was lost, first of the flows' (a trial's stop named the flows' disk
        // full, retried with success, beside content held for the history: `HistoryFirst`).
        let flowsLost = losses.flowsNotSaved > 0 || losses.flowUpdatesNotSaved > 0 || losses.programsNotSaved > 0
        let cause = (flowsLost ? losses.lastFlowError : nil) ?? (losses.contentTurnsNotSaved > 0 ? losses.lastContentError : nil)
            ?? (losses.decryptedPacketsNotSaved > 0 ? losses.lastDecryptedError : nil)
            ?? losses.lastFlowError ?? losses.lastContentError ?? losses.lastDecryptedError
        return "not everything was saved in \(folder): \(parts.joined(separator: ", "))." + (cause.map { " The last error: \($0)" } ?? "")
    }

    /// What was not saved in the data folder, one phrase each ("1870 flows never written", …),
    /// for the stop's sentence and the record a later command reads (`LastStopRecord`).
    static func lossParts(_ losses: RecordingLosses) -> [String] {
        var parts: [String] = []
        if losses.flowsNotSaved > 0 { parts.append("\(flows(losses.flowsNotSaved)) never written") }
        if losses.flowUpdatesNotSaved > 0 { parts.append("\(flows(losses.flowUpdatesNotSaved)) without their last update") }
        if losses.programsNotSaved > 0 { parts.append("\(losses.programsNotSaved == 1 ? "1 flow's program" : "\(losses.programsNotSaved) flows' programs") looked up but not saved") }
        if losses.flowEventsDropped > 0 { parts.append("\(Units.grouped(Int64(losses.flowEventsDropped))) flow \(losses.flowEventsDropped == 1 ? "event" : "events") dropped because the database could not keep up") }
        if losses.contentTurnsNotSaved > 0 { parts.append("\(turns(losses.contentTurnsNotSaved)) of decrypted content never written") }
        if losses.contentChunksDropped > 0 { parts.append("\(Units.grouped(Int64(losses.contentChunksDropped))) content \(losses.contentChunksDropped == 1 ? "chunk" : "chunks") (\(Units.bytes(Int64(losses.contentBytesDropped)))) dropped because the content writer could not keep up") }
        if losses.decryptedPacketsNotSaved > 0 {
            parts.append("\(packets(losses.decryptedPacketsNotSaved)) of the decrypted capture never written (\(Units.bytes(Int64(losses.decryptedBytesNotSaved))) of plaintext, \(flows(losses.decryptedFlowsNotSaved)))")
        }
        if losses.decryptedBytesDropped > 0 || losses.decryptedEventsDropped > 0 {
            parts.append("\(Units.bytes(Int64(losses.decryptedBytesDropped))) of plaintext and \(Units.grouped(Int64(losses.decryptedEventsDropped))) flow \(losses.decryptedEventsDropped == 1 ? "beginning or end" : "beginnings or ends") dropped from the decrypted capture because its writer could not keep up")
        }
        return parts
    }

    static func flows(_ n: Int) -> String { n == 1 ? "1 flow" : "\(n) flows" }
    static func packets(_ n: Int) -> String { n == 1 ? "1 packet" : "\(Units.grouped(Int64(n))) packets" }
    static func turns(_ n: Int) -> String { n == 1 ? "1 turn" : "\(n) turns" }
}
