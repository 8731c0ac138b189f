import Testing
import ProgramLookup
#if canImport(Glibc)
import Glibc
#endif
@testable import Tunnel

/// `--mode tun`'s server-reply rules (`ServerReplyPorts`): which sockets are this host's
/// servers, the rules made, read back from iproute2 6.1's JSON, and changed.
@Suite struct ServerReplyRulesTests {
    static func entry(_ proto: Int, _ address: [UInt8], _ port: UInt16) -> ServingSockets.Entry {
        ServingSockets.Entry(proto: UInt8(proto), socket: DiagSocket(family: address.count == 4 ? 2 : 10, state: proto == IPPROTO_TCP ? 10 : 7,
                                                                     source: address, sourcePort: port, destination: [UInt8](repeating: 0, count: address.count),
                                                                     destinationPort: 0, uid: 0, inode: 1))
    }
    static let any4: [UInt8] = [0, 0, 0, 0]
    static let any6 = [UInt8](repeating: 0, count: 16)

    @Test("servers: TCP listeners and UDP sockets below the ephemeral range, on any address but loopback and the TUN's networks; ports merged into ranges")
    func servers() {
        let plan = TunnelAddressPlan()
        let sockets: [ServingSockets.Entry] = [
            Self.entry(IPPROTO_TCP, Self.any4, 22),
            Self.entry(IPPROTO_TCP, Self.any6, 22),                                          // the same port in IPv6: once
            Self.entry(IPPROTO_TCP, [10, 203, 0, 1], 8000), Self.entry(IPPROTO_TCP, Self.any6, 8001), Self.entry(IPPROTO_TCP, Self.any4, 8002),
            Self.entry(IPPROTO_TCP, [127, 0, 0, 1], 8080),                                   // loopback: no far client
            Self.entry(IPPROTO_TCP, [UInt8](repeating: 0, count: 15) + [1], 9090),           // ::1
            Self.entry(IPPROTO_TCP, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 53], 5353), // ::ffff:127.0.0.53
            Self.entry(IPPROTO_TCP, [10, 77, 0, 1], 40_000),                                 // tv's own listener on the TUN
            Self.entry(IPPROTO_TCP, [0xfd, 0x77] + [UInt8](repeating: 0, count: 13) + [1], 40_001),
            Self.entry(IPPROTO_UDP, Self.any4, 51_820), Self.entry(IPPROTO_UDP, Self.any6, 53),
            Self.entry(IPPROTO_UDP, Self.any4, 32_767),
            Self.entry(IPPROTO_UDP, Self.any4, 32_768),                                      // a client's socket
            Self.entry(IPPROTO_UDP, Self.any4, 0),
        ]
        let ports = ServerReplyPorts(sockets, ephemeralStart: 32_768, excluding: plan.holds)
        #expect(ports.tcp == [22...22, 8000...8002])
        #expect(ports.udp == [53...53, 32_767...32_767])
        #expect(ports.summary == "TCP 22, 8000-8002; UDP 53, 32767")
        #expect(ports.ephemeralUDP == [32_768, 51_820])
        #expect(ports.ephemeralSentence == "UDP sockets bound in the ephemeral range (32768, 51820) are taken for clients' and given no rule: "
                + "a server among them (WireGuard, mosh) is not reachable from beyond the LAN while tv runs; "
                + "name the servers' ports among them when tv starts to keep them reachable: --server-ports udp:32768,udp:51820")
        // A narrowed ephemeral range moves the UDP bound.
        #expect(ServerReplyPorts(sockets, ephemeralStart: 60_000, excluding: plan.holds).udp == [53...53, 32_767...32_768, 51_820...51_820])
        #expect(ServerReplyPorts([], ephemeralStart: 32_768, excluding: plan.holds).summary == nil)
        #expect(ServerReplyPorts.ranges([65_535, 65_534, 1, 3]) == [1...1, 3...3, 65_534...65_535])
        // At most 64 ranges per protocol, the lowest ports first; the rest counted and said.
        let many = (0..<70).map { Self.entry(IPPROTO_TCP, Self.any4, UInt16(1_000 + 2 * $0)) } + [Self.entry(IPPROTO_TCP, Self.any4, 1_141)]
        let capped = ServerReplyPorts(many, ephemeralStart: 32_768, excluding: plan.holds)
        #expect(capped.tcp.count == 64 && capped.tcp.last == 1_126...1_126 && capped.leftOut == 7)
        #expect(capped.summary?.hasSuffix("; 7 more ports given no rule (at most 64 ranges per protocol): their replies to clients beyond the LAN go into the TUN") == true)
    }

    @Test("ports named with --server-ports: ruled bound or not, merged with those found, no longer said as ephemeral, first under the cap; a reading without their socket keeps their rules")
    func declaredPorts() throws {
        let plan = TunnelAddressPlan()
        let declared = try DeclaredServerPorts(parsing: ["udp:51820,udp:60000-61000,tcp:8443,tcp:23"])
        let sockets: [ServingSockets.Entry] = [
            Self.entry(IPPROTO_TCP, Self.any4, 22), Self.entry(IPPROTO_UDP, Self.any4, 53),
            Self.entry(IPPROTO_UDP, Self.any4, 51_820),                                      // WireGuard, named
            Self.entry(IPPROTO_UDP, Self.any4, 40_000),                                      // a client's socket, or an unnamed server
        ]
        let ports = ServerReplyPorts(sockets, ephemeralStart: 32_768, excluding: plan.holds, declared: declared)
        #expect(ports.tcp == [22...23, 8443...8443])                                         // 22 found and 23 named: one rule
        #expect(ports.udp == [53...53, 51_820...51_820, 60_000...61_000])
        #expect(ports.ephemeralUDP == [40_000])
        #expect(ports.summary == "TCP 22-23, 8443; UDP 53, 51820, 60000-61000")
        #expect(ports.ephemeralSentence?.hasSuffix("to keep them reachable: --server-ports udp:40000") == true)
        // No server bound there (or sock_diag unreadable): the named ports alone.
        let alone = ServerReplyPorts([], ephemeralStart: 32_768, excluding: plan.holds, declared: declared)
        #expect(alone == ServerReplyPorts(tcp: [23...23, 8443...8443], udp: [51_820...51_820, 60_000...61_000]))
        #expect(ServerReplyPorts(declared: declared) == alone)
        // The watcher's next reading after WireGuard and the client stopped changes no rule (51820
        // is named); with every server gone, only the found ports' rules go.
        var plan4 = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: false)
        let later = ServerReplyPorts(Array(sockets.prefix(2)), ephemeralStart: 32_768, excluding: plan.holds, declared: declared)
        #expect(plan4.serverRuleChanges(family: "-4", held: ports, wanted: later).isEmpty)
        #expect(plan4.serverRuleChanges(family: "-4", held: ports, wanted: alone) == [
            ["-4", "rule", "add", "ipproto", "tcp", "sport", "23", "table", "29815", "pref", "32764"],
            ["-4", "rule", "del", "ipproto", "tcp", "sport", "22-23", "table", "29815", "pref", "32764"],
            ["-4", "rule", "del", "ipproto", "udp", "sport", "53", "table", "29815", "pref", "32764"],
        ])
        // Made at the start with the plan's other rules.
        plan4.serverPorts = alone
        #expect(plan4.applyLines.contains("ip -4 rule add ipproto udp sport 60000-61000 table 29815 pref 32764")
                && plan4.applyLines.contains("ip -4 rule add ipproto udp sport 51820 table 29815 pref 32764"))
        // Under the cap of 64 ranges, the named ones go first, then the lowest found; the rest said.
        let many = (0..<70).map { Self.entry(IPPROTO_TCP, Self.any4, UInt16(1_000 + 2 * $0)) }
        let capped = ServerReplyPorts(many, ephemeralStart: 32_768, excluding: plan.holds, declared: DeclaredServerPorts(tcp: [30_000...30_000, 2_000...2_001]))
        #expect(capped.tcp.count == 64 && capped.tcp.first == 1_000...1_000 && capped.tcp.suffix(3) == [1_122...1_122, 2_000...2_001, 30_000...30_000])
        #expect(capped.leftOut == 8)
        // A named range that joins found ones counts once.
        let joined = ServerReplyPorts(many, ephemeralStart: 32_768, excluding: plan.holds, declared: DeclaredServerPorts(tcp: [1_001...1_001]))
        #expect(joined.tcp.first == 1_000...1_002 && joined.tcp.count == 64 && joined.leftOut == 69 - 64)
    }

    @Test("the rules: after the marked sockets' rule, before the TUN's, per family, both protocols; never on the plan without servers")
    func applySteps() {
        var plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: false)
        plan.serverPorts = ServerReplyPorts(tcp: [22...22, 8000...8002], udp: [51_820...51_820])
        #expect(plan.apply.suffix(5) == [
            .init(arguments: ["-4", "rule", "add", "fwmark", "0x7476", "table", "29815", "pref", "32764"]),
            .init(arguments: ["-4", "rule", "add", "ipproto", "tcp", "sport", "22", "table", "29815", "pref", "32764"], mayFail: .serverReplies),
            .init(arguments: ["-4", "rule", "add", "ipproto", "tcp", "sport", "8000-8002", "table", "29815", "pref", "32764"], mayFail: .serverReplies),
            .init(arguments: ["-4", "rule", "add", "ipproto", "udp", "sport", "51820", "table", "29815", "pref", "32764"], mayFail: .serverReplies),
            .init(arguments: ["-4", "rule", "add", "not", "fwmark", "0x7476", "table", "29814", "pref", "32765"]),
        ])
        #expect(plan.applyLines.contains("ip -4 rule add ipproto tcp sport 22 table 29815 pref 32764"))
    }

    /// `ip -j rule show table 29815` of iproute2 6.1 after `ip rule add ipproto tcp sport 22
    /// table 29815 pref 32764` and `ip rule add ipproto udp sport 5000-5010 …` in a namespace.
    static let listing = #"[{"priority":32764,"src":"all","fwmark":"0x7476","table":"29815"},{"priority":32764,"src":"all","ipproto":"tcp","sport":22,"table":"29815"},{"priority":32764,"src":"all","ipproto":"udp","sport_start":5000,"sport_end":5010,"table":"29815"},{"priority":32000,"src":"all","ipproto":"tcp","sport":80,"table":"29815"}]"#

    @Test("read back from iproute2's JSON (a single port, a range; another priority's rule is not ours), and the changes: additions first")
    func readAndChange() {
        let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        let held = plan.serverRules(inJSON: Self.listing)
        #expect(held == ServerReplyPorts(tcp: [22...22], udp: [5000...5010]))
        #expect(plan.serverRules(inJSON: "not json") == ServerReplyPorts())
        let wanted = ServerReplyPorts(tcp: [22...22, 443...443], udp: [])
        #expect(plan.serverRuleChanges(family: "-6", held: held, wanted: wanted) == [
            ["-6", "rule", "add", "ipproto", "tcp", "sport", "443", "table", "29815", "pref", "32764"],
            ["-6", "rule", "del", "ipproto", "udp", "sport", "5000-5010", "table", "29815", "pref", "32764"],
        ])
        // A port joining a range: the new range is made before the old one goes.
        #expect(plan.serverRuleChanges(family: "-4", held: ServerReplyPorts(tcp: [22...22]), wanted: ServerReplyPorts(tcp: [22...23])) == [
            ["-4", "rule", "add", "ipproto", "tcp", "sport", "22-23", "table", "29815", "pref", "32764"],
            ["-4", "rule", "del", "ipproto", "tcp", "sport", "22", "table", "29815", "pref", "32764"],
        ])
        #expect(plan.serverRuleChanges(family: "-4", held: wanted, wanted: wanted).isEmpty)
        // The kernel's order is the order of adding: the same rules in another order are the same.
        #expect(ServerReplyPorts(tcp: [5300...5300, 2230...2230]).sameRanges(as: ServerReplyPorts(tcp: [2230...2230, 5300...5300], leftOut: 3)))
        #expect(!ServerReplyPorts(tcp: [2230...2230]).sameRanges(as: ServerReplyPorts(tcp: [2230...2231])))
    }
}
