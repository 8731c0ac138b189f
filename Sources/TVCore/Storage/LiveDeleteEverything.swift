import ControlChannel
import Dispatch
import FlowStore
import Recording
import TVHome

/// `tv storage delete-everything` while a session runs: the command asks the session, which does
/// the whole job itself, because only it can close the content segment it is writing. It writes
/// what its writers hold, closes and deletes that segment with the rest of the content, deletes
/// the history with its freed space zeroed, and empties the write-ahead log
/// (`StorageManager.deleteEverything`). The capture file being recorded is spared and named.
public enum LiveDeleteEverything {
    /// The control-socket request.
    public static let request = ControlRequest(command: "delete-everything")
    /// The most the command waits for the session's answer (a large history takes a while).
    public static let answerWaitSeconds = 600
    /// The most the session waits for its writers before deleting.
    static let flushWaitSeconds = 5

    /// The session's side: everything deleted, and the sentences saying what went and what stayed.
    /// - Parameter pinning: the session's pinning memory, forgotten with its rows.
    public static func answer(home: TVHome, flows: FlowWriter, content: ContentWriter, pinning: PersistentPinningMemory? = nil,
                              now: Int64) -> ControlResponse {
        let deadline = DispatchTime.now() + .seconds(flushWaitSeconds)
        _ = flows.flush(waitingUntil: deadline)
        _ = content.flush(waitingUntil: deadline)
        pinning?.flush()
        do {
            let segments = try content.deleteEverything()
            let manager = try StorageManager(home: home)
            defer { manager.close() }
            var report = try manager.deleteEverything(recording: nil, now: now)
            pinning?.forgetAll()
            report.content.rowsDeleted += segments.rowsDeleted
            report.content.filesDeleted += segments.filesDeleted
            report.content.bytesFreed += segments.bytesFreed
            let lines = StoragePresentation.deletedEverything(report, databaseFile: home.databasePath, session: true)
            return ControlResponse(ok: true, message: lines.joined(separator: "\n"))
        } catch {
            return LiveSessionRequest.failure(error)
        }
    }

    /// The command's side: the session's answer, or nil when no session runs for `home` (the
    /// command then deletes by itself).
    /// - Throws: `ControlError` when a session runs but does not answer in time.
    public static func ask(_ home: TVHome) throws -> ControlResponse? {
        try LiveSessionRequest.ask(home, request, timeoutSeconds: answerWaitSeconds)
    }
}
