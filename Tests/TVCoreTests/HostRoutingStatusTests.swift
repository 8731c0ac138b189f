import Testing
@testable import TVCore

@Suite struct HostRoutingStatusTests {
    @Test("the copy per family (or none), how it follows main, the servers' ports; nothing outside --mode tun")
    func lines() {
        var values = ["routing.copyTable": "29815", "routing.copy4": "default via 10.0.0.1 dev eth0", "routing.copy6": "",
                      "routing.copyRemade": "2", "routing.monitorEnded": "0", "routing.serverPorts": "TCP 22; UDP 51820"]
        #expect(HostRoutingStatus.lines(values) == [
            "routing: tv's own connections leave through table 29815, a copy of main's default routes: default via 10.0.0.1 dev eth0 (IPv4), "
                + "none (IPv6: tv's connections fail as unreachable until main has one); following main through `ip monitor route`; "
                + "made again 2 times as main's default routes changed",
            "routing: what this host sends from its servers' ports (TCP 22; UDP 51820) leaves through table 29815 too, unseen by tv (ports read every 2 s)",
        ])
        values["routing.monitorEnded"] = "1"
        values["routing.copyRemade"] = "1"
        values["routing.serverPorts"] = ""
        values["routing.copy6"] = nil
        values["routing.rulesRemade"] = "3"
        #expect(HostRoutingStatus.lines(values) == [
            "routing: tv's own connections leave through table 29815, a copy of main's default routes: default via 10.0.0.1 dev eth0 (IPv4); "
                + "`ip monitor route` ended, so main is compared every 10 s; made again once as main's default routes changed; "
                + "tv's policy rules were removed from outside and made again 3 times",
            "routing: no server of this host listens beyond loopback now (its ports are read every 2 s)",
        ])
        #expect(HostRoutingStatus.lines(["mode": "regular"]).isEmpty)
    }

    @Test("the ports named with --server-ports, and the ephemeral-range sockets with the option to name them, each on its line")
    func namedPorts() {
        let values = ["routing.copyTable": "29815", "routing.copy4": "default via 10.0.0.1 dev eth0", "routing.serverPorts": "TCP 22; UDP 51820",
                      "routing.serverPortsNamed": "--server-ports UDP 51820: what this host sends from these ports leaves through table 29815 for the whole session, whether or not a server is bound there, unseen by tv",
                      "routing.ephemeralUDP": "UDP sockets bound in the ephemeral range (40000) are taken for clients' and given no rule: a server among them (WireGuard, mosh) is not reachable from beyond the LAN while tv runs; name the servers' ports among them when tv starts to keep them reachable: --server-ports udp:40000"]
        #expect(HostRoutingStatus.lines(values).suffix(3) == [
            "routing: what this host sends from its servers' ports (TCP 22; UDP 51820) leaves through table 29815 too, unseen by tv (ports read every 2 s)",
            "routing: --server-ports UDP 51820: what this host sends from these ports leaves through table 29815 for the whole session, whether or not a server is bound there, unseen by tv",
            "routing: UDP sockets bound in the ephemeral range (40000) are taken for clients' and given no rule: a server among them (WireGuard, mosh) is not reachable from beyond the LAN while tv runs; "
                + "name the servers' ports among them when tv starts to keep them reachable: --server-ports udp:40000",
        ])
    }
}
