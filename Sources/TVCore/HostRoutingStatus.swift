import Tunnel

/// `tv status`'s lines about `--mode tun`'s routing, from the session's `routing.*` values
/// (`HostTunnel.routingValues`). Pure.
public enum HostRoutingStatus {
    /// The lines, empty when the values hold no routing (another mode).
    public static func lines(_ values: [String: String]) -> [String] {
        guard let table = values["routing.copyTable"] else { return [] }
        var copies: [String] = []
        for (key, family) in [("routing.copy4", "IPv4"), ("routing.copy6", "IPv6")] {
            guard let held = values[key] else { continue }
            copies.append(held.isEmpty ? "none (\(family): tv's connections fail as unreachable until main has one)" : "\(held) (\(family))")
        }
        let remade = Int(values["routing.copyRemade"] ?? "") ?? 0
        var following = values["routing.monitorEnded"] == "1"
            ? "`ip monitor route` ended, so main is compared every \(Int(MainDefaultRouteWatcher.checkSeconds)) s"
            : "following main through `ip monitor route`"
        if remade > 0 { following += "; made again \(remade == 1 ? "once" : "\(remade) times") as main's default routes changed" }
        let rulesRemade = Int(values["routing.rulesRemade"] ?? "") ?? 0
        if rulesRemade > 0 {
            following += "; tv's policy rules were removed from outside and made again \(rulesRemade == 1 ? "once" : "\(rulesRemade) times")"
        }
        var lines = ["routing: tv's own connections leave through table \(table), a copy of main's default routes: "
                     + copies.joined(separator: ", ") + "; " + following]
        let servers = values["routing.serverPorts"] ?? ""
        lines.append(servers.isEmpty
            ? "routing: no server of this host listens beyond loopback now (its ports are read every \(Int(MainDefaultRouteWatcher.serverCheckSeconds)) s)"
            : "routing: what this host sends from its servers' ports (\(servers)) leaves through table \(table) too, unseen by tv (ports read every \(Int(MainDefaultRouteWatcher.serverCheckSeconds)) s)")
        if let named = values["routing.serverPortsNamed"], !named.isEmpty { lines.append("routing: " + named) }
        if let ephemeral = values["routing.ephemeralUDP"], !ephemeral.isEmpty { lines.append("routing: " + ephemeral) }
        return lines
    }
}
