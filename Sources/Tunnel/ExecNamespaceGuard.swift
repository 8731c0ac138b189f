import CTVShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What stops a `tv exec`'s command and everything it started when tv cannot: a small process
/// (`tv __exec-namespace-guard INODE`, spawned by tv) that waits on a pipe only tv writes to and,
/// once it reads the end of it (tv exited, or was killed with SIGKILL), stops every process left
/// in the command's network namespace (by the inode of `/proc/PID/ns/net`, as
/// `ExecNamespace.killRemaining` does at a normal end). The command itself gets SIGTERM when tv
/// dies (`ChildProcess.spawn(endsWithCaller:)`), but what it started did not: a trial's `curl`
/// under `sh` went on in a namespace whose tunnel was gone, reparented to init.
///
/// The guard leaves tv's session (setsid), so the terminal's Ctrl-C reaches tv and the command,
/// not it; it keeps no descriptor of tv's but the pipe (`tv_spawn_alone`).
public final class ExecNamespaceGuard: Sendable {
    /// The hidden command word `main` hands to `run`.
    public static let command = "__exec-namespace-guard"
    private let writeEnd: Int32

    /// Starts the guard for the namespace whose `ns/net` inode is `namespaceInode`; nil when it
    /// cannot be started (the command then runs as before, tied to tv by SIGTERM alone).
    public init?(namespaceInode: UInt64) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec from the start: no other spawn may keep the write end (the pipe would
        // not end while that program runs). The guard's spawn dup2s the read end clear of it,
        // and its read blocks.
        guard tv_pipe(&fds) == 0 else { return nil }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) & ~O_NONBLOCK)
        var pid: pid_t = 0
        let arguments = ["tv", Self.command, String(namespaceInode)]
        // It says nothing: /dev/null for its output, so it holds no pipe tv's output goes to
        // (a reader of `tv exec … | …` would wait for it too).
        let quiet = open("/dev/null", O_WRONLY | O_CLOEXEC)
        let rc = ChildProcess.withCStrings(arguments) { argv in
            ChildProcess.withCStrings(["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]) { envp in
                tv_spawn_alone("/proc/self/exe", argv, envp, "/", fds[0], quiet, quiet, &pid)
            }
        }
        if quiet >= 0 { close(quiet) }
        close(fds[0])
        guard rc == 0 else {
            close(fds[1])
            return nil
        }
        writeEnd = fds[1]
    }

    /// tv's normal end, after `killRemaining`: the guard reads the pipe's end and finds nothing.
    public func release() { close(writeEnd) }

    /// How long what is in the namespace has to end after SIGTERM before SIGKILL (ms).
    static let graceMillis = 2_000

    /// The guard's whole life (`tv __exec-namespace-guard INODE`): wait for the pipe on standard
    /// input to end, then stop what is in the namespace (SIGTERM, then SIGKILL after
    /// `graceMillis` in up to three sweeps 50 ms apart, for a fork under way), and exit.
    /// - Parameter arguments: the words after the command word (the inode).
    public static func run(_ arguments: [String]) -> Never {
        guard arguments.count == 1, let inode = UInt64(arguments[0]) else { exit(2) }
        _ = setsid()
        signal(SIGPIPE, SIG_IGN)
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) < 0 && errno == EINTR {}
        // SIGTERM first, as the command itself gets (it may save what it holds), then SIGKILL
        // for what is still there after `graceMillis`.
        for pid in processes(in: inode) { kill(pid, SIGTERM) }
        var waited = 0
        while waited < graceMillis, !processes(in: inode).isEmpty {
            usleep(50_000)
            waited += 50
        }
        for _ in 0..<3 {
            let pids = processes(in: inode)
            if pids.isEmpty { break }
            for pid in pids { kill(pid, SIGKILL) }
            usleep(50_000)
        }
        exit(0)
    }

    /// The pids whose network namespace is `inode` (this process excluded).
    static func processes(in inode: UInt64) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        let own = getpid()
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != own else { return nil }
            var info = stat()
            return stat("/proc/\(pid)/ns/net", &info) == 0 && UInt64(info.st_ino) == inode ? pid : nil
        }
    }
}
