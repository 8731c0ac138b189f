import Foundation
import FlowTerms
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps `--mode tun`'s copy of main's default routes (table U of `HostRoutingPlan`, which tv's
/// own marked sockets use) in step with main: `ip monitor route` runs beside the session, and a
/// line about one of main's default routes (added, replaced, deleted) makes the watcher read
/// main's default routes again once the burst is over (`settleMillis`) and, when they differ
/// from the copy, replace the copy. So a network change (a new gateway, a link back up and its
/// default route added again) reaches tv's sockets within a fraction of a second; until then,
/// and whenever U is empty, they fall through to main. Its own thread, off the data path.
///
/// `@unchecked Sendable`: `plan`, `process` and `done` are set in `init`/`start` before the
/// thread starts and not changed after; `applied` is touched only by the thread (and by `start`
/// before it); `stopping` is a Mutex.
public final class MainDefaultRouteWatcher: @unchecked Sendable {
    private let plan: HostRoutingPlan
    private var applied: [String: [MainTableRoutes.Route]]
    private let stopping = Mutex(false)
    private let resyncs = Mutex(0)
    private var process: pid_t = 0
    private var readEnd: Int32 = -1
    private let done = DispatchSemaphore(value: 0)

    /// How long after the last line about a default route the watcher reads main (ms): a
    /// network manager's change comes as a burst of lines.
    public static let settleMillis = 100

    /// - Parameter plan: the routing applied, with the default routes it copied.
    public init(plan: HostRoutingPlan) {
        self.plan = plan
        applied = ["-4": plan.defaults4, "-6": plan.defaults6]
    }

    /// Times the copy was replaced since `start`.
    public var resyncCount: Int { resyncs.withLock { $0 } }

    /// Starts `ip monitor route` and the thread reading it.
    /// - Throws: `TunnelError.cannotRun` when the pipe or the process cannot be made.
    public func start() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TunnelError.cannotRun(command: "ip monitor route", reason: Errno(errno).phrase) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        do {
            process = try ChildProcess.spawn(["ip", "monitor", "route"], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"],
                                             stdout: fds[1], endsWithCaller: true)
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        readEnd = fds[0]
        let thread = Thread { [self] in
            self.run()
            self.done.signal()
        }
        thread.name = "tv-routes"
        thread.start()
    }

    /// Stops the process and the thread, waited for. Safe twice, and before `start`.
    public func stop() {
        let first = stopping.withLock { was in
            defer { was = true }
            return !was
        }
        guard first, process > 0 else { return }
        kill(process, SIGTERM)
        var status: Int32 = 0
        while waitpid(process, &status, 0) < 0 && errno == EINTR {}
        done.wait()
        close(readEnd)
    }

    /// Whether a line of `ip monitor route` is about one of main's default routes: `default …`,
    /// `Deleted default …`, `unreachable default …`, never one naming a table (main's are
    /// printed without one; tv's own copy's say `table 29815`). Pure.
    public static func isAboutMainDefault(_ line: Substring) -> Bool {
        var words = line.split(separator: " ")
        if words.first == "Deleted" { words.removeFirst() }
        if let first = words.first, ["unicast", "unreachable", "blackhole", "prohibit", "throw"].contains(first) { words.removeFirst() }
        return words.first == "default" && !words.contains("table")
    }

    private func run() {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var pendingSince: UInt64?
        while !stopping.withLock({ $0 }) {
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready > 0 {
                let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
                buffer += chunk[0..<n]
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    if Self.isAboutMainDefault(Substring(line)) { pendingSince = DispatchTime.now().uptimeNanoseconds }
                }
            }
            if let since = pendingSince, DispatchTime.now().uptimeNanoseconds - since >= UInt64(Self.settleMillis) * 1_000_000 {
                pendingSince = nil
                resync()
            }
        }
    }

    /// Reads main's default routes per family and replaces the copy where they changed.
    private func resync() {
        var config = NetworkConfigurator()
        for family in plan.families {
            let now = MainTableRoutes.read(family: family, excludingDevice: plan.device, defaults: true).routes
            guard now != applied[family] else { continue }
            var copy = plan
            copy.defaults4 = family == "-4" ? now : []
            copy.defaults6 = family == "-6" ? now : []
            _ = config.tryIP([family, "route", "flush", "table", String(plan.copyTable)])
            for step in copy.copySteps(family: family) { _ = config.tryIP(step.arguments) }
            applied[family] = now
            resyncs.withLock { $0 += 1 }
        }
    }
}
