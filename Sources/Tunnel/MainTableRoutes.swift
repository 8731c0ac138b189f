import Foundation

/// Routes of the main table read from `ip -j route show table main` (iproute2's JSON) and turned
/// back into `ip route append` arguments for another table (`append`: main may hold one prefix
/// on several devices at one metric, `fe80::/64` on each link, which `add` refuses as existing).
/// `--mode tun` copies main's default routes for tv's own marked sockets (`HostRoutingPlan`,
/// kept in step by `MainDefaultRouteWatcher`).
///
/// (Copying every other route for the unmarked traffic instead, so it never looked in main, was
/// tried and reverted: a route added to main during the session had its gateway resolved
/// through the copies, landed on the TUN and looped tv's own sockets into it; a link that went
/// down and up lost its copies for good; a route deleted from main kept its copy and its
/// traffic went around tv. A trial.)
public enum MainTableRoutes {
    /// One route to copy.
    public struct Route: Sendable, Equatable {
        /// Its destination as iproute2 wrote it (`10.0.0.0/24`, `fe80::/64`, `::1`).
        public var destination: String
        /// `ip route append` arguments without `table` (`["10.0.0.0/24", "dev", "eth0", "scope",
        /// "link", "src", "10.0.0.5"]`; a special type first: `["blackhole", "10.66.0.0/16"]`;
        /// next hops last, where iproute2 wants them: `[…, "nexthop", "via", …]`).
        public var arguments: [String]

        public init(destination: String, arguments: [String]) {
            self.destination = destination
            self.arguments = arguments
        }

        /// `arguments` with `table TABLE` before the next hops (iproute2 reads everything after
        /// the first `nexthop` as next hops: "\"nexthop\" or end of line is expected instead of
        /// \"table\"").
        public func arguments(table: String) -> [String] {
            let end = arguments.firstIndex(of: "nexthop") ?? arguments.endIndex
            return Array(arguments[..<end]) + ["table", table] + arguments[end...]
        }
    }

    /// What `copies` found: the routes, and the destinations it could not express.
    public struct Copies: Sendable, Equatable {
        /// In the listing's order.
        public var routes: [Route] = []
        /// Destinations of routes with no device, gateway, next hop or special type to copy.
        public var skipped: [String] = []
    }

    /// The copies of the routes in `json` (`ip -j route show table main`, one family) whose
    /// destination is not `default`, or (`defaults`) only those whose destination is. Kept: the type (blackhole, unreachable, prohibit, throw),
    /// gateway, device, `onlink`, next hops (weights; a nexthop object's as resolved), scope, preferred
    /// source, metric, IPv6 preference, and the `mtu` and `advmss` metrics (iproute2's JSON shows
    /// no locks; other metrics tune TCP and are left to the kernel's defaults). Routes through
    /// `excludingDevice` (the TUN itself) are left out. Malformed JSON gives no copies. Pure.
    public static func copies(json: String, excludingDevice: String, defaults: Bool = false) -> Copies {
        var result = Copies()
        guard let list = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [[String: Any]] else { return result }
        for route in list {
            guard let destination = route["dst"] as? String, (destination == "default") == defaults else { continue }
            if let dev = route["dev"] as? String, dev == excludingDevice { continue }
            var arguments: [String] = []
            var hops: [String] = []
            let type = route["type"] as? String ?? "unicast"
            if type != "unicast" { arguments.append(type) }
            arguments.append(destination)
            // A route through a nexthop object (`nhid N`) is copied by what iproute2 resolves it
            // to (its gateway and device, or its group's next hops): `ip route flush table`
            // fails with EINVAL ("Failed to send flush request: Invalid argument", iproute2 6.1)
            // on a table holding an `nhid` route, which would leave tv's table behind.
            if let list = route["nexthops"] as? [[String: Any]], !list.isEmpty {
                for hop in list {
                    hops.append("nexthop")
                    hops += gateway(of: hop)
                    if let dev = hop["dev"] as? String { hops += ["dev", dev] }
                    if let weight = hop["weight"] as? Int { hops += ["weight", String(weight)] }
                    if (hop["flags"] as? [String])?.contains("onlink") == true { hops.append("onlink") }
                }
            } else {
                let via = gateway(of: route)
                let dev = route["dev"] as? String
                guard type != "unicast" || !via.isEmpty || dev != nil else {
                    result.skipped.append(destination)
                    continue
                }
                arguments += via
                // IPv6 hangs a route of a special type (unreachable, blackhole, prohibit) on `lo`
                // and lists it so (`unreachable default dev lo`); it was never put there, so it is
                // not part of the route: read with it, table 29815's last resort never equalled
                // what the watcher wanted, and the IPv6 copy was flushed and made again every 10 s,
                // each time an instant with no route (a trial's IPv6 sessions into the host died).
                if let dev, type == "unicast" || dev != "lo" { arguments += ["dev", dev] }
                if (route["flags"] as? [String])?.contains("onlink") == true { arguments.append("onlink") }
            }
            if let scope = route["scope"] as? String { arguments += ["scope", scope] }
            if let source = route["prefsrc"] as? String { arguments += ["src", source] }
            if let metric = route["metric"] as? Int { arguments += ["metric", String(metric)] }
            if let preference = route["pref"] as? String, preference != "medium" { arguments += ["pref", preference] }
            if let metrics = (route["metrics"] as? [[String: Any]])?.first {
                for key in ["mtu", "advmss"] { if let value = metrics[key] as? Int { arguments += [key, String(value)] } }
            }
            result.routes.append(Route(destination: destination, arguments: arguments + hops))
        }
        return result
    }

    /// `via ADDRESS`, or `via FAMILY ADDRESS` for a gateway of the other family (RFC 5549's
    /// IPv4 over an IPv6 next hop: iproute2 shows `"via": {"family": "inet6", "host": …}`).
    private static func gateway(of route: [String: Any]) -> [String] {
        if let address = route["gateway"] as? String { return ["via", address] }
        if let via = route["via"] as? [String: Any], let family = via["family"] as? String, let host = via["host"] as? String {
            return ["via", family, host]
        }
        return []
    }

    /// Reads the default routes of `table` (main unless said) in `family` (`"-4"`, `"-6"`) with
    /// `ip -j route show table TABLE default` (only those: a main table of thousands of routes
    /// passed `ChildProcess.run`'s 64 KiB of output, and the cut JSON read as no route at all: a
    /// trial) and copies them; empty when `ip` fails (IPv6 off) or is missing. Needs no privileges.
    public static func readDefaults(family: String, table: String = "main", excludingDevice: String) -> Copies {
        guard ChildProcess.resolve("ip", path: "/usr/sbin:/usr/bin:/sbin:/bin") != "ip",
              let (code, output) = try? ChildProcess.run(["ip", "-j", family, "route", "show", "table", table, "default"]), code == 0 else { return Copies() }
        return copies(json: output, excludingDevice: excludingDevice, defaults: true)
    }
}
