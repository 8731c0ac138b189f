import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs programs for the integration tests: bounded in time, output captured in files.
enum Shell {
    struct Output {
        var status: Int32
        var out: String
        var err: String
        var outData: Data
        var timedOut: Bool
    }

    static func tempDirectory(_ tag: String) -> String {
        let path = NSTemporaryDirectory() + "tvtest-\(tag)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs `arguments` (argv[0] looked up in PATH), killing it after `timeout` seconds. A `Child`
    /// (posix_spawn, reaped here), never Foundation's `Process` (see `Child`).
    @discardableResult
    static func run(_ arguments: [String], timeout: Double = 30, stdin: Data? = nil, environment: [String: String]? = nil) -> Output {
        let finished = Child.run(arguments[0], Array(arguments.dropFirst()),
                                 environment: ProcessInfo.processInfo.environment.merging(environment ?? [:]) { $1 },
                                 stdin: stdin, timeout: timeout)
        if let failure = finished.startFailure {
            return Output(status: -1, out: "", err: "cannot run \(arguments[0]): \(failure)", outData: Data(), timedOut: false)
        }
        return Output(status: finished.status, out: String(decoding: finished.stdout, as: UTF8.self),
                      err: String(decoding: finished.stderr, as: UTF8.self), outData: finished.stdout, timedOut: finished.timedOut)
    }

    /// A port that was free a moment ago (bind to 0, read, close).
    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// Waits until a TCP socket listens on `port` (/proc/net/tcp and tcp6, state 0A), without
    /// connecting to it.
    static func waitForListener(_ port: UInt16, timeout: Double = 10) -> Bool {
        let local = ":" + String(format: "%04X", port)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                // Read to the end: String(contentsOfFile:) stops after the first 4 KiB of a /proc file.
                let text = String(decoding: FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
                for line in text.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ")
                    if fields.count > 3, fields[1].hasSuffix(local), fields[3] == "0A" { return true }
                }
            }
            usleep(20_000)
        }
        return false
    }

    /// Waits until something accepts TCP connections on 127.0.0.1:port.
    static func waitForPort(_ port: UInt16, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            addr.sin_port = port.bigEndian
            let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            close(fd)
            if rc == 0 { return true }
            usleep(20_000)
        }
        return false
    }
}

/// A child process kept running in the background (servers), always killed (`Child`'s deinit).
final class Background {
    let process: Child
    let logPath: String

    init(_ arguments: [String], logPath: String) throws {
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = try Child(arguments[0], Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment, log: logPath)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func stop() { process.stop() }

    /// A Python script run in the background with arguments, always killed.
    static func python(_ script: String, _ arguments: [String]) -> Background {
        let path = NSTemporaryDirectory() + "tvbg-\(UUID().uuidString.prefix(8)).py"
        try? script.write(toFile: path, atomically: true, encoding: .utf8)
        return try! Background(["python3", path] + arguments, logPath: path + ".log")
    }
}
