import Testing
@testable import Tunnel

/// `--mode tun`'s copies of the main table's routes (`MainTableRoutes`) and the routing plan that
/// holds them (`HostRoutingPlan`): exact argument lists from iproute2 6.1's own JSON.
@Suite struct MainTableRoutesTests {
    /// `ip -j -4 route show table main` (iproute2 6.1.0) in a namespace given a default route,
    /// connected networks (one without carrier), a multipath route, blackhole/unreachable/
    /// prohibit/throw routes, a nexthop object's route, an onlink gateway, a route with MTU and
    /// advmss, one with a realm, one with locked metrics, and a route through the TUN.
    static let ipv4 = #"[{"dst":"default","gateway":"10.9.1.254","dev":"d1","flags":[]},{"dst":"10.9.1.0/24","dev":"d1","protocol":"kernel","scope":"link","prefsrc":"10.9.1.1","flags":[]},{"dst":"10.9.3.0/24","dev":"d3","protocol":"kernel","scope":"link","prefsrc":"10.9.3.1","flags":["linkdown"]},{"dst":"10.50.0.0/16","metric":9,"flags":[],"nexthops":[{"gateway":"10.9.1.2","dev":"d1","weight":2,"flags":[]},{"gateway":"10.9.2.2","dev":"d2","weight":1,"flags":[]}]},{"type":"blackhole","dst":"10.66.0.0/16","flags":[]},{"type":"unreachable","dst":"10.67.0.0/16","metric":5,"flags":[]},{"dst":"10.70.0.0/16","nhid":7,"gateway":"10.9.2.3","dev":"d2","flags":[]},{"dst":"10.71.0.0/16","gateway":"10.99.0.1","dev":"d1","flags":["onlink"]},{"dst":"10.72.0.0/16","dev":"d1","scope":"link","flags":[],"metrics":[{"mtu":1400,"advmss":1300}]},{"dst":"10.73.0.0/16","gateway":"10.9.1.3","dev":"d1","flags":[],"flow":{"to":"4"}},{"dst":"10.75.0.0/16","dev":"d1","scope":"link","flags":[],"metrics":[{"mtu":1400,"hoplimit":3,"initcwnd":10,"congestion":"cubic"}]},{"type":"prohibit","dst":"10.76.0.0/16","flags":[]},{"type":"throw","dst":"10.77.0.0/16","flags":[]},{"dst":"10.77.0.0/24","dev":"tv0","protocol":"kernel","scope":"link","prefsrc":"10.77.0.1","flags":[]}]"#

    /// `ip -j -6 route show table main`, the same namespace: an RA-like route with an expiry, a
    /// high-preference route with an MTU, link-local routes on several devices, the default.
    static let ipv6 = #"[{"dst":"fd09:1::/64","dev":"d1","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"fd50::/48","gateway":"fd09:1::2","dev":"d1","metric":1024,"flags":[],"expires":175,"pref":"medium"},{"dst":"fd75::/64","dev":"d1","metric":1024,"flags":[],"metrics":[{"mtu":1400}],"pref":"high"},{"dst":"fe80::/64","dev":"d1","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"fe80::/64","dev":"d2","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"default","gateway":"fd09:1::254","dev":"d1","metric":1024,"flags":[],"pref":"medium"}]"#

    @Test("IPv4: every route but the default and the TUN's, with what routes the traffic the same way")
    func ipv4Copies() {
        let copies = MainTableRoutes.copies(json: Self.ipv4, excludingDevice: "tv0")
        #expect(copies.skipped.isEmpty)
        #expect(copies.routes.map(\.arguments) == [
            ["10.9.1.0/24", "dev", "d1", "scope", "link", "src", "10.9.1.1"],
            ["10.9.3.0/24", "dev", "d3", "scope", "link", "src", "10.9.3.1"],
            ["10.50.0.0/16", "metric", "9", "nexthop", "via", "10.9.1.2", "dev", "d1", "weight", "2", "nexthop", "via", "10.9.2.2", "dev", "d2", "weight", "1"],
            ["blackhole", "10.66.0.0/16"],
            ["unreachable", "10.67.0.0/16", "metric", "5"],
            ["10.70.0.0/16", "via", "10.9.2.3", "dev", "d2"],
            ["10.71.0.0/16", "via", "10.99.0.1", "dev", "d1", "onlink"],
            ["10.72.0.0/16", "dev", "d1", "scope", "link", "mtu", "1400", "advmss", "1300"],
            ["10.73.0.0/16", "via", "10.9.1.3", "dev", "d1"],
            ["10.75.0.0/16", "dev", "d1", "scope", "link", "mtu", "1400"],
            ["prohibit", "10.76.0.0/16"],
            ["throw", "10.77.0.0/16"],
        ])
        #expect(copies.routes[2].arguments(table: "77") == ["10.50.0.0/16", "metric", "9", "table", "77", "nexthop", "via", "10.9.1.2", "dev", "d1", "weight", "2",
                                                             "nexthop", "via", "10.9.2.2", "dev", "d2", "weight", "1"])
        #expect(copies.routes.map(\.destination) == ["10.9.1.0/24", "10.9.3.0/24", "10.50.0.0/16", "10.66.0.0/16", "10.67.0.0/16", "10.70.0.0/16",
                                                     "10.71.0.0/16", "10.72.0.0/16", "10.73.0.0/16", "10.75.0.0/16", "10.76.0.0/16", "10.77.0.0/16"])
    }

    @Test("IPv6: metrics kept, a preference other than medium kept, the expiry and protocol not")
    func ipv6Copies() {
        let copies = MainTableRoutes.copies(json: Self.ipv6, excludingDevice: "tv0")
        #expect(copies.routes.map(\.arguments) == [
            ["fd09:1::/64", "dev", "d1", "metric", "256"],
            ["fd50::/48", "via", "fd09:1::2", "dev", "d1", "metric", "1024"],
            ["fd75::/64", "dev", "d1", "metric", "1024", "pref", "high", "mtu", "1400"],
            ["fe80::/64", "dev", "d1", "metric", "256"],
            ["fe80::/64", "dev", "d2", "metric", "256"],
        ])
    }

    @Test("a gateway of the other family, a route with nothing to copy, and text that is not the listing")
    func edges() {
        let other = MainTableRoutes.copies(json: #"[{"dst":"10.80.0.0/16","via":{"family":"inet6","host":"fe80::1"},"dev":"d1","flags":[]},{"dst":"10.81.0.0/16","flags":[]}]"#,
                                           excludingDevice: "tv0")
        #expect(other.routes.map(\.arguments) == [["10.80.0.0/16", "via", "inet6", "fe80::1", "dev", "d1"]])
        #expect(other.skipped == ["10.81.0.0/16"])
        #expect(MainTableRoutes.copies(json: "Error: ipv6 is disabled", excludingDevice: "tv0") == MainTableRoutes.Copies())
        #expect(MainTableRoutes.copies(json: "[]", excludingDevice: "tv0") == MainTableRoutes.Copies())
    }

    @Test("main's default routes alone, for tv's own sockets' table")
    func defaultCopies() {
        #expect(MainTableRoutes.copies(json: Self.ipv4, excludingDevice: "tv0", defaults: true).routes
                == [MainTableRoutes.Route(destination: "default", arguments: ["default", "via", "10.9.1.254", "dev", "d1"])])
        #expect(MainTableRoutes.copies(json: Self.ipv6, excludingDevice: "tv0", defaults: true).routes.map(\.arguments)
                == [["default", "via", "fd09:1::254", "dev", "d1", "metric", "1024"]])
        // A default route through the TUN itself is not copied.
        #expect(MainTableRoutes.copies(json: #"[{"dst":"default","dev":"tv0","flags":[]}]"#, excludingDevice: "tv0", defaults: true).routes.isEmpty)
    }

    @Test("the plan: per family old cached routes flushed, the TUN's table, the copy of main's defaults and its last resort, then main without its defaults or routes onto the TUN, the marked sockets' rule, the TUN's rule last; undone rules first, then both tables")
    func plan() {
        var plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        plan.defaults4 = [MainTableRoutes.Route(destination: "default", arguments: ["default", "via", "192.168.1.1", "dev", "wlan0", "src", "192.168.1.5"])]
        plan.defaults6 = [MainTableRoutes.Route(destination: "default", arguments: ["default", "via", "fe80::1", "dev", "wlan0", "metric", "1024"])]
        #expect(plan.apply == [
            .init(arguments: ["-4", "route", "add", "default", "dev", "tv0", "table", "29814"]),
            .init(arguments: ["-4", "route", "append", "default", "via", "192.168.1.1", "dev", "wlan0", "src", "192.168.1.5", "table", "29815"], mayFail: .copy(destination: "default")),
            .init(arguments: ["-4", "route", "append", "unreachable", "default", "metric", "4294967295", "table", "29815"], mayFail: .lastResort),
            .init(arguments: ["-4", "rule", "add", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", "29814", "pref", "32763"]),
            .init(arguments: ["-4", "rule", "add", "fwmark", "0x7476", "table", "29815", "pref", "32764"]),
            .init(arguments: ["-4", "rule", "add", "not", "fwmark", "0x7476", "table", "29814", "pref", "32765"]),
            .init(arguments: ["-6", "route", "flush", "cache"], mayFail: .cacheFlush),
            .init(arguments: ["-6", "route", "add", "default", "dev", "tv0", "table", "29814"]),
            .init(arguments: ["-6", "route", "append", "default", "via", "fe80::1", "dev", "wlan0", "metric", "1024", "table", "29815"], mayFail: .copy(destination: "default")),
            .init(arguments: ["-6", "route", "append", "unreachable", "default", "metric", "4294967295", "table", "29815"], mayFail: .lastResort),
            .init(arguments: ["-6", "rule", "add", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", "29814", "pref", "32763"]),
            .init(arguments: ["-6", "rule", "add", "fwmark", "0x7476", "table", "29815", "pref", "32764"]),
            .init(arguments: ["-6", "rule", "add", "not", "fwmark", "0x7476", "table", "29814", "pref", "32765"]),
        ])
        #expect(plan.undo == [
            ["-4", "rule", "del", "not", "fwmark", "0x7476", "table", "29814", "pref", "32765"],
            ["-4", "rule", "del", "fwmark", "0x7476", "table", "29815", "pref", "32764"],
            ["-4", "rule", "del", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", "29814", "pref", "32763"],
            ["-4", "route", "flush", "table", "29814"],
            ["-4", "route", "del", "unreachable", "default", "metric", "4294967295", "table", "29815"],
            ["-4", "route", "flush", "table", "29815"],
            ["-6", "rule", "del", "not", "fwmark", "0x7476", "table", "29814", "pref", "32765"],
            ["-6", "rule", "del", "fwmark", "0x7476", "table", "29815", "pref", "32764"],
            ["-6", "rule", "del", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", "29814", "pref", "32763"],
            ["-6", "route", "flush", "table", "29814"],
            ["-6", "route", "del", "unreachable", "default", "metric", "4294967295", "table", "29815"],
            ["-6", "route", "flush", "table", "29815"],
        ])
        // No IPv6 on the TUN: IPv4 only.
        plan.ipv6 = false
        #expect(plan.applyLines == ["ip -4 route add default dev tv0 table 29814",
                                    "ip -4 route append default via 192.168.1.1 dev wlan0 src 192.168.1.5 table 29815",
                                    "ip -4 route append unreachable default metric 4294967295 table 29815",
                                    "ip -4 rule add table main suppress_prefixlength 0 suppress_ifgroup 29814 pref 32763",
                                    "ip -4 rule add fwmark 0x7476 table 29815 pref 32764",
                                    "ip -4 rule add not fwmark 0x7476 table 29814 pref 32765"])
    }

    @Test("rules ahead of tv's that send traffic to another table (a VPN's) are found; main's, local, tv's own and later ones are not")
    func rulesAhead() {
        let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        // `ip rule show` with wg-quick's rules added before tv's, then tv's (iproute2 6.1's format).
        let wgFirst = "0:\tfrom all lookup local\n32763:\tfrom all lookup main suppress_prefixlength 0\n32764:\tfrom all fwmark 0x7476 lookup 29815\n"
            + "32764:\tfrom all lookup main suppress_prefixlength 0\n32765:\tnot from all fwmark 0xca6c lookup 51820\n"
            + "32765:\tnot from all fwmark 0x7476 lookup 29814\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"
        #expect(plan.rulesAhead(in: wgFirst) == ["32765: not from all fwmark 0xca6c lookup 51820"])
        // Tailscale's, far ahead; a rule after tv's is not ahead of it.
        let tailscale = "0:\tfrom all lookup local\n5270:\tfrom all lookup 52\n32765:\tnot from all fwmark 0x7476 lookup 29814\n32765:\tnot from all fwmark 0xca6c lookup 51820\n"
        #expect(plan.rulesAhead(in: tailscale) == ["5270: from all lookup 52"])
        #expect(plan.rulesAhead(in: "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n") == [])
    }

    /// Table 29815 as iproute2 6.1 lists it in IPv6 after tv made it: the last resort hangs on
    /// `lo` (the kernel's doing), and must still read as the route tv made.
    static let copyTable6 = #"[{"dst":"default","gateway":"fd40::1","dev":"e0","metric":1024,"flags":["linkdown"],"pref":"medium"},{"type":"unreachable","dst":"default","dev":"lo","metric":4294967295,"flags":[],"pref":"medium"}]"#
    static let main6 = #"[{"dst":"default","gateway":"fd40::1","dev":"e0","metric":1024,"flags":["linkdown"],"pref":"medium"}]"#

    @Test("the copy table as the kernel lists it equals what tv wants (IPv6's `dev lo` on the last resort is not part of it); changes append first, then delete, never flush")
    func copyComparison() {
        let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)
        let held = MainTableRoutes.copies(json: Self.copyTable6, excludingDevice: "tv0", defaults: true).routes
        let wanted = HostRoutingPlan.copyTableRoutes(MainTableRoutes.copies(json: Self.main6, excludingDevice: "tv0", defaults: true).routes)
        #expect(held.last == HostRoutingPlan.lastResort)
        #expect(plan.copyChanges(family: "-6", held: held, wanted: wanted).isEmpty)
        // A new gateway in main: its copy is appended before the old one goes.
        let moved = HostRoutingPlan.copyTableRoutes([MainTableRoutes.Route(destination: "default", arguments: ["default", "via", "fd40::9", "dev", "e0", "metric", "1024"])])
        #expect(plan.copyChanges(family: "-6", held: held, wanted: moved) == [
            ["-6", "route", "append", "default", "via", "fd40::9", "dev", "e0", "metric", "1024", "table", "29815"],
            ["-6", "route", "del", "default", "via", "fd40::1", "dev", "e0", "metric", "1024", "table", "29815"],
        ])
    }

    @Test("which lines of `ip monitor route` (iproute2 6.1) are about main's default routes")
    func monitorLines() {
        // Lines `ip monitor route` printed for `route add default`, `-6 route add default`,
        // `route replace default`, a default added to table 29815, both deletions, a LAN route,
        // and a local route.
        let about = ["default via 10.9.1.254 dev d1 ", "default via fd09::fe dev d1 metric 1024 pref medium", "default via 10.9.1.253 dev d1 ",
                     "Deleted default via 10.9.1.253 dev d1 ", "Deleted default via fd09::fe dev d1 metric 1024 pref medium",
                     "unreachable default dev lo metric 4278198272 pref medium"]
        let other = ["default via 10.9.1.254 dev d1 table 29815 ", "10.50.0.0/16 via 10.9.1.2 dev d1 ",
                     "local fe80::7806:97ff:fe65:9185 dev d1 table local proto kernel metric 0 pref medium", "", "Deleted 10.50.0.0/16 via 10.9.1.2 dev d1 "]
        for line in about { #expect(MainDefaultRouteWatcher.isAboutMainDefault(Substring(line)), "\(line)") }
        // Wide routes added to main (a VPN connecting): said; deletions, other tables, a /8 not.
        for line in ["0.0.0.0/1 via 10.8.0.1 dev vpn0 ", "128.0.0.0/1 dev tun0 scope link ", "unreachable 64.0.0.0/2 ", "2000::/3 dev wg0 metric 1024 pref medium"] {
            #expect(MainDefaultRouteWatcher.addsMainWideRoute(Substring(line)), "\(line)")
        }
        for line in ["Deleted 0.0.0.0/1 via 10.8.0.1 dev vpn0 ", "0.0.0.0/1 via 10.8.0.1 dev vpn0 table 51820 ", "10.0.0.0/8 via 10.8.0.1 dev vpn0 ",
                     "default via 10.9.1.254 dev d1 ", "fd00::/16 dev wg0 metric 1024 pref medium", ""] {
            #expect(!MainDefaultRouteWatcher.addsMainWideRoute(Substring(line)), "\(line)")
        }
        for line in other { #expect(!MainDefaultRouteWatcher.isAboutMainDefault(Substring(line)), "\(line)") }
    }
}

/// The TUN's own networks (`--mode tun` refuses connections into them).
@Suite struct TunnelSubnetTests {
    @Test("an address masked to its network, both families, lengths clamped; the TUN's networks hold their addresses")
    func masked() {
        #expect(PacketAddress("10.77.0.1")!.masked(prefixLength: 24).description == "10.77.0.0")
        #expect(PacketAddress("10.77.200.129")!.masked(prefixLength: 17).description == "10.77.128.0")
        #expect(PacketAddress("10.77.0.1")!.masked(prefixLength: 0).description == "0.0.0.0")
        #expect(PacketAddress("10.77.0.1")!.masked(prefixLength: 40).description == "10.77.0.1")
        #expect(PacketAddress("fd77::1")!.masked(prefixLength: 64).description == "fd77::")
        #expect(PacketAddress("fd77:1:2:3:ffff:5:6:7")!.masked(prefixLength: 72).description == "fd77:1:2:3:ff00::")
        #expect(PacketAddress("fd77::f:1")!.masked(prefixLength: 128).description == "fd77::f:1")
        var plan = TunnelAddressPlan()
        #expect(plan.holds(PacketAddress("10.77.0.9")!) && plan.holds(PacketAddress("fd77::9")!))
        #expect(!plan.holds(PacketAddress("10.78.0.9")!) && !plan.holds(PacketAddress("fd78::9")!))
        plan.address6 = nil
        #expect(!plan.holds(PacketAddress("fd77::9")!))
    }
}
