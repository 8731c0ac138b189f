import ControlChannel
import TVHome

/// The running session `tv status`, `tv diag` and `tv top` read: `tv run`'s control socket, else
/// the first `tv exec` that answers on its own socket (`run/exec-PID.sock`). A `tv exec` alone
/// was a session those commands could not see (a new-user trial: `tv captures` showed its file
/// Recording while they said no session ran).
public enum LiveSessionStatus {
    /// The first session's answer to `status`; nil when none answers.
    /// - Throws: `ControlError.otherUser` when `tv run`'s socket is another user's (as before:
    ///   that session is not this user's to read).
    public static func answer(home: TVHome, timeoutSeconds: Int = 5) throws -> ControlResponse? {
        for (index, socket) in AuditKeysNotifier.sockets(home: home).enumerated() {
            do {
                let response = try ControlClient(path: socket).send(ControlRequest(command: "status"), timeoutSeconds: timeoutSeconds)
                if response.ok { return response }
            } catch ControlError.otherUser(let path, let owner) where index == 0 {
                throw ControlError.otherUser(path: path, owner: owner)
            } catch {
                continue
            }
        }
        return nil
    }
}
