import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server from Debian's `postgresql` package, in a scratch folder, for the
/// shared-store tests: `initdb` (as the `postgres` user when the tests run as root, since
/// PostgreSQL refuses to run as root), `pg_ctl start` on a random port of 127.0.0.1 with its
/// socket in the folder, trust authentication for the `tv` superuser, no TLS. `stop()` and
/// `start()` again keep the folder and the port (a server lost mid-run and back). The folder is
/// removed by `remove()`.
final class PostgresServer: @unchecked Sendable {
    // @unchecked: the fields are set in init and only read after; `running` is only touched by
    // the one test that owns this server (each test makes its own or uses `shared` read-only).
    let folder: String
    let port: Int
    let binaries: String
    private var running = false

    /// The server every test of this process shares (started once; stopped and removed at exit).
    nonisolated(unsafe) static var sharedServer: PostgresServer?
    private static let sharedLock = NSLock()

    /// The process-wide server, started on first use.
    /// - Throws: `PostgresServerError` when the package is missing or the server does not start.
    static func shared() throws -> PostgresServer {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let server = sharedServer { return server }
        let server = try PostgresServer()
        try server.start()
        sharedServer = server
        atexit {
            PostgresServer.sharedServer?.stop()
            PostgresServer.sharedServer?.remove()
        }
        return server
    }

    /// Makes the cluster (initdb) in a new folder; does not start it.
    init() throws {
        guard let bin = PostgresServer.findBinaries() else { throw PostgresServerError.notInstalled }
        binaries = bin
        var template = Array((NSTemporaryDirectory() + "/tv-pg-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { throw PostgresServerError.failed("mkdtemp") }
        folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        port = PostgresServer.freePort()
        if geteuid() == 0, let user = getpwnam("postgres") {
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        chmod(folder, 0o700)
        try run(binaries + "/initdb", ["-D", folder + "/data", "-U", "tv", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"])
    }

    /// `postgresql://tv@127.0.0.1:PORT/DATABASE?sslmode=disable` (the scratch server has no TLS).
    func url(database: String = "postgres") -> String {
        "postgresql://tv@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        try run(binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "30",
                                       "-o", "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
                                       "start"])
        running = true
    }

    /// Stops the server at once (`-m immediate`: as a crash or a pulled cable would).
    func stop() {
        guard running else { return }
        _ = try? run(binaries + "/pg_ctl", ["-D", folder + "/data", "-w", "-m", "immediate", "stop"])
        running = false
    }

    /// Removes the folder (stop first).
    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A new empty database; returns its URL.
    func makeDatabase() throws -> String {
        let name = "t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "tv", String(name)])
        return url(database: String(name))
    }

    /// Runs `psql -c SQL` on `database`; returns its unaligned, tuples-only output.
    @discardableResult
    func psql(_ sql: String, database: String) throws -> String {
        try run(binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "tv", "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Runs `tool` (as `postgres` when root), waits (≤ 60 s), returns its standard output. A
    /// `Child` with its output in a file: `pg_ctl start` leaves the server running with whatever it
    /// inherited, which must be nothing the tests read to its end (see `Child`).
    @discardableResult
    private func run(_ tool: String, _ arguments: [String]) throws -> String {
        var argv = [tool] + arguments
        if geteuid() == 0, tool.hasSuffix("/initdb") || tool.hasSuffix("/pg_ctl") {
            argv = ["/usr/sbin/runuser", "-u", "postgres", "--"] + argv
        }
        let output = NSTemporaryDirectory() + "/tv-pg-out-\(UUID().uuidString)"
        defer { unlink(output) }
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(fd) }
        let child: Child
        do {
            child = try Child(argv[0], Array(argv.dropFirst()), environment: ProcessInfo.processInfo.environment, stdout: fd, stderr: fd)
        } catch {
            throw PostgresServerError.failed("\(error)")
        }
        if !child.wait(seconds: 60) { child.stop() }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard child.status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
            throw PostgresServerError.failed("\(argv.joined(separator: " ")) (exit \(child.status.map(String.init) ?? "none: killed after 60 s")): \(text) \(log.suffix(2_000))")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `/usr/lib/postgresql/N/bin` of the newest N installed.
    static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        return nil
    }

    /// A port of 127.0.0.1 free now (bound to 0, read, closed).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

enum PostgresServerError: Error, CustomStringConvertible {
    case notInstalled
    case failed(String)

    var description: String {
        switch self {
        case .notInstalled: return "PostgreSQL's server is not installed (Debian: apt-get install postgresql; Scripts/packages.sh lists it)."
        case let .failed(why): return "The scratch PostgreSQL server failed: \(why)"
        }
    }
}
