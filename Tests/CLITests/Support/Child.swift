import CTVShims
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests start: `posix_spawn` through `tv_spawn_alone` (no descriptor past 2
/// inherited, signals at their defaults, an empty signal mask) and reaped here with
/// `waitpid(WNOHANG)`, so that every wait is bounded and one child never holds up another.
///
/// Not Foundation's `Process`: on Linux it learns of a child's exit when a socket the child
/// inherits reaches end of file, on one shared thread that then blocks in `waitpid`. A child that
/// closes its descriptors and runs on (dnsmasq does) stops that thread, and with it every other
/// child's exit from being seen; a grandchild that keeps the socket (`sh -c 'sleep 300 &'`) makes
/// its parent look alive until it goes, and `waitUntilExit()` with it (measured: 300 s). And what
/// a child inherits past descriptor 2 (another test's pipe, the test process's output) can hold a
/// reader open after the test ends: most likely what held stop 38's CI run until CI's limit.
/// TunnelIntegrationTests' `Sh` had already left `Process` for the first reason.
final class Child: Sendable {
    /// The child's pid (the program's own: nothing stands between).
    let pid: pid_t
    /// The command as run, for messages.
    let command: String
    /// nil while running; once reaped, how it ended.
    private let reaped = Mutex<Ending?>(nil)

    /// An exit code, or the number of the signal that ended it (`signaled`).
    struct Ending {
        let code: Int32
        let signaled: Bool
    }

    /// Starts `executable` (a path, or a name looked up on the PATH of `environment`, else of the
    /// tests) with `arguments`. `stdin`/`stdout`/`stderr` are descriptors the child gets as 0/1/2
    /// (-1: /dev/null). `directory` is where it starts (nil: the tests' own).
    /// - Throws: `Child.MissingTool` when no such program is on the PATH, `Child.CannotStart` when
    ///   posix_spawn fails (a missing folder, a file that is not a program).
    init(_ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
         stdin: Int32 = -1, stdout: Int32 = -1, stderr: Int32 = -1) throws {
        let path = try Child.resolve(executable, path: environment["PATH"])
        command = ([executable] + arguments).joined(separator: " ")
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        var pid: pid_t = 0
        let argv = [path] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }.sorted()
        let rc = Child.withCStrings(argv) { argv in
            Child.withCStrings(envp) { envp in
                tv_spawn_alone(path, argv, envp, directory, stdin >= 0 ? stdin : null, stdout >= 0 ? stdout : null,
                               stderr >= 0 ? stderr : null, &pid)
            }
        }
        guard rc == 0 else { throw CannotStart(command: command, errno: rc) }
        self.pid = pid
    }

    /// Starts it with standard output and error appended to the file at `log` (created when
    /// missing, 0600) and standard input from /dev/null.
    convenience init(_ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
                     log: String) throws {
        let fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { if fd >= 0 { close(fd) } }
        try self.init(executable, arguments, environment: environment, directory: directory, stdout: fd, stderr: fd)
    }

    /// Whether it is still running (reaps it when it has exited).
    var isRunning: Bool { ending == nil }

    /// The exit code, or the number of the signal that ended it (as Foundation's
    /// `terminationStatus` has it); nil while it runs.
    var status: Int32? { ending?.code }

    /// Whether a signal ended it (false while it runs).
    var signaled: Bool { ending?.signaled ?? false }

    /// How it ended, reaping it when it has exited; nil while it runs.
    private var ending: Ending? {
        reaped.withLock { reaped in
            if reaped == nil {
                var raw: Int32 = 0
                let result = waitpid(pid, &raw, WNOHANG)
                if result == pid {
                    var code: Int32 = 0
                    let kind = tv_wait_status(raw, &code)
                    reaped = Ending(code: kind == 0 ? -1 : code, signaled: kind == 2)
                } else if result < 0 && errno == ECHILD {
                    reaped = Ending(code: -1, signaled: false)  // not ours to wait for any more
                }
            }
            return reaped
        }
    }

    /// Waits until it exits; false if it still runs after `seconds`.
    func wait(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Sends `signal` (nothing once it has been reaped: the pid may be another program's by then).
    func send(_ signal: Int32) {
        reaped.withLock { if $0 == nil { _ = kill(pid, signal) } }
    }

    /// SIGKILL, then waits (≤ 5 s) until it is gone.
    func stop() {
        send(SIGKILL)
        _ = wait(seconds: 5)
    }

    /// Killed if still running; never waits past 5 s.
    deinit { stop() }

    /// What a program run to its end (or to its deadline) left.
    struct Finished {
        /// The command as run, for messages.
        let command: String
        /// The exit code, or the number of the signal that ended it; -1 when it could not start.
        let status: Int32
        /// Whether a signal ended it.
        let signaled: Bool
        let stdout: Data
        let stderr: Data
        /// Whether it was still running at the deadline (and was killed).
        let timedOut: Bool
        /// Why it could not start; nil when it ran.
        let startFailure: StartFailure?
    }

    /// Runs `executable` to its end with `stdin` as standard input (/dev/null when nil) and both
    /// outputs in files (no pipe can fill up and stall it), killing it after `timeout` seconds.
    /// Never throws: a program that cannot start is a `Finished` with status -1 and the reason.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
                    stdin: Data? = nil, timeout: Double) -> Finished {
        let stem = NSTemporaryDirectory() + "/tvchild-\(getpid())-\(UUID().uuidString)"
        let paths = (out: stem + ".out", err: stem + ".err", input: stem + ".in")
        defer { for path in [paths.out, paths.err, paths.input] { unlink(path) } }
        let outFD = open(paths.out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errFD = open(paths.err, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        var inFD: Int32 = -1
        if let stdin {
            _ = FileManager.default.createFile(atPath: paths.input, contents: stdin, attributes: [.posixPermissions: 0o600])
            inFD = open(paths.input, O_RDONLY | O_CLOEXEC)
        }
        defer { close(outFD); close(errFD); if inFD >= 0 { close(inFD) } }
        let command = ([executable] + arguments).joined(separator: " ")
        let child: Child
        do {
            child = try Child(executable, arguments, environment: environment, directory: directory, stdin: inFD, stdout: outFD, stderr: errFD)
        } catch {
            return Finished(command: command, status: -1, signaled: false, stdout: Data(), stderr: Data(), timedOut: false,
                            startFailure: StartFailure(description: "\(error)"))
        }
        let timedOut = !child.wait(seconds: timeout)
        if timedOut { child.stop() }
        return Finished(command: command, status: child.status ?? -1, signaled: child.signaled,
                        stdout: FileManager.default.contents(atPath: paths.out) ?? Data(),
                        stderr: FileManager.default.contents(atPath: paths.err) ?? Data(), timedOut: timedOut, startFailure: nil)
    }

    /// A pipe for a child's standard input or output, both ends close-on-exec (the child gets its
    /// end through dup2): (read end, write end).
    static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw StartFailure(description: "pipe failed: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }

    /// An absolute path for `name`: as given when it contains a slash, else the first on `path`
    /// (the tests' PATH when nil).
    static func resolve(_ name: String, path: String? = nil) throws -> String {
        if name.contains("/") { return name }
        let search = path ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in search.split(separator: ":") where access("\(dir)/\(name)", X_OK) == 0 {
            return "\(dir)/\(name)"
        }
        throw MissingTool(name: name)
    }

    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    struct CannotStart: Error, CustomStringConvertible {
        let command: String
        let errno: Int32
        var description: String { "could not start `\(command)`: \(String(cString: strerror(errno)))" }
    }

    /// Why `run` could not start a program, in a sentence.
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    struct MissingTool: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) is not installed (Scripts/test installs it)" }
    }
}
