import CTVShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with a time limit, capturing its output; standard input is
/// /dev/null (or the few bytes given), so a program that would ask a question fails instead of
/// waiting forever.
public enum BoundedProcess {
    /// What a finished program said.
    public struct Result: Sendable, Equatable {
        /// The exit status (or 128 + signal number when killed by a signal).
        public let status: Int32
        public let stdout: [UInt8]
        public let stderr: [UInt8]
        /// The first non-empty line of standard error (or standard output), trimmed.
        public var firstErrorLine: String {
            for bytes in [stderr, stdout] {
                if let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
                    .map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty }) {
                    return line
                }
            }
            return "no output"
        }
    }

    /// Why a program could not be run to the end.
    public enum Failure: Error, Sendable, Equatable {
        case notFound(program: String)
        case couldNotStart(program: String, reason: String)
        case timedOut(program: String, seconds: Double)

        /// A clause for people.
        public var reason: String {
            switch self {
            case .notFound(let p): return "\(p) is not installed (not found on PATH)"
            case let .couldNotStart(p, r): return "\(p) could not be started (\(r))"
            case let .timedOut(p, s): return "\(p) did not finish within \(Int(s)) seconds and was stopped"
            }
        }
    }

    /// Finds `program` on `PATH` (from `environment`, else the standard system folders).
    public static func locate(_ program: String, environment: [String: String]) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `program` with `arguments`.
    ///
    /// The child is started with posix_spawn (`tv_spawn_alone`: no descriptor of tv's past 2, an
    /// empty signal mask) and reaped here, so every wait ends by `timeout`: a helper the program
    /// leaves running (a daemon, a hook's background job) can hold its output pipes, but not this
    /// call. Foundation's `Process` waited for such a helper to exit (it learns of an exit through
    /// a socket the child's descendants inherit), and `waitUntilExit()` after a kill with it.
    /// - Parameters:
    ///   - environment: the child's environment (also used to find `program` on `PATH`).
    ///   - input: the child's standard input, then its end; at most `maxInput` bytes (written
    ///     into a pipe before the child starts, so the write never waits). Empty: /dev/null.
    ///   - timeout: seconds before the child is killed (SIGKILL).
    /// - Throws: `Failure`.
    public static func run(_ program: String, _ arguments: [String], environment: [String: String],
                           input: [UInt8] = [], timeout: Double = 30) throws -> Result {
        precondition(input.count <= maxInput, "BoundedProcess input is at most \(maxInput) bytes")
        guard let path = locate(program, environment: environment) else { throw Failure.notFound(program: program) }
        let deadline = Date().addingTimeInterval(timeout)
        let out = try OutputPipe(program), err = try OutputPipe(program)
        let stdin = try standardInput(input, program)
        var pid: pid_t = 0
        let argv = [path] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }.sorted()
        let rc = withCStrings(argv) { argv in
            withCStrings(envp) { envp in tv_spawn_alone(path, argv, envp, nil, stdin, out.writeEnd, err.writeEnd, &pid) }
        }
        close(stdin)
        out.closeWriteEnd()
        err.closeWriteEnd()
        guard rc == 0 else { throw Failure.couldNotStart(program: program, reason: String(cString: strerror(rc))) }
        var status: Int32 = 0
        var exited = false
        while !exited {
            let reaped = waitpid(pid, &status, WNOHANG)
            exited = reaped == pid || (reaped < 0 && errno == ECHILD)
            // Read for up to 50 ms while it runs; once it has exited, take what is there (a
            // second at most: a helper it left may go on writing).
            drain([out, err], waitMilliseconds: exited ? 0 : 50, until: exited ? Date().addingTimeInterval(1) : deadline)
            if !exited && Date() > deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                throw Failure.timedOut(program: program, seconds: timeout)
            }
        }
        var code: Int32 = 0
        switch tv_wait_status(status, &code) {
        case 1: return Result(status: code, stdout: out.bytes, stderr: err.bytes)
        case 2: return Result(status: 128 + code, stdout: out.bytes, stderr: err.bytes)
        default: return Result(status: 1, stdout: out.bytes, stderr: err.bytes)
        }
    }

    /// The most `run` writes to a child's standard input: what a pipe holds on Linux before a
    /// write waits (pipe(7): 16 pages).
    public static let maxInput = 65_536

    /// The read end for the child's standard input: /dev/null, or a pipe already holding `input`
    /// with its write end closed.
    private static func standardInput(_ input: [UInt8], _ program: String) throws -> Int32 {
        guard !input.isEmpty else { return open("/dev/null", O_RDONLY | O_CLOEXEC) }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw Failure.couldNotStart(program: program, reason: String(cString: strerror(errno)))
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        defer { close(fds[1]) }
        let written = input.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        guard written == input.count else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "only \(written) of \(input.count) bytes of its input could be written"
            close(fds[0])
            throw Failure.couldNotStart(program: program, reason: reason)
        }
        return fds[0]
    }

    /// Reads what `pipes` hold, waiting up to `waitMilliseconds` for the first bytes; returns by
    /// `deadline` even while a tool writes without pause.
    private static func drain(_ pipes: [OutputPipe], waitMilliseconds: Int32, until deadline: Date) {
        var wait = waitMilliseconds
        while Date() <= deadline {
            let open = pipes.filter { !$0.ended }
            guard !open.isEmpty else { return }
            var fds = open.map { pollfd(fd: $0.readEnd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return }
            for (index, pipe) in open.enumerated() where fds[index].revents != 0 { pipe.read() }
            wait = 0
        }
    }

    /// One output of the child: a pipe whose write end it gets as 1 or 2, read here until its end.
    private final class OutputPipe {
        let readEnd: Int32
        private(set) var writeEnd: Int32
        private(set) var bytes: [UInt8] = []
        private(set) var ended = false

        init(_ program: String) throws {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                throw Failure.couldNotStart(program: program, reason: String(cString: strerror(errno)))
            }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            (readEnd, writeEnd) = (fds[0], fds[1])
        }

        func closeWriteEnd() {
            if writeEnd >= 0 { close(writeEnd); writeEnd = -1 }
        }

        /// One read: bytes appended, or the end (end of file or an error) noted.
        func read() {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            if n > 0 { bytes += chunk[0..<n] } else if n == 0 || (errno != EINTR && errno != EAGAIN) { ended = true }
        }

        deinit {
            closeWriteEnd()
            close(readEnd)
        }
    }

    /// Calls `body` with a NULL-terminated `char *const[]` of `strings`.
    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
