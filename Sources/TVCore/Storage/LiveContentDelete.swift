import ControlChannel
import Dispatch
import FlowStore
import FlowTerms
import Recording
import TVHome

/// `tv content delete` while a session runs: the command asks the session, which deletes
/// through its content writer, because only it can close the segment it is writing. Deleted
/// from outside, that segment was spared and then written on, so the deleted turns' bytes stayed
/// in it beside newer, referenced ones, and no sweep ever took them (a new-user trial found them
/// with `strings` after the stop, a sweep and a restart). The decrypted captures go too, but the
/// one being written.
public enum LiveContentDelete {
    /// The control-socket request.
    public static let request = ControlRequest(command: "content-delete")
    /// The most the command waits for the session's answer.
    public static let answerWaitSeconds = 120
    /// The most the session waits for its content writer before deleting.
    static let flushWaitSeconds = 5

    /// The session's side: every turn and segment (audit evidence too: `tv content delete`
    /// deletes it), then the decrypted captures not being written; the sentences of the report.
    /// The flow writer (`rows`) is told first to write the rows of requests made until now
    /// without their query, so a request still open (or queued) loses it as the rows written
    /// already do.
    public static func answer(home: TVHome, content: ContentWriter, rows: FlowWriter? = nil) -> ControlResponse {
        let now = EngineClock.wallMicros()
        _ = rows?.removeQueries(requestedBefore: now, waitingUntil: DispatchTime.now() + .seconds(flushWaitSeconds))
        _ = content.flush(waitingUntil: DispatchTime.now() + .seconds(flushWaitSeconds))
        do {
            let report = try content.deleteEverything(keepingAuditEvidence: false)
            let captures = try DecryptedCaptureFiles.deleteAll(home: home)
            let secrets = try CaptureSecretsFiles.scrubAll(home: home)
            return ControlResponse(ok: true, message: ContentUsagePresentation.deletionReport(report, captures: captures, secrets: secrets).joined(separator: "\n"))
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

    /// Whether `tv run`'s session runs for `home` (its control socket answers). A `tv exec`
    /// writing content beside it keeps its own segment, spared as before.
    public static func sessionRuns(_ home: TVHome) -> Bool {
        (try? ControlClient(path: SessionPaths.controlSocket(home)).send(ControlRequest(command: "status"), timeoutSeconds: 2))?.ok == true
    }
}
