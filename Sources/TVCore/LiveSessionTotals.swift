import FlowTerms
import TVHome

/// What several sessions live on one data folder add up to (`tv status`'s `together` line and
/// `totals`, `tv top`'s rates, totals and talkers): the counts that mean the same in every mode
/// (connections open and accepted, flows closed by status, bytes each way, UDP flows open) are
/// summed, the busiest hosts merged by name. A setting, a label or a mode's own counter does
/// not add up, and is each session's to say. Pure.
public enum LiveSessionTotals {
    /// The values that are summed across sessions.
    public static let additiveKeys: [String] = ["openConnections", "accepted", "bytesFromClients", "bytesFromServers", "tunnel.udpFlowsOpen"]
        + FlowStatus.allCases.map(SessionStatusPresentation.closedKey)

    /// `sessions`' values as one session's: the first's, with every additive key the sum of the
    /// sessions that have it, and the talkers (`talkers.N.*`) merged by host (flows and bytes
    /// summed), busiest by bytes first (ties by host). One session's values come back as they are.
    public static func merged(_ sessions: [[String: String]]) -> [String: String] {
        guard var out = sessions.first, sessions.count > 1 else { return sessions.first ?? [:] }
        for key in additiveKeys {
            let present = sessions.compactMap { $0[key].flatMap { Int64($0) } }
            if !present.isEmpty { out[key] = String(present.reduce(0, &+)) }
        }
        for key in out.keys where key.hasPrefix("talkers.") { out.removeValue(forKey: key) }
        var byHost: [String: Talker] = [:]
        for talker in sessions.flatMap(Talker.all) {
            var sum = byHost[talker.host] ?? Talker(host: talker.host, flows: 0, received: 0, sent: 0)
            sum.flows &+= talker.flows
            sum.received &+= talker.received
            sum.sent &+= talker.sent
            byHost[talker.host] = sum
        }
        for (i, t) in Talker.sorted(Array(byHost.values), by: .bytes).enumerated() {
            out["talkers.\(i + 1).host"] = t.host
            out["talkers.\(i + 1).flows"] = String(t.flows)
            out["talkers.\(i + 1).bytesFromServer"] = String(t.received)
            out["talkers.\(i + 1).bytesFromClient"] = String(t.sent)
        }
        return out
    }

    /// `totals` in `--json`: the additive keys of `merged(sessions)` that any session has, nested
    /// as `tv status --json` nests them (`"closed": {"failed": 1, …}`).
    public static func json(_ sessions: [[String: String]]) -> JSONValue {
        let merged = merged(sessions)
        let summed = merged.filter { additiveKeys.contains($0.key) }
        guard case .object(let fields) = SessionStatusPresentation.json(summed) else { return .object([]) }
        return .object(fields.filter { $0.0 != "running" && !SessionStatusPresentation.listNames.contains($0.0) })
    }

    /// `tv status`'s `together` line: "3 connections open, 12 accepted; ↑ 1.2 KiB from clients,
    /// ↓ 40 KiB from servers; 9 flows closed (1 failed)".
    public static func line(_ sessions: [[String: String]]) -> String {
        let merged = merged(sessions)
        func n(_ key: String) -> Int64 { merged[key].flatMap { Int64($0) } ?? 0 }
        let open = n("openConnections"), closed = FlowStatus.allCases.reduce(Int64(0)) { $0 + n(SessionStatusPresentation.closedKey($1)) }
        return "\(Units.grouped(open)) connection\(open == 1 ? "" : "s") open, \(Units.grouped(n("accepted"))) accepted; "
            + "↑ \(Units.bytes(n("bytesFromClients"))) from clients, ↓ \(Units.bytes(n("bytesFromServers"))) from servers; "
            + "\(Units.grouped(closed)) flow\(closed == 1 ? "" : "s") closed (\(Units.grouped(n(SessionStatusPresentation.closedKey(.failed)))) failed)"
    }
}
