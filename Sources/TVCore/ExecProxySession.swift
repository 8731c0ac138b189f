import ControlChannel
import CTVShims
import Foundation
import Synchronization
import LocalCA
import Proxy
import TVHome
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// `tv exec --proxy -- CMD`: CMD runs with tv as its proxy and tv's root trusted, through its
/// environment only (`ProxyEnvironment`, `ProxyTrustFiles`): no namespace, no root, nothing
/// changed outside the data folder. Joins the running `tv run` session when it is an explicit
/// proxy; otherwise runs `tv run`'s `Session` in this process for CMD (on 127.0.0.1, a free port,
/// inspecting: CMD trusts the root through its environment), stopped and flushed when CMD exits.
/// The program behind each of CMD's flows is named by the session's `ProgramLookup` (the client
/// socket's inode, owned by CMD or its children).
public final class ExecProxySession {
    /// What `tv exec --proxy` was asked for.
    public struct Options: Sendable {
        /// The options of a session started for CMD (mode and listen are set here; unused when joining).
        public var session = Session.Options()
        /// Send loopback hosts through the proxy too (`--proxy-loopback`).
        public var proxyLoopback = false
        public init() {}
    }

    /// How CMD reached a session.
    public enum Joined: Sendable, Equatable {
        /// A session was started in this process for CMD.
        case started
        /// CMD uses the running `tv run` session (`inspecting`: whether it inspects).
        case joined(inspecting: Bool)
    }

    public let home: TVHome
    /// CMD's proxy variables and trust files.
    public let proxyEnvironment: ProxyEnvironment
    public let files: ProxyTrustFiles
    public let joined: Joined
    private let session: Session?
    /// Connections the session accepted while CMD ran (from any program, when CMD joined a
    /// running session); nil when the session's status could not be read.
    public private(set) var acceptedWhileRunning: Int?
    private let environment: [String: String]
    private let say: @Sendable (String) -> Void

    /// Finds or starts the session and writes the trust files.
    /// - Throws: `ExecProxyError` (no CA, a session that cannot be joined), and what `Session.init`
    ///   throws when one is started (`ProxyError`, `FlowStoreError`, …).
    public init(home: TVHome, options: Options, environment: [String: String], now: Int64,
                say: @escaping @Sendable (String) -> Void) throws {
        self.home = home
        self.environment = environment
        self.say = say
        let root = try Self.root(home: home, options: options.session, now: now, say: say)
        let socket = SessionPaths.controlSocket(home)
        let status = (try? ControlClient(path: socket)).flatMap { try? $0.send(ControlRequest(command: "status")) }
        let plan = try ExecProxyPlan.decide(status: status?.ok == true ? status?.values : nil)
        // As `tv run`: the limit raised, or refused as too low, before a session of its own makes
        // anything (the trust files included).
        if case .start = plan { try DescriptorLimit.prepareSession(workers: options.session.workers) }
        files = try ProxyTrustFiles.write(home: home, root: root, environment: environment)
        let host: String
        let port: UInt16
        switch plan {
        case .join(let h, let p, let inspecting):
            (host, port, session, joined) = (h, p, nil, .joined(inspecting: inspecting))
        case .start:
            var sessionOptions = options.session
            sessionOptions.mode = .regular
            sessionOptions.forceInspection = sessionOptions.caFile == nil
            sessionOptions.stopsOnSignals = false
            sessionOptions.trustRecheckSeconds = 0
            // A port free a moment ago; taken meanwhile by another program, another one.
            var attempt = 0
            var made: Session?
            while made == nil {
                sessionOptions.listen = "127.0.0.1:\(Self.freeLoopbackPort())"
                do {
                    made = try Session(home: home, options: sessionOptions, environment: environment, now: now, say: say)
                } catch ProxyError.portInUse where attempt < 4 {
                    attempt += 1
                }
            }
            let started = made!
            guard let address = started.address else { throw ExecProxyError.sessionAddressUnknown(listen: "") }
            (host, port, session, joined) = (address.address, address.port, started, .started)
        }
        proxyEnvironment = ProxyEnvironment(proxyHost: host, proxyPort: port, bundlePath: files.bundlePath,
                                            javaTrustStorePath: files.trustStorePath,
                                            javaTrustStorePassword: ProxyTrustFiles.trustStorePassword,
                                            wgetrcPath: files.wgetrcPath, proxyLoopback: options.proxyLoopback)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read, closed).
    static func freeLoopbackPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return bound ? UInt16(bigEndian: address.sin_port) : 0
    }

    /// The root CMD is to trust: `--ca FILE`'s, else the data folder's.
    private static func root(home: TVHome, options: Session.Options, now: Int64, say: (String) -> Void) throws -> Certificate {
        if let file = options.caFile {
            return try CertificateAuthority.fromCombinedPEM(path: file, leafKeyType: options.caLeafKeyType, now: now).root
        }
        let folder = CAFolder(home: home)
        switch folder.load() {
        case .present(let ca):
            if let remade = ca.leafKeyRemade { say(remade.sentence) }
            return ca.root
        case .absent: throw ExecProxyError.noCA(directory: folder.directory)
        case .doubt(let doubt): throw ExecProxyError.caInDoubt(reason: doubt.message)
        }
    }

    /// Runs `arguments` with the proxy environment and returns how it ended (`exitCode`: 128 +
    /// the signal when killed); a session started for it is stopped and flushed before this returns.
    /// - Throws: `TunnelError.cannotRun` when CMD cannot start; `ExecProxyError.sessionRace`.
    public func run(_ arguments: [String]) throws -> ChildEnding {
        let served = DispatchSemaphore(value: 0)
        let failure = SessionFailure()
        if let session {
            let thread = Thread {
                do { try session.run() } catch { failure.set(error) }
                served.signal()
            }
            thread.name = "tv-exec-proxy-session"
            thread.start()
        }
        defer {
            if let session {
                session.requestStop()
                served.wait()
                if let losses = session.losses, !losses.isEmpty { say(RecordingPresentation.stopped(losses, folder: home.path)) }
            }
        }
        _ = tv_forward_signals_install()
        defer { tv_forward_signals_remove() }
        let before = accepted()
        let pid = try ChildProcess.spawn(arguments, environment: proxyEnvironment.apply(to: environment), endsWithCaller: true)
        tv_forward_signals_set_child(pid)
        let ending = ChildProcess.ending(pid)
        tv_forward_signals_set_child(0)
        if let before, let after = accepted() { acceptedWhileRunning = max(0, after - before) }
        if case ControlError.alreadyRunning(let path)? = failure.error { throw ExecProxyError.sessionRace(path: path) }
        return ending
    }

    /// The session's count of accepted connections (`tv status`'s), over its control socket;
    /// nil when it does not answer. A session started here is asked once it listens.
    private func accepted() -> Int? {
        let socket = SessionPaths.controlSocket(home)
        for _ in 0..<50 {
            if let answer = (try? ControlClient(path: socket)).flatMap({ try? $0.send(ControlRequest(command: "status"), timeoutSeconds: 2) }),
               answer.ok, let value = answer.values["accepted"].flatMap(Int.init) {
                return value
            }
            if session == nil { return nil }
            usleep(20_000)
        }
        return nil
    }

    /// The session thread's failure, read after it ended.
    private final class SessionFailure: Sendable {
        private let stored = Mutex<(any Error)?>(nil)
        func set(_ error: any Error) { stored.withLock { $0 = error } }
        var error: (any Error)? { stored.withLock { $0 } }
    }
}
