import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a finished process left: exit status and both output streams.
struct ProcessOutput: CustomStringConvertible {
    let command: String
    let status: Int32
    let stdout: Data
    let stderr: Data
    let timedOut: Bool

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var err: String { String(decoding: stderr, as: UTF8.self) }
    /// stdout then stderr, for tools that split one message across both.
    var all: String { out + err }

    var description: String {
        "`\(command)` exited \(status)\(timedOut ? " (timed out)" : "")\n--- stdout\n\(out.prefix(2000))\n--- stderr\n\(err.prefix(2000))"
    }
}

/// Runs programs for the CLI tests: output goes to files (no pipe can fill up and stall the
/// child), standard input is /dev/null unless given, and every run is bounded in time.
enum Run {
    /// The environment children get: PATH and a C.UTF-8 locale, HOME pointed at the sandbox, and
    /// none of TV_HOME / XDG_DATA_HOME, so nothing can reach a real data folder.
    static func environment(home: String) -> [String: String] {
        let parent = ProcessInfo.processInfo.environment
        return ["PATH": parent["PATH"] ?? "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"]
    }

    /// Runs `executable` (a path, or a name looked up on PATH) and waits at most `timeout` seconds;
    /// a child still running then is killed and the run is recorded as a test issue.
    @discardableResult
    static func process(_ executable: String, _ arguments: [String], in directory: String, environment: [String: String],
                        stdin: Data? = nil, timeout: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try resolve(executable))
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment
        let tag = "\(getpid())-\(UUID().uuidString)"
        let outPath = NSTemporaryDirectory() + "/tvtest-\(tag).out"
        let errPath = NSTemporaryDirectory() + "/tvtest-\(tag).err"
        let inPath = NSTemporaryDirectory() + "/tvtest-\(tag).in"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        _ = FileManager.default.createFile(atPath: inPath, contents: stdin ?? Data())
        defer {
            for path in [outPath, errPath, inPath] { try? FileManager.default.removeItem(atPath: path) }
        }
        let outHandle = FileHandle(forWritingAtPath: outPath)!
        let errHandle = FileHandle(forWritingAtPath: errPath)!
        let inHandle = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null")! : FileHandle(forReadingAtPath: inPath)!
        defer { try? outHandle.close(); try? errHandle.close(); try? inHandle.close() }
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = inHandle
        try process.run()
        let timedOut = !waitForExit(process, seconds: timeout)
        let command = ([executable] + arguments).joined(separator: " ")
        if timedOut {
            stop(process)
            Issue.record("`\(command)` did not finish within \(timeout) s and was killed", sourceLocation: sourceLocation)
        }
        return ProcessOutput(command: command,
                             status: timedOut ? -1 : process.terminationStatus,
                             stdout: FileManager.default.contents(atPath: outPath) ?? Data(),
                             stderr: FileManager.default.contents(atPath: errPath) ?? Data(),
                             timedOut: timedOut)
    }

    /// Waits until `process` exits; false if it is still running after `seconds`.
    static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Kills `process` and waits (≤ 5 s) until it is gone.
    ///
    /// SIGKILL straight away: children that Foundation's `Process` spawns from the test runner's
    /// threads inherit their blocked signal mask (SIGTERM included, seen in /proc/PID/status
    /// SigBlk), so `terminate()` would leave them running until a timeout.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(process, seconds: 5)
    }

    /// An absolute path for `name` (as given when it contains a slash, else the first on PATH).
    static func resolve(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        throw MissingTool(name: name)
    }

    struct MissingTool: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) is not installed (Scripts/test installs it)" }
    }
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, released).
func freeLoopbackPort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return UInt16(bigEndian: address.sin_port)
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` now.
func isListening(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return result == 0
}
