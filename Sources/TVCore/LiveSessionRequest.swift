import ControlChannel
import TVHome

/// A command that asks `tv run`'s session to do a job only it can do (it holds the file being
/// written), and the session's answer to a job that failed.
public enum LiveSessionRequest {
    /// The session's answer to `request`, waiting at most `timeoutSeconds`; nil when no session
    /// runs for `home` (the command then does the job itself).
    /// - Throws: `ControlError` when a session runs but does not answer in time.
    public static func ask(_ home: TVHome, _ request: ControlRequest, timeoutSeconds: Int) throws -> ControlResponse? {
        do {
            return try ControlClient(path: SessionPaths.controlSocket(home)).send(request, timeoutSeconds: timeoutSeconds)
        } catch ControlError.notRunning {
            return nil
        }
    }

    /// A job's failure as the session's answer: the error's own sentence.
    static func failure(_ error: Error) -> ControlResponse {
        ControlResponse(ok: false, message: (error as? UserFacingError)?.message ?? "\(error)")
    }
}
