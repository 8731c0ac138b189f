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
