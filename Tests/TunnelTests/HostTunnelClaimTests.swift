import Foundation
import Testing
@testable import Tunnel

/// `--mode tun`'s routing plan read back from `ip rule show`, and what a killed session's
/// record lets the next one do with rp_filter: exact values.
@Suite struct HostTunnelClaimTests {
    static let plan = HostRoutingPlan(device: "tv0", table: 0x7476, mark: 0x7476, ipv6: true)

    @Test("the plan's rule is found in ip rule show's text (iproute2's format), and only its own")
    func ruleInListing() {
        let applied = "0:\tfrom all lookup local\n32765:\tnot from all fwmark 0x7476 lookup 29814\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"
        #expect(Self.plan.isApplied(in: applied))
        #expect(!Self.plan.isApplied(in: "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"))
        // Another table or mark at the same priority is someone else's.
        #expect(!Self.plan.isApplied(in: "32765:\tnot from all fwmark 0x1 lookup 29814\n"))
        #expect(!Self.plan.isApplied(in: "32765:\tnot from all fwmark 0x7476 lookup 100\n"))
        #expect(!Self.plan.isApplied(in: "1000:\tnot from all fwmark 0x7476 lookup 29814\n"))
    }

    @Test("rp_filter: the strict interfaces loosened, not all, loopback or the TUN; a record without them still reads")
    func strictInterfaces() throws {
        #expect(HostTunnelClaim.interfacesToLoosen(["all": "1", "default": "1", "lo": "1", "eth0": "1", "wlan0": "0", "tv0": "1", "eth1": "2"], tun: "tv0")
                == ["default", "eth0"])
        let old = try JSONDecoder().decode(HostTunnelClaim.Record.self, from: Data(#"{"pid":1,"dataFolder":"/d","device":"tv0","table":29814,"mark":29814,"rpFilterWas":"1"}"#.utf8))
        #expect(old.rpFilterLoosened == nil && old.rpFilterWas == "1")
    }

    @Test("rp_filter: strict is loosened and restored; a killed holder's loosening is kept and restored; anything else is left alone")
    func rpFilter() {
        let killed = HostTunnelClaim.Record(pid: 7, dataFolder: "/d", device: "tv0", table: 0x7476, mark: 0x7476, rpFilterWas: "1")
        let untouched = HostTunnelClaim.Record(pid: 7, dataFolder: "/d", device: "tv0", table: 0x7476, mark: 0x7476, rpFilterWas: nil)
        #expect(HostTunnelClaim.rpFilterPlan(current: "1", left: nil) == (true, "1"))
        #expect(HostTunnelClaim.rpFilterPlan(current: "2", left: killed) == (false, "1"))
        #expect(HostTunnelClaim.rpFilterPlan(current: "2", left: untouched) == (false, nil))
        #expect(HostTunnelClaim.rpFilterPlan(current: "2", left: nil) == (false, nil))
        #expect(HostTunnelClaim.rpFilterPlan(current: "0", left: killed) == (false, nil))
        #expect(HostTunnelClaim.rpFilterPlan(current: nil, left: nil) == (false, nil))
    }
}
