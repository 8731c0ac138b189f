import Foundation

/// Routes in main that cover a large share of the address space without being a default route:
/// a VPN's split default (OpenVPN's `def1`, 0.0.0.0/1 and 128.0.0.0/1; a WireGuard AllowedIPs
/// of 0.0.0.0/1 or ::/1; 2000::/3, the whole IPv6 unicast internet). `--mode tun` leaves main's
/// specific routes in place (`suppress_prefixlength 0` keeps every prefix longer than /0), so
/// such a route takes what it covers ahead of the TUN and tv never sees it, while the banner said
/// everything default-routed went through tv (a trial's re-check, with wg-quick's and
/// Tailscale's policy rules already named by `HostRoutingPlan.rulesAhead`).
public enum MainTableWideRoutes {
    /// The longest prefix counted wide: IPv4 /7 (2^25 addresses or more), IPv6 /15.
    public static func longestWidePrefix(isIPv6: Bool) -> Int { isIPv6 ? 15 : 7 }

    /// The wide routes in `json` (`ip -j route show table main`, one family), each as `ip route`
    /// would print it in short (`0.0.0.0/1 via 10.8.0.1 dev vpn0`, `unreachable 64.0.0.0/2`),
    /// in the listing's order; routes through `excludingDevice` (the TUN) left out. Pure;
    /// malformed JSON gives none.
    public static func find(json: String, excludingDevice: String) -> [String] {
        guard let list = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [[String: Any]] else { return [] }
        var wide: [String] = []
        for route in list {
            guard let destination = route["dst"] as? String, let slash = destination.firstIndex(of: "/"),
                  let length = Int(destination[destination.index(after: slash)...]),
                  length > 0, length <= longestWidePrefix(isIPv6: destination.contains(":")) else { continue }
            if let dev = route["dev"] as? String, dev == excludingDevice { continue }
            var words: [String] = []
            if let type = route["type"] as? String, type != "unicast" { words.append(type) }
            words.append(destination)
            if let gateway = route["gateway"] as? String { words += ["via", gateway] }
            if let dev = route["dev"] as? String { words += ["dev", dev] }
            wide.append(words.joined(separator: " "))
        }
        return wide
    }

    /// The wide routes of every family of `plan`, each as `` `0.0.0.0/1 via … dev vpn0` (IPv4) ``
    /// for the banner and the session's messages.
    public static func described(_ plan: HostRoutingPlan) -> [String] {
        plan.families.flatMap { family in
            read(family: family, excludingDevice: plan.device).map { "`\($0)` (\(HostRoutingPlan.familyName(family)))" }
        }
    }

    /// Reads main's routes in `family` (`"-4"`, `"-6"`; up to 16 MiB of iproute2's JSON, a
    /// routing daemon's table of 100,000 routes) and finds the wide ones; empty when `ip` fails.
    public static func read(family: String, excludingDevice: String) -> [String] {
        guard let (code, output) = try? ChildProcess.run(["ip", "-j", family, "route", "show", "table", "main"], maximumBytes: 16 << 20),
              code == 0 else { return [] }
        return find(json: output, excludingDevice: excludingDevice)
    }
}
