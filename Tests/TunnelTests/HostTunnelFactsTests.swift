import Testing
@testable import Tunnel

/// sysctl(8)'s keys for interface names with a dot (a VLAN's `eth0.100`).
@Suite struct SysctlKeyTests {
    @Test("an interface's dot is a slash in the key and a dot in the path; the key's own dots are path separators")
    func dottedInterface() {
        #expect(NetworkConfigurator.interfaceKey("ipv4", "eth0.100", "rp_filter") == "net.ipv4.conf.eth0/100.rp_filter")
        #expect(NetworkConfigurator.path("net.ipv4.conf.eth0/100.rp_filter") == "/proc/sys/net/ipv4/conf/eth0.100/rp_filter")
        #expect(NetworkConfigurator.path(NetworkConfigurator.interfaceKey("ipv6", "tv0", "accept_ra")) == "/proc/sys/net/ipv6/conf/tv0/accept_ra")
    }
}

/// Main's wide routes (`MainTableWideRoutes`), from iproute2 6.1's JSON of a namespace holding
/// an OpenVPN-style split default, a /8, an unreachable /2, the default, and IPv6's 2000::/3 and ::/1.
@Suite struct MainTableWideRoutesTests {
    static let ipv4 = #"[{"dst":"0.0.0.0/1","gateway":"10.8.0.1","dev":"vpn0","flags":["linkdown"]},{"dst":"default","gateway":"10.8.0.1","dev":"vpn0","metric":5,"flags":["linkdown"]},{"dst":"10.0.0.0/8","gateway":"10.8.0.1","dev":"vpn0","flags":["linkdown"]},{"dst":"10.8.0.0/24","dev":"vpn0","protocol":"kernel","scope":"link","prefsrc":"10.8.0.2","flags":["linkdown"]},{"type":"unreachable","dst":"64.0.0.0/2","flags":[]},{"dst":"128.0.0.0/1","gateway":"10.8.0.1","dev":"vpn0","flags":["linkdown"]}]"#
    static let ipv6 = #"[{"dst":"2000::/3","dev":"vpn0","metric":1024,"flags":["linkdown"],"pref":"medium"},{"dst":"::/1","dev":"vpn0","metric":1024,"flags":["linkdown"],"pref":"medium"},{"dst":"fd08::/64","dev":"vpn0","protocol":"kernel","metric":256,"flags":["linkdown"],"pref":"medium"}]"#

    @Test("IPv4 /1 to /7 and IPv6 /1 to /15 are wide, whatever their type; the default, a /8 and the TUN's own are not")
    func wide() {
        #expect(MainTableWideRoutes.find(json: Self.ipv4, excludingDevice: "tv0")
                == ["0.0.0.0/1 via 10.8.0.1 dev vpn0", "unreachable 64.0.0.0/2", "128.0.0.0/1 via 10.8.0.1 dev vpn0"])
        #expect(MainTableWideRoutes.find(json: Self.ipv6, excludingDevice: "tv0") == ["2000::/3 dev vpn0", "::/1 dev vpn0"])
        #expect(MainTableWideRoutes.find(json: Self.ipv6, excludingDevice: "vpn0").isEmpty)
        #expect(MainTableWideRoutes.find(json: "{", excludingDevice: "tv0").isEmpty)
    }
}

/// The plan's three rules read back from `ip -j rule show` (iproute2 6.1, a namespace holding
/// them), to make again those removed from outside.
@Suite struct MissingRulesTests {
    static let all = #"[{"priority":0,"src":"all","table":"local"},{"priority":32763,"src":"all","table":"main","suppress_prefixlen":0,"suppress_ifgroup":"29814"},{"priority":32764,"src":"all","fwmark":"0x7476","table":"29815"},{"priority":32765,"not":null,"src":"all","fwmark":"0x7476","table":"29814"},{"priority":32766,"src":"all","table":"main"},{"priority":32767,"src":"all","table":"default"}]"#
    static let tunOnly = #"[{"priority":0,"src":"all","table":"local"},{"priority":32765,"not":null,"src":"all","fwmark":"0x7476","table":"29814"},{"priority":32766,"src":"all","table":"main"}]"#
    /// wg-quick's rules at the same priorities are not tv's: `not` at 32764, no `not` at 32765.
    static let lookalikes = #"[{"priority":32763,"src":"all","table":"main","suppress_prefixlen":0},{"priority":32764,"not":null,"src":"all","fwmark":"0x7476","table":"29815"},{"priority":32765,"src":"all","fwmark":"0x7476","table":"29814"}]"#

    @Test("none missing when all three are there; the ones gone, in apply's order; look-alikes do not count; an unreadable listing lacks nothing")
    func missing() {
        let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        #expect(plan.missingRules(family: "-4", json: Self.all).isEmpty)
        #expect(plan.missingRules(family: "-6", json: Self.tunOnly) == [
            ["-6", "rule", "add", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", "29814", "pref", "32763"],
            ["-6", "rule", "add", "fwmark", "0x7476", "table", "29815", "pref", "32764"],
        ])
        #expect(plan.missingRules(family: "-4", json: Self.lookalikes).map { $0[3] } == ["fwmark", "not"])
        #expect(plan.missingRules(family: "-4", json: "").isEmpty)
    }
}

@Suite struct MissingRulesSentenceTests {
    @Test("each rule as ip rule takes it, and what its absence did; a refusal says what goes on")
    func sentences() {
        let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        let rules = plan.ruleAdditions(family: "-4")
        #expect(plan.missingRulesSentence(family: "-4", missing: [rules[2]], refused: [], withinSeconds: 10)
                == "tv's IPv4 policy rule `not fwmark 0x7476 table 29814 pref 32765` was removed from outside (a network manager reconfiguring a link, or by hand): "
                + "made again; until then (up to 10 s) traffic went around tv, unseen")
        let six = plan.ruleAdditions(family: "-6")
        #expect(plan.missingRulesSentence(family: "-6", missing: [six[0], six[1]], refused: [six[1]], withinSeconds: 10)
                == "tv's IPv6 policy rules `table main suppress_prefixlength 0 suppress_ifgroup 29814 pref 32763`, `fwmark 0x7476 table 29815 pref 32764` were removed from outside "
                + "(a network manager reconfiguring a link, or by hand): the kernel refused to make `fwmark 0x7476 table 29815 pref 32764` again, "
                + "so tv's own connections take main's routes until it is back")
    }
}
