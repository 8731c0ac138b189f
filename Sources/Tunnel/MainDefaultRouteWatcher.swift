import Foundation
import FlowTerms
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps `--mode tun`'s copy of main's default routes (table U of `HostRoutingPlan`, which tv's
/// own marked sockets use) in step with main: `ip monitor route` runs beside the session, and a
/// line about one of main's default routes (added, replaced, deleted) makes the watcher compare
/// what U holds with main's default routes once the burst is over (`settleMillis`) and, when they
/// differ, make U again; the same comparison runs every `checkSeconds` whatever was said, for
/// what comes without a line (the kernel drops IPv4 routes through a link going down silently,
/// someone flushes U, the monitor dies). So a network change reaches tv's sockets within a
/// fraction of a second. Its own thread, off the data path.
///
/// It keeps the server-reply rules (`ServerReplyPorts`) in step with this host's servers the
/// same way: their ports are read every `serverCheckSeconds` (a sock_diag dump of listeners,
/// no process) and the rules changed when they changed, and compared with the kernel's rules
/// at each periodic comparison (a rule removed from outside is made again). The plan's three
/// rules are checked at each periodic comparison too, made again when gone, and said
/// (`HostRoutingPlan.missingRules`).
///
/// `@unchecked Sendable`: `plan`, `readServerPorts`, `process`, `readEnd` and `done` are set in
/// `init`/`start` before the thread starts and not changed after (`readEnd` is closed by `stop`
/// after the thread ended); the rest is a Mutex.
public final class MainDefaultRouteWatcher: @unchecked Sendable {
    private let plan: HostRoutingPlan
    private let readServerPorts: @Sendable (ServerReplyPorts) -> ServerReplyPorts?
    /// The server ports the rules were last made for (the plan's at first): the watcher's
    /// thread writes it, `tv status` reads it.
    private let serverPortsNow: Mutex<ServerReplyPorts>
    private let monitorEnded = Mutex(false)
    private let rulesRemade = Mutex(0)
    private let say: @Sendable (String) -> Void
    private let stopping = Mutex(false)
    private let resyncs = Mutex(0)
    private var process: pid_t = 0
    private var readEnd: Int32 = -1
    private let done = DispatchSemaphore(value: 0)

    /// How long after the last line about a default route the watcher reads main (ms): a
    /// network manager's change comes as a burst of lines.
    public static let settleMillis = 100
    /// Seconds between comparisons made without a line.
    public static let checkSeconds = 10.0
    /// Seconds between readings of this host's server ports.
    public static let serverCheckSeconds = 2.0

    /// - Parameters:
    ///   - plan: the routing applied (its `serverPorts` are the rules made).
    ///   - serverPorts: reads this host's servers now, given the ports last ruled
    ///     (`ServerReplyPorts.read`, with the ports named with `--server-ports`, so their rules
    ///     stay all session); nil: unknown (the rules stay as they are).
    ///   - say: tells the session's user something (a rule made again).
    public init(plan: HostRoutingPlan, serverPorts: @escaping @Sendable (ServerReplyPorts) -> ServerReplyPorts? = { _ in nil },
                say: @escaping @Sendable (String) -> Void = { _ in }) {
        self.plan = plan
        self.say = say
        self.readServerPorts = serverPorts
        self.serverPortsNow = Mutex(plan.serverPorts)
    }

    /// The server ports the rules were last made for.
    public var currentServerPorts: ServerReplyPorts { serverPortsNow.withLock { $0 } }
    /// Times one of the plan's rules was found gone and made again since `start`.
    public var rulesRemadeCount: Int { rulesRemade.withLock { $0 } }
    /// Whether `ip monitor route` ended (killed): changes are then found by the periodic
    /// comparison alone, within `checkSeconds`.
    public var monitorHasEnded: Bool { monitorEnded.withLock { $0 } }

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

    /// Whether a line of `ip monitor route` adds one of main's wide routes (`MainTableWideRoutes`:
    /// `0.0.0.0/1 via …`, `unreachable 64.0.0.0/2`; not a deletion, not another table's). Pure.
    public static func addsMainWideRoute(_ line: Substring) -> Bool {
        var words = line.split(separator: " ")
        if words.first == "Deleted" || words.contains("table") { return false }
        if let first = words.first, ["unicast", "unreachable", "blackhole", "prohibit", "throw"].contains(first) { words.removeFirst() }
        guard let prefix = words.first, let slash = prefix.firstIndex(of: "/"), let length = Int(prefix[prefix.index(after: slash)...]) else { return false }
        return length > 0 && length <= MainTableWideRoutes.longestWidePrefix(isIPv6: prefix.contains(":"))
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
        var monitoring = true
        var lastCheck = DispatchTime.now().uptimeNanoseconds
        var lastServerCheck = lastCheck
        var wideSince: UInt64?
        while !stopping.withLock({ $0 }) {
            if monitoring {
                var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 50) > 0 {
                    let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 {
                        // The monitor ended (killed): the periodic comparison goes on alone.
                        monitoring = false
                        monitorEnded.withLock { $0 = true }
                        continue
                    }
                    buffer += chunk[0..<n]
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        let line = String(decoding: buffer[..<newline], as: UTF8.self)
                        buffer.removeSubrange(...newline)
                        if Self.isAboutMainDefault(Substring(line)) { pendingSince = DispatchTime.now().uptimeNanoseconds }
                        if Self.addsMainWideRoute(Substring(line)) { wideSince = DispatchTime.now().uptimeNanoseconds }
                    }
                }
            } else {
                usleep(50_000)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            if let since = pendingSince, now - since >= UInt64(Self.settleMillis) * 1_000_000 {
                pendingSince = nil
                lastCheck = now
                resync()
            } else if now - lastCheck >= UInt64(Self.checkSeconds * 1_000_000_000) {
                lastCheck = now
                lastServerCheck = now
                resync()
                remakeMissingRules()
                syncServerRules(askingKernel: true)
            }
            if let since = wideSince, now - since >= UInt64(Self.settleMillis) * 1_000_000 {
                wideSince = nil
                sayWideRoutes()
            }
            if now - lastServerCheck >= UInt64(Self.serverCheckSeconds * 1_000_000_000) {
                lastServerCheck = now
                syncServerRules(askingKernel: false)
            }
        }
    }

    /// A wide route was added to main during the session (a VPN connecting with a split
    /// default): what main's wide routes take now is said, as the banner said them at the start
    /// (a trial's VPN took everything mid-session and nothing said so).
    private func sayWideRoutes() {
        let wide = MainTableWideRoutes.described(plan)
        guard !wide.isEmpty else { return }
        say("A route added to main covers much of the address space, and tv leaves main's specific routes in place, so what main's wide routes cover no longer goes through tv: "
            + wide.joined(separator: ", ") + ". A VPN's split default route looks like this.")
    }

    /// Makes again the plan's rules that are gone (`HostRoutingPlan.missingRules`), and says so.
    private func remakeMissingRules() {
        var config = NetworkConfigurator()
        for family in plan.families {
            guard let (code, json) = try? ChildProcess.run(["ip", "-j", family, "rule", "show"]), code == 0 else { continue }
            let missing = plan.missingRules(family: family, json: json)
            guard !missing.isEmpty else { continue }
            let refused = missing.filter { !config.tryIP($0) }
            rulesRemade.withLock { $0 += 1 }
            say(plan.missingRulesSentence(family: family, missing: missing, refused: refused, withinSeconds: Int(Self.checkSeconds)))
        }
    }

    /// Reads this host's server ports and changes the server-reply rules where they differ from
    /// the last made (`askingKernel`: from what the kernel holds, read with `ip rule`).
    private func syncServerRules(askingKernel: Bool) {
        let serverPorts = currentServerPorts
        guard let wanted = readServerPorts(serverPorts) else { return }
        guard askingKernel || wanted != serverPorts else { return }
        var config = NetworkConfigurator()
        var removedFromOutside = false
        for family in plan.families {
            let fromKernel = askingKernel ? plan.heldServerRules(family: family) : nil
            if let fromKernel, !fromKernel.sameRanges(as: serverPorts) { removedFromOutside = true }
            let held = fromKernel ?? serverPorts
            for command in plan.serverRuleChanges(family: family, held: held, wanted: wanted) { _ = config.tryIP(command) }
        }
        if removedFromOutside {
            rulesRemade.withLock { $0 += 1 }
            say("tv's rules for this host's servers' replies were changed from outside (a network manager, or by hand): made again; "
                + "until then those servers' replies to clients beyond the LAN went into the TUN, for up to \(Int(Self.checkSeconds)) s")
        }
        if wanted.leftOut > 0 && wanted.leftOut != serverPorts.leftOut, let summary = wanted.summary {
            say("This host's servers now listen on more ports than tv gives rules: " + summary)
        }
        serverPortsNow.withLock { $0 = wanted }
    }

    /// Compares what U holds with main's default routes (and U's last resort) per family, and
    /// changes U where they differ (`HostRoutingPlan.copyChanges`).
    private func resync() {
        var config = NetworkConfigurator()
        for family in plan.families {
            let wanted = HostRoutingPlan.copyTableRoutes(MainTableRoutes.readDefaults(family: family, excludingDevice: plan.device).routes)
            let held = MainTableRoutes.readDefaults(family: family, table: String(plan.copyTable), excludingDevice: plan.device).routes
            let changes = plan.copyChanges(family: family, held: held, wanted: wanted)
            guard !changes.isEmpty else { continue }
            for command in changes { _ = config.tryIP(command) }
            resyncs.withLock { $0 += 1 }
        }
    }
}
