import CTVShims
import FlowTerms
import Foundation
import Proxy
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// `--mode tun` options: the device, the routing table and rule priorities, the mark.
public struct HostTunnelOptions: Sendable {
    public var deviceName = "tv0"
    /// The routing table holding the TUN's default route (the next one holds tv's own sockets'
    /// copy of main's default routes), and the mark that keeps tv's own sockets out of the TUN
    /// (`HostRoutingPlan`); 0x7476 is "tv".
    public var table: UInt32 = 0x7476
    public var mark: UInt32 = 0x7476
    public var mtu: Int?
    /// Ports whose sent traffic leaves by main's default routes for the whole session, bound
    /// or not (`--server-ports`): a UDP server in the ephemeral range gets no rule otherwise.
    public var serverPorts = DeclaredServerPorts()
    /// Print the routing changes without making them.
    public var dryRun = false
    public init() {}

    /// The address plan for these options.
    public var plan: TunnelAddressPlan {
        var plan = TunnelAddressPlan()
        plan.deviceName = deviceName
        plan.mtu = mtu ?? EgressMTU.current(mark: mark)
        return plan
    }

    /// What stays outside the TUN, said with the changes (the dry run, the question before them).
    public static let outsideSentence = "LAN and connected routes keep going direct, as the main table routes them while tv runs; tv's own connections leave through a copy of main's default routes, kept in step with it, and so does what this host sends from its servers' ports (their replies, and anything else sent from those ports; the ports followed while tv runs), so connections to them from beyond the LAN go on, unseen."

    /// Everything `--mode tun` will change, as commands (what `--dry-run` prints and the prompt shows).
    public var changeLines: [String] {
        let plan = self.plan
        var lines = ["ip tuntap: open \(plan.deviceName) (IFF_TUN, gone when tv exits)",
                     "ip link set dev \(plan.deviceName) mtu \(plan.mtu) txqueuelen \(plan.txQueueLength) group \(table)",
                     "ip addr add \(plan.cidr4) dev \(plan.deviceName)"]
        if let cidr6 = plan.cidr6 { lines.append("ip -6 addr add \(cidr6) dev \(plan.deviceName) nodad") }
        lines.append("ip link set dev \(plan.deviceName) up")
        lines += routing(for: plan).applyLines
        lines.append("sysctl -w net.ipv4.conf.all.rp_filter=2   (only if it is 1: strict filtering drops replies to tv's marked sockets; restored at exit)")
        let strict = HostTunnelClaim.interfacesToLoosen(HostTunnel.rpFilterValues(), tun: plan.deviceName)
        if !strict.isEmpty {
            lines.append("sysctl -w " + strict.map { NetworkConfigurator.rpFilterKey($0) + "=2" }.joined(separator: " ") + "   (strict now; restored at exit)")
        }
        return lines
    }

    /// What the policy rules already here would take before tv's (`HostRoutingPlan.rulesAhead`),
    /// as one sentence; nil when none would.
    public static func rulesAheadSentence(_ routing: HostRoutingPlan) -> String? {
        var ahead: [String] = []
        for family in routing.families {
            guard let (code, listing) = try? ChildProcess.run(["ip", family, "rule", "show"]), code == 0 else { continue }
            ahead += routing.rulesAhead(in: listing).map { "`\($0)` (\(HostRoutingPlan.familyName(family)))" }
        }
        guard !ahead.isEmpty else { return nil }
        return "Policy rules ahead of tv's take what they match first, and it does not go through tv: " + ahead.joined(separator: ", ")
            + ". A VPN's rules look like this; stop the VPN first to see that traffic, or expect it to be missing."
    }

    /// What main's wide routes would take before tv's TUN (`MainTableWideRoutes`), as one
    /// sentence; nil when there are none.
    public static func wideRoutesSentence(_ routing: HostRoutingPlan) -> String? {
        let wide = MainTableWideRoutes.described(routing)
        guard !wide.isEmpty else { return nil }
        return "Routes in main cover much of the address space, and tv leaves main's specific routes in place, so what they cover does not go through tv: "
            + wide.joined(separator: ", ") + ". A VPN's split default route looks like this; stop the VPN first to see that traffic, or expect it to be missing."
    }

    /// What the ports named with `--server-ports` mean for `routing` (`DeclaredServerPorts.sentence`,
    /// with this namespace's ephemeral range), for the dry run, the question and the banner; nil
    /// when none is named.
    public func serverPortsSentence(_ routing: HostRoutingPlan) -> String? {
        serverPorts.sentence(copyTable: routing.copyTable, ephemeral: ServerReplyPorts.readEphemeralRange())
    }

    /// What the dry run and the question say after the changes, for `routing`: what the ports
    /// named with `--server-ports` mean, the policy rules ahead of tv's, main's wide routes.
    public func routingNotes(_ routing: HostRoutingPlan) -> [String] {
        [serverPortsSentence(routing).map { $0 + "." }, Self.rulesAheadSentence(routing), Self.wideRoutesSentence(routing)].compactMap { $0 }
    }

    /// The routing plan for `plan`'s device, with main's default routes as they are now
    /// (`MainTableRoutes`), and the server ports found now with those named.
    public func routing(for plan: TunnelAddressPlan) -> HostRoutingPlan {
        var routing = HostRoutingPlan(device: plan.deviceName, table: table, mark: mark, ipv6: plan.address6 != nil)
        routing.defaults4 = MainTableRoutes.readDefaults(family: "-4", excludingDevice: plan.deviceName).routes
        if routing.ipv6 { routing.defaults6 = MainTableRoutes.readDefaults(family: "-6", excludingDevice: plan.deviceName).routes }
        routing.serverPorts = ServerReplyPorts.read(excluding: plan.holds, declared: serverPorts) ?? ServerReplyPorts(declared: serverPorts)
        return routing
    }
}

/// The whole host through a TUN (tun-nat.md shape B): the device in this namespace, policy
/// routing that sends everything unmarked into it, the engine whose upstream sockets are marked.
/// Stale rules of a crashed run (same table and priorities) are cleared first; `stop()` removes
/// everything and restores rp_filter (SIGINT/SIGTERM reach it through `Session.run`).
final class HostTunnel: Sendable {
    let deviceName: String
    let listenDescription: String
    let summary: [String]
    private let tunFD: Int32
    private let listeners: TunnelListeners
    private let engine: TunnelEngine
    private let routing: HostRoutingPlan
    /// Keeps tv's own sockets' copy of main's default routes in step with main.
    private let defaults: MainDefaultRouteWatcher
    private let restoreRPFilter: String?
    /// Interfaces whose rp_filter this session loosened from 1 (restored at exit).
    private let loosenedRPFilters: [String]
    private let claim: HostTunnelClaim
    private let names: HostNameRecorder
    /// What the ports named with `--server-ports` mean (`HostTunnelOptions.serverPortsSentence`),
    /// for `tv status`; nil when none was named.
    private let serverPortsSentence: String?

    var counters: [String: UInt64] { engine.counters.snapshot }

    /// The routing as it stands, for `tv status` (`HostRoutingStatus`): the copy table and what
    /// it holds now per family (read with `ip`), how often it was made again, whether `ip
    /// monitor route` still runs, and the server ports whose replies it carries (those named with
    /// `--server-ports` said apart).
    var routingValues: [String: String] {
        var values: [String: String] = ["routing.copyTable": String(routing.copyTable),
                                        "routing.copyRemade": String(defaults.resyncCount),
                                        "routing.rulesRemade": String(defaults.rulesRemadeCount),
                                        "routing.monitorEnded": defaults.monitorHasEnded ? "1" : "0",
                                        "routing.serverPorts": defaults.currentServerPorts.summary ?? "",
                                        "routing.ephemeralUDP": defaults.currentServerPorts.ephemeralSentence ?? "",
                                        "routing.serverPortsNamed": serverPortsSentence ?? ""]
        for family in routing.families {
            let held = MainTableRoutes.readDefaults(family: family, table: String(routing.copyTable), excludingDevice: deviceName).routes
            values["routing.copy" + (family == "-4" ? "4" : "6")] = held.filter { $0 != HostRoutingPlan.lastResort }
                .map { $0.arguments.joined(separator: " ") }.joined(separator: "; ")
        }
        return values
    }

    /// - Parameter recorder: the packet capture (nil: none).
    /// - Parameter dataFolder: the session's, named to a second session this one refuses.
    /// - Parameter tcpDNSAnswers: the responses the proxy's relays read from DNS over TCP
    ///   (`ProxyConfiguration.dnsAnswers`), for the engine's names.
    init(options: HostTunnelOptions, proxy: ProxyServer, wiring: SessionWiring, recorder: (any PacketRecorder)?, dataFolder: String,
         tcpDNSAnswers: TCPDNSAnswers? = nil, say: @escaping @Sendable (String) -> Void) throws {
        let missing = Privileges.missing([Privileges.netAdmin])
        guard missing.isEmpty else { throw TunnelError.needsPrivileges(command: "tv run --mode tun", missing: missing.joined(separator: " and "), purpose: "to make a TUN device and route this host's traffic through it") }
        var plan = options.plan
        var routing = options.routing(for: plan)
        var config = NetworkConfigurator()
        // One whole-host session per namespace: a second one took the first's routing and, when
        // it stopped, removed it under the first (a trial).
        let claim = try HostTunnelClaim.acquire()
        // A killed run may have left its rules (the TUN itself went with the process); with the
        // claim held, none of them is a live session's. A record whose rule is not here is about
        // another namespace that had this one's inode number: nothing of it applies.
        let left = claim.left.flatMap { HostTunnelClaim.isHere($0) ? $0 : nil }
        if let left {
            HostRoutingPlan(device: left.device, table: left.table, mark: left.mark, ipv6: true).remove(using: &config)
            // Said, as another mode's session says it (a trial's `--mode tun` cleared them silently).
            say("a tv run --mode tun (pid \(left.pid), data folder \(left.dataFolder)) that was killed had left its routing rules; removed them before making this session's")
        }
        routing.remove(using: &config)

        let (fd, name, offload) = TUNDevice.open(name: plan.deviceName)
        guard fd >= 0 else {
            claim.release()
            throw TunnelError.cannotOpenTUN(reason: String(decoding: Array(UnsafeBufferPointer(start: strerror(-fd), count: strlen(strerror(-fd)))).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        if let reason = offload.unavailableReason { say("the TUN runs without checksum offload (\(reason)); traffic still flows, with more CPU per byte") }
        var uncopied: [String] = []
        var unruled: [String] = []
        var rpFilter: String?
        var loosened: [String] = []
        func undoAll() {
            routing.remove(using: &config)
            if let rpFilter { config.sysctl("net.ipv4.conf.all.rp_filter", rpFilter) }
            for name in loosened { config.sysctl(NetworkConfigurator.rpFilterKey(name), "1") }
            close(fd)
            claim.release()
        }
        do {
            plan.deviceName = name
            let dev = plan.deviceName
            config.sysctl(NetworkConfigurator.interfaceKey("ipv6", dev, "accept_ra"), "0")
            config.sysctl(NetworkConfigurator.interfaceKey("ipv6", dev, "router_solicitations"), "0")
            // The device's interface group is the table's number: main's routes through it are
            // suppressed for every lookup (`HostRoutingPlan`), so tv's own sockets never follow
            // one back into it.
            try config.ip(["link", "set", "dev", dev, "mtu", String(plan.mtu), "txqueuelen", String(plan.txQueueLength), "group", String(routing.table)])
            try config.ip(["addr", "add", plan.cidr4, "dev", dev])
            if let cidr6 = plan.cidr6, !config.tryIP(["-6", "addr", "add", cidr6, "dev", dev, "nodad"]) { plan.address6 = nil }
            try config.ip(["link", "set", "dev", dev, "up"])
            routing.ipv6 = plan.address6 != nil
            for step in routing.apply {
                switch step.mayFail {
                case nil: try config.ip(step.arguments)
                case .cacheFlush?: _ = config.tryIP(step.arguments)
                case .copy?, .lastResort?:
                    if !config.tryIP(step.arguments) { uncopied.append(step.arguments.joined(separator: " ")) }
                case .serverReplies?:
                    if !config.tryIP(step.arguments) { unruled.append(step.arguments.joined(separator: " ")) }
                }
            }
            // Strict reverse-path filtering drops the replies to marked sockets (tun-nat.md):
            // loose (2) is enough; the effective value is max(all, device). A killed session's
            // loosening is kept for this one and undone at its exit.
            let rp = HostTunnelClaim.rpFilterPlan(current: NetworkConfigurator.read("net.ipv4.conf.all.rp_filter"), left: left)
            if rp.set { config.sysctl("net.ipv4.conf.all.rp_filter", "2") }
            rpFilter = rp.restore
            // The effective value is the larger of `all` and the interface's: a strict one
            // loosened too (a trial's eth0 at 1 under `all` at 0 dropped every IPv4 reply).
            loosened = HostTunnelClaim.interfacesToLoosen(HostTunnel.rpFilterValues(), tun: dev)
            for name in loosened { config.sysctl(NetworkConfigurator.rpFilterKey(name), "2") }
            loosened += left?.rpFilterLoosened?.filter { NetworkConfigurator.read(NetworkConfigurator.rpFilterKey($0)) == "2" && !loosened.contains($0) } ?? []
            claim.record(HostTunnelClaim.Record(pid: getpid(), dataFolder: dataFolder, device: dev, table: routing.table,
                                                mark: routing.mark, rpFilterWas: rpFilter, rpFilterLoosened: loosened.isEmpty ? nil : loosened))
            listeners = try TunnelListeners.open(plan: plan)
        } catch {
            undoAll()
            throw error
        }
        tunFD = fd
        self.claim = claim
        self.routing = routing
        restoreRPFilter = rpFilter
        loosenedRPFilters = loosened
        deviceName = plan.deviceName
        names = HostNameRecorder(hostNames: wiring.store.hostNames)
        var engineConfig = TunnelEngineConfiguration(plan: plan, listener4: listeners.v4, listener6: listeners.v6)
        engineConfig.mark = options.mark
        engineConfig.servesDNSAddress = false
        engineConfig.refusesTunnelNetwork = true
        engineConfig.tcpDNSAnswers = tcpDNSAnswers
        // The resolvers resolv.conf names: a query to one is the system resolver's, any other
        // server was asked directly (`DNSServerAsked`); with servesDNSAddress off nothing is routed by them.
        engineConfig.resolvers = ResolvConf.nameservers()
        engine = TunnelEngine(configuration: engineConfig, tunFD: fd, offload: offload, proxy: proxy, sink: wiring.configuration.flowSink, dnsObserver: names.observer,
                              recorder: recorder)
        let addresses = plan, declared = options.serverPorts
        // The named ports stay in every reading, so no rule of theirs goes while the session runs.
        defaults = MainDefaultRouteWatcher(plan: routing, serverPorts: { ServerReplyPorts.read(excluding: addresses.holds, declared: declared, previous: $0) },
                                           say: say)
        do {
            try engine.start()
            try defaults.start()
        } catch {
            defaults.stop()
            engine.stop()
            listeners.close()
            undoAll()
            throw error
        }
        listenDescription = "\(plan.deviceName) (\(plan.cidr4)\(plan.cidr6.map { ", " + $0 } ?? ""))"
        var lines: [String] = ["Everything this host sends to a default-routed address now goes through \(plan.deviceName) (LAN and connected routes do not):"]
        for line in routing.applyLines { lines.append("  " + line) }
        if !uncopied.isEmpty {
            lines.append("  (the kernel refused `ip " + uncopied.joined(separator: "`, `ip ") + "`: tv's own connections use main's default route itself until the copy is made again)")
        }
        if !unruled.isEmpty {
            lines.append("  (the kernel refused `ip " + unruled.joined(separator: "`, `ip ") + "`: those servers' replies to clients beyond the LAN go into the TUN until it takes them; tv asks again)")
        }
        if rpFilter != nil {
            lines.append(left?.rpFilterWas == nil
                ? "  sysctl -w net.ipv4.conf.all.rp_filter=2 (was 1; restored at exit)"
                : "  net.ipv4.conf.all.rp_filter is 2, left by a tv session that was killed (it was 1): restored to 1 at exit")
        }
        if !loosened.isEmpty {
            lines.append("  sysctl -w " + loosened.map { NetworkConfigurator.rpFilterKey($0) + "=2" }.joined(separator: " ") + " (was 1; restored at exit)")
        }
        lines.append("tv's own connections are marked \(routing.markText) and bypass it, through table \(routing.copyTable), kept in step with main's default routes. Stopping tv removes all of this.")
        lines.append("What this host sends from its servers' ports leaves through table \(routing.copyTable) too, unseen by tv (their replies, and anything else sent from those ports), "
            + "so connections to them from beyond the LAN go on: " + (routing.serverPorts.summary.map { $0 + " now" } ?? "none listens now")
            + "; servers that start or stop while tv runs are followed within \(Int(MainDefaultRouteWatcher.serverCheckSeconds)) s.")
        serverPortsSentence = options.serverPortsSentence(routing)
        if let named = serverPortsSentence { lines.append(named + ".") }
        if let ephemeral = routing.serverPorts.ephemeralSentence { lines.append(ephemeral + ".") }
        if let ahead = HostTunnelOptions.rulesAheadSentence(routing) { lines.append(ahead) }
        if let wide = HostTunnelOptions.wideRoutesSentence(routing) { lines.append(wide) }
        summary = lines
    }

    /// What a killed `tv run --mode tun` left in this namespace (its policy rules and tables per
    /// family, and rp_filter at 2), removed by the next session in any mode, said once; nothing
    /// when none was killed, a whole-host session is live, or tv lacks CAP_NET_ADMIN (a trial's
    /// rules stayed, unmentioned, until the next whole-host session).
    static func repairLeftovers(say: (String) -> Void) {
        guard Privileges.missing([Privileges.netAdmin]).isEmpty, let claim = HostTunnelClaim.leftByKilledSession(),
              let left = claim.left else { return }
        // Its rule is not here: another namespace's record (an inode number reused), or removed
        // by hand; either way nothing of it is this session's to undo, and the record goes.
        guard HostTunnelClaim.isHere(left) else {
            claim.release()
            return
        }
        var config = NetworkConfigurator()
        HostRoutingPlan(device: left.device, table: left.table, mark: left.mark, ipv6: true).remove(using: &config)
        var restored: String?
        var interfaces: [String] = []
        for name in left.rpFilterLoosened ?? [] where NetworkConfigurator.read(NetworkConfigurator.rpFilterKey(name)) == "2" {
            config.sysctl(NetworkConfigurator.rpFilterKey(name), "1")
            interfaces.append(name)
        }
        if let was = left.rpFilterWas, NetworkConfigurator.read("net.ipv4.conf.all.rp_filter") == "2" {
            config.sysctl("net.ipv4.conf.all.rp_filter", was)
            restored = was
        }
        claim.release()
        // Each interface it loosened is named too (a trial's sentence named `all` alone).
        let each = interfaces.isEmpty ? "" : " (and to 1 on " + interfaces.joined(separator: ", ") + ")"
        say("a tv run --mode tun (pid \(left.pid), data folder \(left.dataFolder)) that was killed had left its routing rules"
            + (restored.map { " and net.ipv4.conf.all.rp_filter at 2; removed them and restored rp_filter to \($0)" + each }
               ?? (interfaces.isEmpty ? "; removed them" : "; removed them and restored rp_filter to 1 on " + interfaces.joined(separator: ", "))))
    }

    /// `net.ipv4.conf.NAME.rp_filter` of every NAME under /proc/sys (this namespace's).
    static func rpFilterValues() -> [String: String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/sys/net/ipv4/conf")) ?? []
        var values: [String: String] = [:]
        for name in names { values[name] = NetworkConfigurator.read(NetworkConfigurator.rpFilterKey(name)) }
        return values
    }

    /// Removes the routing, restores rp_filter, stops the engine, closes the TUN. Safe twice.
    func stop() {
        engine.stop()
        defaults.stop()
        var config = NetworkConfigurator()
        routing.remove(using: &config)
        if let restoreRPFilter { config.sysctl("net.ipv4.conf.all.rp_filter", restoreRPFilter) }
        for name in loosenedRPFilters { config.sysctl(NetworkConfigurator.rpFilterKey(name), "1") }
        listeners.close()
        close(tunFD)
        claim.release()
        names.flush()
    }
}
