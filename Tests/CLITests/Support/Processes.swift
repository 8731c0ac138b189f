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
/// child), standard input is /dev/null unless given, and every run is bounded in time. Children
/// are `Child`ren (posix_spawn, reaped here), never Foundation's `Process` (see `Child`).
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
        let finished = Child.run(executable, arguments, environment: environment, directory: directory, stdin: stdin, timeout: timeout)
        if let failure = finished.startFailure { throw failure }
        if finished.timedOut {
            Issue.record("`\(finished.command)` did not finish within \(timeout) s and was killed", sourceLocation: sourceLocation)
        }
        return ProcessOutput(command: finished.command, status: finished.timedOut ? -1 : finished.status,
                             stdout: finished.stdout, stderr: finished.stderr, timedOut: finished.timedOut)
    }

    /// An absolute path for `name` (as given when it contains a slash, else the first on PATH).
    static func resolve(_ name: String) throws -> String { try Child.resolve(name) }
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

/// A port on 127.0.0.1 held by a listening socket until `close()`: a port in use, for the
/// refusals that name it.
struct HeldLoopbackPort {
    let fd: Int32
    let port: UInt16

    /// Binds port 0 and listens. Nil when the socket could not be made.
    init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let held = fd >= 0 && withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 } }
        guard held else {
            if fd >= 0 { Glibc.close(fd) }
            return nil
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(fd) }
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
