import CTVShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Starting programs with `posix_spawnp` on the calling thread, so that a child started from a
/// `NamespaceThread` job inherits that thread's namespaces (Foundation's `Process` gives no such
/// promise). Every signal is at its default disposition in the child.
public enum ChildProcess {
    /// Spawns `arguments` (argv[0] looked up in PATH of `environment`) with the given standard
    /// streams (-1 = inherit). Returns the pid.
    /// - Parameter endsWithCaller: the child gets SIGTERM when the calling thread ends
    ///   (`tv_spawn_tied`): a `tv exec` killed with SIGKILL no longer leaves its command running
    ///   (in a namespace whose tunnel is gone, or pointed at a proxy that is). The calling thread
    ///   must wait for the child. SIGTERM, not SIGKILL: the command may still save what it holds
    ///   (one that ignores it keeps running, as every command did before).
    /// - Throws: `TunnelError.cannotRun`.
    public static func spawn(_ arguments: [String], environment: [String: String], stdin: Int32 = -1,
                             stdout: Int32 = -1, stderr: Int32 = -1, endsWithCaller: Bool = false) throws -> pid_t {
        precondition(!arguments.isEmpty)
        var pid: pid_t = 0
        let envStrings = environment.map { "\($0.key)=\($0.value)" }.sorted()
        let rc = withCStrings(arguments) { argv in
            withCStrings(envStrings) { envp in
                // posix_spawnp searches the PATH of the *parent*; look it up in the child's PATH ourselves.
                let path = resolve(arguments[0], path: environment["PATH"])
                return endsWithCaller ? tv_spawn_tied(path, argv, envp, stdin, stdout, stderr, SIGTERM, &pid)
                    : tv_spawn(path, argv, envp, stdin, stdout, stderr, &pid)
            }
        }
        guard rc == 0 else { throw TunnelError.cannotRun(command: arguments[0], reason: Errno(rc).phrase, found: rc != ENOENT) }
        return pid
    }

    /// Waits for `pid`; returns its exit code, or 128 + the signal that killed it (the shell's
    /// convention).
    public static func wait(_ pid: pid_t) -> Int32 {
        ending(pid).exitCode
    }

    /// Waits for `pid`; how it ended (a wait that fails reads as exit 127, a status neither
    /// exit nor signal as exit 1).
    public static func ending(_ pid: pid_t) -> ChildEnding {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(code: 127) }
        }
        var code: Int32 = 0
        switch tv_wait_status(status, &code) {
        case 1: return .exited(code: code)
        case 2: return .killed(signal: code)
        default: return .exited(code: 1)
        }
    }

    /// Runs a short configuration command to completion, capturing its output (stdout and stderr
    /// together, at most `maximumBytes`, 64 KiB unless said; the rest is read and dropped).
    /// Returns the exit code and the output.
    public static func run(_ arguments: [String], environment: [String: String] = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
                           maximumBytes: Int = 65_536) throws -> (Int32, String) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TunnelError.cannotRun(command: arguments[0], reason: Errno(errno).phrase) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if devNull >= 0 { close(devNull) } }
        let pid: pid_t
        do {
            pid = try spawn(arguments, environment: environment, stdin: devNull, stdout: fds[1], stderr: fds[1])
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { if output.count < maximumBytes { output += chunk[0..<n] }; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        close(fds[0])
        return (wait(pid), String(decoding: output, as: UTF8.self))
    }

    /// The full path of `name` in `path` (colon-separated), or `name` when it has a slash or is not found.
    static func resolve(_ name: String, path: String?) -> String {
        guard !name.contains("/") else { return name }
        for dir in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = dir + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }

    /// Calls `body` with a NULL-terminated `char *const[]` of `strings`.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
