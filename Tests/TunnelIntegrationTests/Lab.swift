import CTVShims
import Foundation
import Testing
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// What a finished program left.
struct Output: CustomStringConvertible {
    var status: Int32
    var out: String
    var err: String
    var timedOut: Bool
    var description: String { "exit \(status)\(timedOut ? " (timed out)" : "")\n--- stdout\n\(out.suffix(3000))\n--- stderr\n\(err.suffix(3000))" }
}

/// Runs programs, bounded in time, output captured in files (no pipe can stall a child).
/// `Child`ren: posix_spawn with nothing past descriptor 2 inherited, reaped here (see `Child` for
/// why not Foundation's `Process`).
enum Sh {
    static let environment: [String: String] = {
        var env = ProcessInfo.processInfo.environment
        env["LANG"] = "C.UTF-8"
        env["LC_ALL"] = "C.UTF-8"
        return env
    }()

    /// Runs `arguments` (argv[0] looked up in PATH); its exit code, or 128 + the signal that ended
    /// it (the shell's convention), -1 when it could not start.
    @discardableResult
    static func run(_ arguments: [String], timeout: Double = 60, stdin: String? = nil) -> Output {
        let finished = Child.run(arguments[0], Array(arguments.dropFirst()), environment: environment,
                                 stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
        if let failure = finished.startFailure { return Output(status: -1, out: "", err: failure.description, timedOut: false) }
        return Output(status: finished.signaled ? 128 + finished.status : finished.status,
                      out: String(decoding: finished.stdout, as: UTF8.self),
                      err: String(decoding: finished.stderr, as: UTF8.self), timedOut: finished.timedOut)
    }

    /// Runs and requires success.
    @discardableResult
    static func must(_ arguments: [String], timeout: Double = 30) throws -> Output {
        let r = run(arguments, timeout: timeout)
        guard r.status == 0 else { throw LabError("`\(arguments.joined(separator: " "))` failed: \(r)") }
        return r
    }
}

struct LabError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}

/// A program kept running in the background (a `Child`); killed when the lab goes.
final class Daemon: Sendable {
    private let child: Child
    let log: String

    init(_ arguments: [String], log: String) throws {
        self.log = log
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        child = try Child(arguments[0], Array(arguments.dropFirst()), environment: Sh.environment, stdout: fd, stderr: fd)
    }

    /// Its pid.
    var pid: pid_t { child.pid }

    /// Sends `signal` and waits up to 10 s for the exit (then SIGKILL, and ≤ 5 s more).
    func stop(signal: Int32 = SIGKILL) {
        child.send(signal)
        if !child.wait(seconds: 10) { child.stop() }
    }

    /// Waits for it to exit by itself (up to `timeout` s); its exit code or 128 + the signal that
    /// ended it, nil when still running.
    func wait(timeout: Double) -> Int32? {
        guard child.wait(seconds: timeout), let status = child.status else { return nil }
        return child.signaled ? 128 + status : status
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
}

/// The built `tv`: next to the test bundle, else $TV_BIN.
enum TVBinary {
    static let path: String? = {
        var candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let argv0 = CommandLine.arguments.first { candidates.append(URL(fileURLWithPath: argv0).deletingLastPathComponent()) }
        for folder in candidates {
            let tv = folder.appendingPathComponent("tv").path
            if FileManager.default.isExecutableFile(atPath: tv) { return tv }
        }
        if let env = ProcessInfo.processInfo.environment["TV_BIN"], FileManager.default.isExecutableFile(atPath: env) { return env }
        return nil
    }()
}

/// Whether namespace tests can run here: root, /dev/net/tun, ip, nginx, dnsmasq, python3, curl.
enum LabRequirements {
    static let met: Bool = {
        guard geteuid() == 0, access("/dev/net/tun", R_OK | W_OK) == 0, TVBinary.path != nil else { return false }
        for tool in ["ip", "nginx", "dnsmasq", "python3", "curl", "openssl", "unshare"] where Sh.run(["which", tool]).status != 0 { return false }
        return true
    }()
}
