import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `tv run` child over a sandbox's data folder, listening on 127.0.0.1:<free port>
/// (unless `listen` says otherwise). Ready once its control socket answers `tv status`, which is
/// opened after the listener; readiness never connects to the proxy (that would add a flow).
/// Killed with SIGKILL if still running when the object goes away.
final class TVSession {
    let sandbox: Sandbox
    let port: UInt16
    let logPath: String
    private let child: Child

    /// - Parameter listen: the --listen value; nil for 127.0.0.1:<free port>, "" for none at all.
    /// - Parameter launcher: a program (full path) and arguments that exec tv, keeping its pid
    ///   (`/usr/bin/prlimit --nofile=64:4096 --`); empty for none.
    init(_ sandbox: Sandbox, _ arguments: [String], listen: String? = nil, environment extra: [String: String] = [:],
         launcher: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        self.sandbox = sandbox
        port = freeLoopbackPort()
        logPath = sandbox.root + "/tv-run-\(UUID().uuidString.prefix(6)).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let binary = try TVBinary.require()
        let listenArguments = listen == "" ? [] : ["--listen", listen ?? "127.0.0.1:\(port)"]
        let arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [binary])
            + ["--data-dir", sandbox.dataDir, "run"] + listenArguments + arguments
        let logFD = open(logPath, O_WRONLY | O_APPEND | O_CLOEXEC)
        defer { close(logFD) }
        child = try Child(launcher.first ?? binary, Array(arguments), environment: sandbox.environment.merging(extra) { $1 },
                          directory: sandbox.work, stdout: logFD, stderr: logFD)
        let socket = sandbox.dataDir + "/run/control.sock"
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            guard child.isRunning else { break }
            if FileManager.default.fileExists(atPath: socket), (try? sandbox.tv("status"))?.status == 0 { return }
            usleep(20_000)
        }
        let text = log()
        child.stop()
        throw StartFailed(log: text)
    }

    var proxyURL: String { "http://127.0.0.1:\(port)" }
    var proxyHostPort: String { "127.0.0.1:\(port)" }
    var isRunning: Bool { child.isRunning }
    /// The child's pid (tv's own: a launcher execs it).
    var pid: Int32 { child.pid }
    /// tv's exit code (or the signal that ended it); nil while it runs.
    var exitStatus: Int32? { child.status }

    /// What the session printed so far (banner, notices).
    func log() -> String {
        String(decoding: FileManager.default.contents(atPath: logPath) ?? Data(), as: UTF8.self)
    }

    /// `tv stop`, then waits (≤ 15 s) for the process to exit; records an issue if it does not.
    @discardableResult
    func stop(sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let result = try sandbox.tv("stop", sourceLocation: sourceLocation)
        if !child.wait(seconds: 15) {
            Issue.record("tv run did not exit within 15 s of `tv stop`:\n\(log())", sourceLocation: sourceLocation)
            child.stop()
        }
        return result
    }

    /// Sends `signal` to the session (as Ctrl-C or a service manager would).
    func send(_ signal: Int32) { child.send(signal) }
    /// Waits (≤ `seconds`) for the session to exit by itself.
    func waitForExit(seconds: Double) -> Bool { child.wait(seconds: seconds) }

    /// SIGKILL (also when the object goes away: `Child`'s deinit).
    func kill() { child.stop() }

    struct StartFailed: Error, CustomStringConvertible {
        let log: String
        var description: String { "tv run did not become ready:\n\(log)" }
    }
}

/// JSON read from tv's `--json` output.
typealias JSON = [String: Any]

extension Sandbox {
    /// `tv ARGS… --json` parsed as an object (the command must succeed).
    func json(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON {
        let result = try tvArgs(arguments + ["--json"], sourceLocation: sourceLocation)
        guard result.status == 0, let object = try? JSONSerialization.jsonObject(with: result.stdout) as? JSON else {
            throw Failed(output: result)
        }
        return object
    }

    /// `tv flows --json --limit 10000`, oldest first.
    func flowRows(sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSON] {
        let page = try json("flows", "--limit", "10000", sourceLocation: sourceLocation)
        let rows = page["flows"] as? [JSON] ?? []
        return rows.sorted { ($0["id"] as? Int ?? 0) < ($1["id"] as? Int ?? 0) }
    }

    /// Waits (≤ `timeout` s) until at least `count` flows are recorded and every one is closed
    /// (has a duration); returns them oldest first. Rows reach the database through a batched
    /// writer just after the client saw the end of its connection.
    func closedFlows(_ count: Int, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSON] {
        let deadline = Date().addingTimeInterval(timeout)
        var rows: [JSON] = []
        repeat {
            rows = try flowRows(sourceLocation: sourceLocation)
            if rows.count >= count && rows.allSatisfy({ !($0["duration"] is NSNull) && $0["duration"] != nil }) { return rows }
            usleep(50_000)
        } while Date() < deadline
        Issue.record("expected \(count) closed flows within \(timeout) s, have \(rows.count): \(rows.map { "\($0["id"] ?? "?") \($0["status"] ?? "?") \($0["duration"] ?? "?")" })",
                     sourceLocation: sourceLocation)
        return rows
    }

    /// `tv status --json` (nil when no session runs).
    func status(sourceLocation: SourceLocation = #_sourceLocation) throws -> JSON? {
        let result = try tvArgs(["status", "--json"], sourceLocation: sourceLocation)
        return try? JSONSerialization.jsonObject(with: result.stdout) as? JSON
    }

    /// Polls `tv status --json` (≤ `timeout` s) until `done` holds; returns the last answer
    /// (an issue recorded when it never held).
    func waitForStatus(timeout: Double = 20, sourceLocation: SourceLocation = #_sourceLocation,
                       _ done: (JSON) -> Bool) throws -> JSON {
        let deadline = Date().addingTimeInterval(timeout)
        var last: JSON = [:]
        repeat {
            if let status = try status(sourceLocation: sourceLocation) {
                last = status
                if done(status) { return status }
            }
            usleep(100_000)
        } while Date() < deadline
        Issue.record("status never settled: \(last)", sourceLocation: sourceLocation)
        return last
    }

    /// Waits (≤ `timeout` s) until the running session says no connection is open.
    func waitForNoOpenConnections(timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var open = -1
        repeat {
            open = (try status(sourceLocation: sourceLocation)?["openConnections"] as? Int) ?? -1
            if open == 0 { return 0 }
            usleep(50_000)
        } while Date() < deadline
        return open
    }

    /// curl with the sandbox's clean environment (no proxy or CA variables from the parent).
    @discardableResult
    func curl(_ arguments: [String], environment extra: [String: String] = [:], timeout: Double = 60,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try Run.process("curl", ["-sS"] + arguments, in: work, environment: environment.merging(extra) { $1 },
                        timeout: timeout, sourceLocation: sourceLocation)
    }

    /// python3 running `script` (written to the working folder) with `arguments`.
    @discardableResult
    func python(_ script: String, _ arguments: [String], timeout: Double = 60, interpreter: String = "python3",
                sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let path = work + "/script-\(UUID().uuidString.prefix(8)).py"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        return try tool(interpreter, [path] + arguments, timeout: timeout, sourceLocation: sourceLocation)
    }

    /// `sha256sum FILE`'s hash.
    func sha256(_ path: String) throws -> String {
        String(try tool("sha256sum", [path]).out.prefix(64))
    }

    /// A file's SHA-256 fingerprint as tv writes it (lowercase hex, no separators).
    func fingerprint(_ certificate: String) throws -> String {
        let out = try tool("openssl", ["x509", "-in", certificate, "-noout", "-fingerprint", "-sha256"]).out
        return String(out.split(separator: "=").last ?? "").replacingOccurrences(of: ":", with: "")
            .trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

extension JSON {
    func string(_ key: String) -> String? { self[key] as? String }
    func int(_ key: String) -> Int? { self[key] as? Int }
    func strings(_ key: String) -> [String]? { self[key] as? [String] }
    func object(_ key: String) -> JSON? { self[key] as? JSON }
}

/// The response head a CONNECT tunnel starts with, which curl's -D output includes.
let connectEstablished = "HTTP/1.1 200 Connection established\r\n\r\n"

/// `n` as the CLI writes counts: 1,048,822.
func grouped(_ n: Int) -> String {
    let digits = Array(String(n))
    var out = ""
    for (i, d) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(d)
    }
    return out
}
