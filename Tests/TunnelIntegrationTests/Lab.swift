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
/// posix_spawn + waitpid(WNOHANG) (Tunnel.ChildProcess), not Foundation's `Process`: its child
/// monitor blocked in a wait for a long-running daemon and never reaped the next short child.
enum Sh {
    static let environment: [String: String] = {
        var env = ProcessInfo.processInfo.environment
        env["LANG"] = "C.UTF-8"
        env["LC_ALL"] = "C.UTF-8"
        return env
    }()

    @discardableResult
    static func run(_ arguments: [String], timeout: Double = 60, stdin: String? = nil) -> Output {
        let tag = UUID().uuidString
        let outPath = NSTemporaryDirectory() + "tvlab-\(tag).out", errPath = NSTemporaryDirectory() + "tvlab-\(tag).err"
        let inPath = NSTemporaryDirectory() + "tvlab-\(tag).in"
        _ = FileManager.default.createFile(atPath: inPath, contents: Data((stdin ?? "").utf8))
        defer { for p in [outPath, errPath, inPath] { try? FileManager.default.removeItem(atPath: p) } }
        let outFD = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let inFD = open(stdin == nil ? "/dev/null" : inPath, O_RDONLY | O_CLOEXEC)
        defer { close(outFD); close(errFD); close(inFD) }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(arguments, environment: environment, stdin: inFD, stdout: outFD, stderr: errFD)
        } catch {
            return Output(status: -1, out: "", err: "\(error)", timedOut: false)
        }
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid { break }
            if rc < 0 && errno != EINTR { break }
            if Date() > deadline && !timedOut {
                timedOut = true
                kill(pid, SIGKILL)
            }
            usleep(5_000)
        }
        var code: Int32 = 0
        let kind = tv_wait_status(status, &code)
        return Output(status: kind == 1 ? code : kind == 2 ? 128 + code : -1,
                      out: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                      err: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "", timedOut: timedOut)
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

/// A program kept running in the background; killed by pid when the lab goes.
final class Daemon: @unchecked Sendable {
    // `@unchecked Sendable`: `pid` is set in init; `stop` is called from one place at a time.
    private(set) var pid: pid_t = 0
    let log: String

    init(_ arguments: [String], log: String) throws {
        self.log = log
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(fd); close(null) }
        pid = try ChildProcess.spawn(arguments, environment: Sh.environment, stdin: null, stdout: fd, stderr: fd)
    }

    /// Sends `signal` and waits up to 10 s for the exit (then SIGKILL).
    func stop(signal: Int32 = SIGKILL) {
        guard pid > 0 else { return }
        kill(pid, signal)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(10)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(10_000)
        }
        pid = 0
    }

    /// Waits for it to exit by itself (up to `timeout` s); its exit status, nil when still running.
    func wait(timeout: Double) -> Int32? {
        guard pid > 0 else { return nil }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                var code: Int32 = 0
                let kind = tv_wait_status(status, &code)
                return kind == 1 ? code : 128 + code
            }
            usleep(10_000)
        }
        return nil
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
