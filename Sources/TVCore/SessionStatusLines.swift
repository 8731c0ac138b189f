import FlowTerms
import TVHome

extension SessionStatusPresentation {
    /// `tv status`'s text for one live session: its title line, then the counters, one
    /// labelled line each (what only some modes have is said only when they have it).
    /// - Parameters:
    ///   - values: the session's `status` values.
    ///   - auditStrip: the recording audit session's strip, said under the title (nil: none).
    public static func lines(_ values: [String: String], auditStrip: String? = nil) -> [String] {
        // The session's counters and labels, escaped as one-line fields (a closing reason can
        // name what a peer did).
        let v = values.mapValues(TerminalText.line)
        var out = ["tv is running (pid \(v["pid"] ?? "?")): \(v["modeLabel"] ?? v["mode"] ?? "") on \(v["listen"] ?? "")"]
        if let auditStrip { out.append("  " + auditStrip) }
        out.append("  inspection        \(v["inspection"] ?? "?")")
        if v["serverCertificates"] == "not verified" {
            out.append("  servers           " + RunBanner.serversNotVerified + "; `tv flow ID` says what each check found")
        }
        out.append("  connections open  \(v["openConnections"] ?? "0") of \(v["connectionCap"] ?? "?") (\(v["accepted"] ?? "0") accepted, \(v["refusedByCap"] ?? "0") refused at the cap, \(v["refusedPerClient"] ?? "0") over the per-client limit)")
        // Transparent mode: connections no redirect rule sent (counted, reset, no flow): said
        // here too, not only in the session's own terminal (a trial saw nothing of them).
        if let missed = v["notRedirected"], missed != "0" {
            out.append("  not redirected    \(missed) connection\(missed == "1" ? "" : "s") reached tv's port directly (no REDIRECT rule sent \(missed == "1" ? "it" : "them"), so no original destination): reset, no flow; check the rule's match")
        }
        if let n = v["headTimeouts"], n != "0" {
            out.append("  slow heads        \(n) closed (request head not whole within the head timeout)")
        }
        if let n = v["acceptsFailedForDescriptors"], n != "0" {
            out.append("  out of descriptors \(n) accepts failed (limit \(v["descriptorLimit"] ?? "?"); raise it with ulimit -n)")
        }
        if let closed = closedCounts(values) { out.append("  closed            " + closed) }
        if let clients = clientOutcomes(values) {
            out.append("  clients           " + clients + " (`tv pinned` lists what tv remembered)")
        }
        let up = Int64(v["bytesFromClients"] ?? "0") ?? 0, down = Int64(v["bytesFromServers"] ?? "0") ?? 0
        out.append("  bytes             ↑ \(Units.bytes(up)) from clients, ↓ \(Units.bytes(down)) from servers")
        if let capture = CapturesPresentation.statusLine(values) { out.append("  capture           " + capture) }
        if let decrypted = CapturesPresentation.decryptedStatusLine(values) { out.append("  decrypted capture " + decrypted) }
        if let losses = RecordingLosses(values: v) {
            for line in RecordingPresentation.statusLines(losses) { out.append("  " + line) }
        }
        if let programs = ProgramLookupStatus.line(v) { out.append("  programs          " + programs) }
        if let shared = SharedStoreWiring.statusLine(v) { out.append("  shared store      " + shared) }
        // --mode tun and tv exec: what went through the TUN so far (packets, UDP flows, DNS,
        // drops), as `tv exec` prints it when CMD exits.
        var tunnel: [String: UInt64] = [:]
        for (key, value) in v where key.hasPrefix("tunnel.") { tunnel[String(key.dropFirst(7))] = UInt64(value) ?? 0 }
        if !tunnel.isEmpty {
            let named = UInt64(v[SessionTally.namedFromLookupsKey] ?? "") ?? 0
            for line in TunnelCountersPresentation(counters: tunnel).lines + TunnelNamesPresentation.lines(tunnel, namedFromLookups: named) { out.append("  " + line) }
            for line in HostRoutingStatus.lines(v) { out.append("  " + line) }
        } else {
            out.append("  " + TunnelNamesPresentation.proxyModeLine)
        }
        return out
    }
}
