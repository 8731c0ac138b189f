import Foundation

/// The PostgreSQL server's CPU time, read from `/proc` (proc(5), `/proc/PID/stat` fields 14-17:
/// utime, stime, cutime, cstime, in clock ticks): the postmaster's own and its reaped children's,
/// plus every live child's (backends, the WAL writer, the checkpointer). A writer's backend
/// that ended is counted in the postmaster's cutime once reaped. What `tv-bench shared` reads
/// around each fill (issue 25: the server's CPU per flow, which wall-clock on a loaded machine
/// cannot show). Only for a server on this machine whose postmaster's pid is known
/// (`Scripts/bench-shared` passes it as `TV_BENCH_SERVER_PID`).
struct ServerCPU {
    let postmaster: Int32

    /// From `TV_BENCH_SERVER_PID`; nil when unset or not a number.
    static func fromEnvironment() -> ServerCPU? {
        guard let text = ProcessInfo.processInfo.environment["TV_BENCH_SERVER_PID"], let pid = Int32(text) else { return nil }
        return ServerCPU(postmaster: pid)
    }

    /// The server's CPU so far (user and system), µs; nil when the postmaster cannot be read.
    func micros() -> Double? {
        guard let own = ServerCPU.stat(postmaster), own.ppid >= 0 else { return nil }
        var ticks = own.ticks
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry), pid != postmaster, let child = ServerCPU.stat(pid), child.ppid == postmaster else { continue }
            ticks += child.ticks
        }
        return Double(ticks) * 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The parent's pid and utime + stime + cutime + cstime of `pid`, in ticks.
    private static func stat(_ pid: Int32) -> (ppid: Int32, ticks: Int64)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command's ")": state (field 3), ppid (4), … utime (14) … cstime (17).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let ppid = Int32(fields[1]) else { return nil }
        let times = fields[11...14].compactMap { Int64($0) }
        guard times.count == 4 else { return nil }
        return (ppid, times.reduce(0, +))
    }
}
