import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The control socket of a live session: a Unix stream socket (0600, in `$TV_HOME/run/`, folder
/// 0700) that answers one `ControlRequest` line with one `ControlResponse` line per connection.
///
/// A dedicated thread accepts and answers; requests are tiny and rare (a person typing
/// `tv status`), so one at a time is enough.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) -> ControlResponse

    /// The socket's path.
    public let path: String
    private let fd: Int32
    private let handler: Handler
    private let stopped = AtomicFlag()
    /// Signalled when the answering thread has ended (so `stop` can wait for an answer in flight).
    private let ended = DispatchSemaphore(value: 0)

    /// Binds the socket at `path` (a stale socket left by a crashed session is replaced; a live
    /// one is refused).
    /// - Throws: `ControlError.alreadyRunning` when another session answers there;
    ///   `ControlError.socket` when the socket cannot be made; `TooManyOpenFiles`.
    public init(path: String, handler: @escaping Handler) throws {
        self.path = path
        self.handler = handler
        if FileManager.default.fileExists(atPath: path) {
            try ControlServer.refuseIfLive(path: path)
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlServer.failure(errno, path: path) }
        var addr: UnixAddress
        do { addr = try UnixAddress(path: path) } catch {
            close(fd)
            throw error
        }
        // The socket file is made 0600 from the start without touching the process's umask
        // (umask is process-wide: setting it around bind made folders and files other threads
        // created meanwhile 0600, seen as a flaky suite). Linux's unix_bind gives the file the
        // socket inode's mode minus the umask, and fchmod before bind sets that inode's mode.
        // The chmod after bind keeps it 0600 where a kernel ignores the first.
        let rc = fchmod(fd, 0o600) == 0 ? addr.withSockaddr { bind(fd, $0, $1) } : -1
        guard rc == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
            let failure = ControlServer.failure(errno, path: path)
            close(fd)
            throw failure
        }
        self.fd = fd
        let thread = Thread { [self] in self.serve() }
        thread.name = "tv-control"
        thread.start()
    }

    /// What a failed socket(2), bind(2) or listen(2) with `code` means: no descriptor left
    /// (`TooManyOpenFiles`: a trial's `ulimit -n 28` was told to check the folder's permissions),
    /// else `ControlError.socket`.
    static func failure(_ code: Int32, path: String) -> any Error {
        TooManyOpenFiles(errno: code, opening: "the control socket \(path)")
            ?? ControlError.socket(path: path, reason: String(cString: strerror(code)))
    }

    /// True when a session answers on the control socket at `path` (within 1 s).
    public static func isLive(path: String) -> Bool {
        (try? ControlClient(path: path).send(ControlRequest(command: "ping"), timeoutSeconds: 1)) != nil
    }

    /// Checks, before a session prepares anything, that no live session answers at `path` (a
    /// stale socket file is fine). `init` checks again when it binds.
    /// - Throws: `ControlError.alreadyRunning` when a session answers a ping within 1 s.
    /// - Throws: `ControlError.occupiedByFolder` when a folder stands at `path` (nothing can
    ///   bind there, and tv does not remove a folder it did not make).
    public static func refuseIfLive(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        if case .found(let facts) = FileFacts.lstat(path), facts.kind == .directory {
            throw ControlError.occupiedByFolder(path: path)
        }
        if isLive(path: path) {
            throw ControlError.alreadyRunning(path: path)
        }
    }

    /// Stops answering and removes the socket file; waits (up to 2 s) until an answer being
    /// written has been sent, so a process that exits next does not cut it. Never call it from
    /// the handler.
    public func stop() {
        guard stopped.set() else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
        _ = ended.wait(timeout: .now() + 2)
    }

    private func serve() {
        defer { ended.signal() }
        while !stopped.isSet {
            let client = accept(fd, nil, nil)
            if client < 0 {
                let err = errno
                if err == EINTR || err == ECONNABORTED { continue }
                // Out of descriptors or memory for a moment: answer again once some are back.
                // Returning here left a session no `tv stop` could reach (a trial's under
                // `ulimit -n 34` had to be killed).
                if TooManyOpenFiles.isShortage(err) || err == ENOBUFS || err == ENOMEM {
                    if !stopped.isSet { usleep(100_000) }
                    continue
                }
                return
            }
            answer(client)
            close(client)
        }
    }

    private func answer(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let line = LineIO.readLine(client, limit: 65_536) else { return }
        let response: ControlResponse
        if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) {
            response = request.command == "ping" ? ControlResponse(ok: true, message: "pong") : handler(request)
        } else {
            response = ControlResponse(ok: false, message: "The request was not understood; use the same version of tv as the running session.")
        }
        if let data = try? JSONEncoder().encode(response) {
            LineIO.writeAll(client, [UInt8](data) + [0x0A])
        }
    }
}

/// Asks a live session one question.
public struct ControlClient: Sendable {
    public let path: String

    /// - Throws: `ControlError.notRunning` when no session listens at `path`;
    ///   `ControlError.otherUser` when its folder may not be entered by this user.
    public init(path: String) throws {
        switch FileFacts.lstat(path) {
        case .found: break
        case .forbidden: throw ControlError.otherUser(path: path, owner: nil)
        case .missing, .failed: throw ControlError.notRunning
        }
        self.path = path
    }

    /// Sends `request` and waits up to `timeoutSeconds` for the answer.
    /// - Throws: `ControlError.notRunning` (nothing answers), `ControlError.noAnswer`.
    public func send(_ request: ControlRequest, timeoutSeconds: Int = 5) throws -> ControlResponse {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlError.notRunning }
        defer { close(fd) }
        var addr = try UnixAddress(path: path)
        guard addr.withSockaddr({ connect(fd, $0, $1) }) == 0 else {
            throw ControlError.connectFailed(path: path, errno: errno)
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let data = try JSONEncoder().encode(request)
        LineIO.writeAll(fd, [UInt8](data) + [0x0A])
        guard let line = LineIO.readLine(fd, limit: 1 << 20),
              let response = try? JSONDecoder().decode(ControlResponse.self, from: Data(line)) else {
            throw ControlError.noAnswer
        }
        return response
    }
}

/// Why the control socket could not be used.
public enum ControlError: UserFacingError, Equatable {
    case notRunning
    case noAnswer
    case alreadyRunning(path: String)
    case socket(path: String, reason: String)
    case pathTooLong(String)
    /// The session lock file at `path` could not be opened (`reason`: strerror's text).
    case sessionLock(path: String, reason: String)
    /// A folder stands where the control socket goes.
    case occupiedByFolder(path: String)
    /// A session's socket is there, but this user may not connect to it: it runs as `owner`
    /// (when known), another user.
    case otherUser(path: String, owner: FileOwner?)

    /// What a failed connect(2) to the socket at `path` means: EACCES or EPERM, a session of
    /// another user (the socket's owner); anything else, no session listening.
    public static func connectFailed(path: String, errno code: Int32) -> ControlError {
        guard code == EACCES || code == EPERM else { return .notRunning }
        if case .found(let facts) = FileFacts.lstat(path) { return .otherUser(path: path, owner: facts.owner) }
        return .otherUser(path: path, owner: nil)
    }

    public var message: String {
        switch self {
        case .notRunning: return "No tv session is running for this data folder; start one with `tv run`."
        case .noAnswer: return "The running tv session did not answer in time; check that it is not stuck, or stop it with Ctrl-C."
        case .alreadyRunning(let path): return "A tv session is already running for this data folder (control socket \(path)); stop it with `tv stop` first."
        case let .socket(path, reason): return "Could not open the control socket \(path) (\(reason)); check the data folder's permissions."
        case .occupiedByFolder(let path):
            return "A folder stands where the control socket \(path) goes, so no session can be reached there; check what is in it, remove it (`rmdir \(path)`) and run tv again."
        case let .otherUser(path, owner):
            let who = owner.map { "as \($0.name)" } ?? "as another user"
            let how = owner.map { "run tv as \($0.name) (\($0.sudoHint))" } ?? "run tv as the user who started it (e.g. with sudo)"
            return "A tv session for this data folder runs \(who), and its control socket \(path) is closed to you; \(how) to reach it."
        case let .sessionLock(path, reason):
            return "Could not open the session lock \(path) (\(reason)); check that the data folder and its run folder belong to you."
        case .pathTooLong(let path): return "The control socket path \(path) is longer than a Unix socket allows (107 bytes); use a shorter --data-dir."
        }
    }
}

/// A sockaddr_un for a path.
struct UnixAddress {
    var storage = sockaddr_un()

    init(path: String) throws {
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else { throw ControlError.pathTooLong(path) }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
    }

    mutating func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

/// Blocking line reads and full writes on a socket.
enum LineIO {
    static func readLine(_ fd: Int32, limit: Int) -> [UInt8]? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count < limit {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { return out.isEmpty ? nil : out }
            if let nl = chunk[0..<n].firstIndex(of: 0x0A) {
                out += chunk[0..<nl]
                return out
            }
            out += chunk[0..<n]
        }
        return nil
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = write(fd, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if errno == EINTR { continue }; return }
                off += n
            }
        }
    }
}

/// A flag set once, from any thread.
final class AtomicFlag: Sendable {
    private let value = Synchronization.Atomic<Bool>(false)
    /// Sets the flag; true when this call set it (false when already set).
    func set() -> Bool { value.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
