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
    /// A run that left no sample (this thread was descheduled for the child's whole life, as in
    /// a loaded clean-clone CI run) is run again, up to three times: the commands measured only
    /// read. (wait4's `ru_maxrss` is no substitute: after posix_spawn's vfork it carries the
    /// test process's own peak, 250 MB.)
    static func run(_ path: String, _ arguments: [String], environment: [String: String], stdoutPath: String,
                    timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) throws -> Result {
        var result = try runOnce(path, arguments, environment: environment, stdoutPath: stdoutPath, timeout: timeout, sourceLocation: sourceLocation)
        for _ in 0..<2 where result.samples == 0 && result.status == 0 {
            result = try runOnce(path, arguments, environment: environment, stdoutPath: stdoutPath, timeout: timeout, sourceLocation: sourceLocation)
        }
        return result
    }

    private static func runOnce(_ path: String, _ arguments: [String], environment: [String: String], stdoutPath: String,
                                timeout: Double, sourceLocation: SourceLocation) throws -> Result {
        let errPath = NSTemporaryDirectory() + "/tv-childmemory-\(getpid())-\(UUID().uuidString).err"
        defer { unlink(errPath) }
        let outFD = open(stdoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(outFD); close(errFD) }
        // A `Child`: nothing past descriptor 2 inherited, an empty signal mask, reaped here.
        let child = try Child(path, arguments, environment: environment, stdout: outFD, stderr: errFD)
        let started = Date()
        var result = Result(status: -1, peakResidentKiB: 0, peakVirtualKiB: 0, samples: 0, err: "", seconds: 0)
        while true {
            if let figures = statusFigures(child.pid) {
                result.samples += 1
                result.peakResidentKiB = max(result.peakResidentKiB, figures.hwm)
                result.peakVirtualKiB = max(result.peakVirtualKiB, figures.peak)
            }
            if let status = child.status {
                // Foundation's convention in `Child`; this result has a signal as its negative.
                result.status = child.signaled ? -status : status
                break
            }
            if Date().timeIntervalSince(started) > timeout {
                child.stop()
                Issue.record("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s and was killed",
                             sourceLocation: sourceLocation)
                break
            }
            usleep(2_000)
        }
        result.seconds = Date().timeIntervalSince(started)
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
