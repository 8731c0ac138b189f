import ControlChannel
import TVHome

/// One session live on a data folder, as its socket answered `status`: `tv run`'s (or a
/// `tv exec --proxy`'s own) on the control socket, or a `tv exec`'s on `run/exec-PID.sock`.
public struct LiveSession: Sendable, Equatable {
    /// The socket it answered on.
    public var socket: String
    /// Its `status` values (`SessionStatusValues`).
    public var values: [String: String]

    public init(socket: String, values: [String: String]) {
        self.socket = socket
        self.values = values
    }

    /// Its process id (its `pid` value); nil when it named none.
    public var pid: Int32? { values["pid"].flatMap { Int32($0) } }

    /// When it started (µs since the epoch; its `startedAt` value).
    public var startedAt: Int64? { values["startedAt"].flatMap { Int64($0) } }

    /// "pid 4242: tv exec of curl https://example.test on a TUN in its own network namespace":
    /// which process, what it runs and where (the values escaped as one-line fields).
    public var title: String {
        let v = values.mapValues(TerminalText.line)
        let what = v["modeLabel"] ?? v["mode"] ?? "a session"
        return "pid \(v["pid"] ?? "?"): \(what)" + (v["listen"].map { " on \($0)" } ?? "")
    }
}

/// The running sessions `tv status`, `tv diag` and `tv top` read: `tv run`'s control socket and
/// every `tv exec` that answers on its own socket (`run/exec-PID.sock`). A `tv exec` alone was a
/// session those commands could not see (a new-user trial: `tv captures` showed its file
/// Recording while they said no session ran); and beside another one, only the first that
/// answered was shown, with nothing saying a second ran (a later trial).
public enum LiveSessionStatus {
    /// The first session's answer to `status`; nil when none answers. For the commands that
    /// need one session's value (`tv inspect status`, `tv settings`, `tv stop`'s hint).
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

    /// Every session that answers `status`, in `ordered`'s order (`tv run`'s first, then the
    /// `tv exec`s oldest first); empty when none does. A socket nothing answers on (a `tv exec`
    /// killed before it could remove it) is left out.
    /// - Throws: `ControlError.otherUser` when `tv run`'s socket is another user's.
    public static func all(home: TVHome, timeoutSeconds: Int = 5) throws -> [LiveSession] {
        var found: [LiveSession] = []
        for (index, socket) in AuditKeysNotifier.sockets(home: home).enumerated() {
            do {
                let response = try ControlClient(path: socket).send(ControlRequest(command: "status"), timeoutSeconds: timeoutSeconds)
                if response.ok { found.append(LiveSession(socket: socket, values: response.values)) }
            } catch ControlError.otherUser(let path, let owner) where index == 0 {
                throw ControlError.otherUser(path: path, owner: owner)
            } catch {
                continue
            }
        }
        return ordered(found, controlSocket: SessionPaths.controlSocket(home))
    }

    /// `sessions` with the one on `controlSocket` (`tv run`'s) first, the rest by their start,
    /// oldest first (ties, and sessions that said no start, by pid).
    public static func ordered(_ sessions: [LiveSession], controlSocket: String) -> [LiveSession] {
        sessions.sorted { a, b in
            if (a.socket == controlSocket) != (b.socket == controlSocket) { return a.socket == controlSocket }
            let (sa, sb) = (a.startedAt ?? .max, b.startedAt ?? .max)
            if sa != sb { return sa < sb }
            return (a.pid ?? .max) < (b.pid ?? .max)
        }
    }
}
