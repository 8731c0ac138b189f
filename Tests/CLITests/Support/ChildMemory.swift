import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program and measures its memory as the kernel counts it (issue 12 §1): the child's
/// `/proc/<pid>/status` VmHWM (peak resident set) and VmPeak (peak virtual size), read every
/// 2 ms while it runs. VmHWM is a high-water mark, so a read sees every peak before it.
/// (wait4's `ru_maxrss` is no use here: after posix_spawn's vfork it also counts the test
/// runner's own resident set.)
enum ChildMemory {
    struct Result: CustomStringConvertible {
        var status: Int32
        /// The largest VmHWM read from /proc, KiB.
        var peakResidentKiB: Int
        /// The largest VmPeak read from /proc, KiB.
        var peakVirtualKiB: Int
        /// How many times /proc/<pid>/status was read.
        var samples: Int
        var err: String
        var seconds: Double

        var description: String {
            "exit \(status), VmHWM \(peakResidentKiB) KiB, VmPeak \(peakVirtualKiB) KiB, \(samples) samples, \(String(format: "%.2f", seconds)) s; stderr: \(err.prefix(500))"
        }
    }

    /// Runs `path` with `arguments`, standard output to `stdoutPath` (a file, or /dev/null),
    /// standard input from /dev/null; kills it after `timeout` seconds (recorded as an issue).
    static func run(_ path: String, _ arguments: [String], environment: [String: String], stdoutPath: String,
                    timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) throws -> Result {
        let errPath = NSTemporaryDirectory() + "/tv-childmemory-\(getpid())-\(UUID().uuidString).err"
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The test runner's threads block signals; the child gets an empty mask.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }

        let started = Date()
        var result = Result(status: -1, peakResidentKiB: 0, peakVirtualKiB: 0, samples: 0, err: "", seconds: 0)
        var status: Int32 = 0
        while true {
            if let figures = statusFigures(pid) {
                result.samples += 1
                result.peakResidentKiB = max(result.peakResidentKiB, figures.hwm)
                result.peakVirtualKiB = max(result.peakVirtualKiB, figures.peak)
            }
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { break }
            if Date().timeIntervalSince(started) > timeout {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                Issue.record("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s and was killed",
                             sourceLocation: sourceLocation)
                break
            }
            usleep(2_000)
        }
        result.seconds = Date().timeIntervalSince(started)
        result.status = status & 0x7f == 0 ? (status >> 8) & 0xff : -(status & 0x7f)
        result.err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return result
    }

    /// VmHWM and VmPeak (KiB) from /proc/<pid>/status, nil once the process has no memory left
    /// to report (exited, a zombie).
    static func statusFigures(_ pid: pid_t) -> (hwm: Int, peak: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var hwm: Int?
        var peak: Int?
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2 else { continue }
            if parts[0] == "VmHWM:" { hwm = Int(parts[1]) }
            if parts[0] == "VmPeak:" { peak = Int(parts[1]) }
        }
        guard let hwm, let peak else { return nil }
        return (hwm, peak)
    }
}
