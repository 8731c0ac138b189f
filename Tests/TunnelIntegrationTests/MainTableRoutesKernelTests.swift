import Foundation
import Testing
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// `MainTableRoutes`' copies given to a real kernel: in a namespace the test makes and removes,
/// main's routes of every shape copied into another table are accepted, read back the same, and
/// flushed.
@Suite("--mode tun's copies of main's routes in a real kernel", .enabled(if: geteuid() == 0 && Sh.run(["which", "ip"]).status == 0, "needs root and ip"))
struct MainTableRoutesKernelTests {
    @Test("every copy is accepted, the copied table reads back as main's copies, and flushes (both families)")
    func roundTrip() throws {
        let ns = "tvrt-" + String(UUID().uuidString.prefix(6)).lowercased()
        try Sh.must(["ip", "netns", "add", ns])
        defer { Sh.run(["ip", "netns", "del", ns]) }
        let n = ["ip", "-n", ns]
        for (dev, peer) in [("d1", "p1"), ("d2", "p2"), ("d3", "p3")] {
            try Sh.must(n + ["link", "add", dev, "type", "veth", "peer", "name", peer])
        }
        for dev in ["lo", "d1", "p1", "d2", "p2", "d3"] { try Sh.must(n + ["link", "set", dev, "up"]) }
        try Sh.must(n + ["addr", "add", "10.9.1.1/24", "dev", "d1"])
        try Sh.must(n + ["addr", "add", "10.9.2.1/24", "dev", "d2"])
        try Sh.must(n + ["addr", "add", "10.9.3.1/24", "dev", "d3"])   // no carrier: p3 stays down
        try Sh.must(n + ["-6", "addr", "add", "fd09:1::1/64", "dev", "d1", "nodad"])
        for route in [["route", "add", "default", "via", "10.9.1.254"],
                      ["route", "add", "10.50.0.0/16", "metric", "9", "nexthop", "via", "10.9.1.2", "weight", "2", "nexthop", "via", "10.9.2.2"],
                      ["route", "add", "blackhole", "10.66.0.0/16"],
                      ["route", "add", "unreachable", "10.67.0.0/16", "metric", "5"],
                      ["nexthop", "add", "id", "7", "via", "10.9.2.3", "dev", "d2"],
                      ["route", "add", "10.70.0.0/16", "nhid", "7"],
                      ["nexthop", "add", "id", "9", "via", "10.9.1.9", "dev", "d1"],
                      ["nexthop", "add", "id", "10", "group", "7/9"],
                      ["route", "add", "10.90.0.0/16", "nhid", "10"],
                      ["route", "add", "10.71.0.0/16", "via", "10.99.0.1", "dev", "d1", "onlink"],
                      ["route", "add", "10.72.0.0/16", "dev", "d1", "mtu", "1400", "advmss", "1300"],
                      ["route", "add", "prohibit", "10.76.0.0/16"],
                      ["route", "add", "throw", "10.77.0.0/16"],
                      ["-6", "route", "add", "fd50::/48", "via", "fd09:1::2", "expires", "300"],
                      ["-6", "route", "add", "fd75::/64", "dev", "d1", "mtu", "1400", "pref", "high"],
                      ["-6", "route", "add", "default", "via", "fd09:1::254"]] {
            try Sh.must(n + route)
        }
        for family in ["-4", "-6"] {
            let main = MainTableRoutes.copies(json: try Sh.must(n + ["-j", family, "route", "show", "table", "main"]).out, excludingDevice: "tv0")
            #expect(main.skipped.isEmpty)
            #expect(main.routes.count >= (family == "-4" ? 11 : 5), "\(main)")
            for route in main.routes { try Sh.must(n + [family, "route", "append"] + route.arguments(table: "77")) }
            let copied = MainTableRoutes.copies(json: try Sh.must(n + ["-j", family, "route", "show", "table", "77"]).out, excludingDevice: "tv0")
            #expect(copied == main)
            // … and the table empties as tv's undo empties it (a copied `nhid` route made the
            // flush fail: "Failed to send flush request: Invalid argument").
            try Sh.must(n + [family, "route", "flush", "table", "77"])
            #expect(try Sh.must(n + [family, "route", "show", "table", "77"]).out.isEmpty)
        }
    }
}
