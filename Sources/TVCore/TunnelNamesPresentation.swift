/// Where the tunnel's names came from when a connection announced none, from the engine's
/// counters (`TunnelCounters.snapshot`): names from lookups (the DNS answers it carried) and
/// names from QUIC (the hosts read from Initial packets). `tv status` (`--mode tun`) and
/// `tv exec`'s closing summary print it, with the count of flows named so from the session's tally. Each section ends with the one sentence its figures
/// need: what a zero means, or what a name of that kind is.
///
/// Shape:
/// ```
/// names from lookups: 3 answers gave 5 names (1 gave none); 4 closed connections took their name from them (they announced no host of their own, and went to addresses an answer gave)
/// names from QUIC: 2 connections named, 0 announced none, 0 could not be read (Initial packets: 3 opened, 0 not opened, 0 reads started over, 0 skipped: too many being read)
///                  tv opens a QUIC connection's Initial packets to read its host and nothing else; the connection is forwarded untouched and never decrypted
/// ```
public enum TunnelNamesPresentation {
    /// - Parameters:
    ///   - counters: `TunnelCounters.snapshot` (missing names count as 0).
    ///   - namedFromLookups: the closed flows whose name is a looked-up one (`SessionTally`'s
    ///     `names.fromLookups.connectionsNamed`): the flow list's `dns` rows, each counted once
    ///     (the engine counted naming calls: a trial read 8, 2 and 4 for one session).
    public static func lines(_ counters: [String: UInt64], namedFromLookups: UInt64) -> [String] {
        func n(_ name: String) -> UInt64 { counters[name] ?? 0 }
        func count(_ v: UInt64) -> String { Units.grouped(Int64(clamping: v)) }
        func plural(_ v: UInt64, _ one: String, _ many: String) -> String { "\(count(v)) \(v == 1 ? one : many)" }
        var out: [String] = []

        let answers = n("dnsAnswersWithAddresses")
        let withoutAddresses = n("dnsAnswersWithoutAddresses"), unreadableAnswers = n("dnsAnswersUnreadable")
        if answers == 0, withoutAddresses > 0 {
            // Answers crossed, none with an address (NXDOMAIN, NODATA, TXT …): saying "no answer
            // crossed" here read as wrong beside them (a new-user trial).
            var line = "names from lookups: none — the \(plural(withoutAddresses, "DNS answer", "DNS answers")) that crossed the tunnel gave no address"
            if unreadableAnswers > 0 { line += " (\(plural(unreadableAnswers, "answer", "answers")) could not be read)" }
            out.append(line + ", so connections are named only when they announce a host")
        } else if answers == 0, n("dnsQueriesUnsent") > 0 {
            // The queries never reached a resolver: not "the programs used addresses" (a trial).
            out.append("names from lookups: none — \(n("dnsQueriesUnsent") == 1 ? "the DNS query" : "the \(count(n("dnsQueriesUnsent"))) DNS queries") could not be sent to a resolver (tv answered SERVFAIL), so connections are named only when they announce a host")
        } else if answers == 0 {
            // Not only encrypted DNS looks like this: a program that used addresses, or a resolver
            // on a connected network (which bypasses `--mode tun`'s route), too (a trial).
            var line = "names from lookups: none — no DNS answer crossed the tunnel unencrypted (the programs used addresses, encrypted DNS, or a resolver on a connected network, which bypasses the tunnel), so connections are named only when they announce a host"
            if unreadableAnswers > 0 { line += " (\(plural(unreadableAnswers, "answer", "answers")) could not be read)" }
            out.append(line)
        } else {
            var notes: [String] = []
            if n("dnsAnswersWithoutAddresses") > 0 { notes.append("\(count(n("dnsAnswersWithoutAddresses"))) gave none") }
            if n("dnsAnswersUnreadable") > 0 { notes.append("\(count(n("dnsAnswersUnreadable"))) could not be read") }
            out.append("names from lookups: \(plural(answers, "answer", "answers")) gave \(plural(n("dnsNamesLearned"), "name", "names"))"
                       + (notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")")
                       + "; " + Self.namedByLookups(namedFromLookups))
        }

        let named = n("quicNamed"), noName = n("quicNoName"), unreadable = n("quicUnreadable")
        let opened = n("quicPacketsOpened"), notOpened = n("quicPacketsNotOpened"), skipped = n("quicReadsSkipped")
        guard named + noName + unreadable + opened + notOpened + skipped + n("quicReading") > 0 else {
            out.append("names from QUIC: none — nothing used QUIC")
            return out
        }
        out.append("names from QUIC: \(plural(named, "connection", "connections")) named, \(count(noName)) announced none, \(count(unreadable)) could not be read"
                   + " (Initial packets: \(count(opened)) opened, \(count(notOpened)) not opened, "
                   + "\(plural(n("quicReadRestarts"), "read", "reads")) started over, \(count(skipped)) skipped: too many being read)")
        let reason: String
        if named > 0 {
            reason = "tv opens a QUIC connection's Initial packets to read its host and nothing else; the connection is forwarded untouched and never decrypted"
        } else if opened == 0 {
            reason = "no QUIC Initial packet could be opened, so QUIC connections keep the name a lookup gave them"
        } else if noName == 0 {
            reason = "no QUIC handshake could be read to the end, so QUIC connections keep the name a lookup gave them"
        } else {
            reason = "no QUIC ClientHello announced a host, so QUIC connections keep the name a lookup gave them"
        }
        // The reason continues the counts' section under them, not under the label again (a
        // new-user trial read "names from QUIC:" twice as two sections).
        out.append(String(repeating: " ", count: "names from QUIC: ".count) + reason)
        return out
    }

    /// How many closed connections took their name from the answers, and why that many: a
    /// connection is named by a lookup only when it announced no host of its own and went to an
    /// address an answer gave ("0 closed connections went to an address they named — a name a
    /// program looked up, not one the connection announced (which wins when there is one)" was
    /// hard to read: a trial).
    static func namedByLookups(_ n: UInt64) -> String {
        switch n {
        case 0: return "no closed connection took its name from them (each announced a host of its own, which comes first, or went to an address no answer gave)"
        case 1: return "1 closed connection took its name from them (it announced no host of its own, and went to an address an answer gave)"
        default: return "\(Units.grouped(Int64(clamping: n))) closed connections took their name from them (they announced no host of their own, and went to addresses an answer gave)"
        }
    }

    /// `tv status` in a proxy mode: where names come from there.
    public static let proxyModeLine = "names             from what each connection announces (\(announcedNames)): a proxy sees no DNS, so an address-only connection stays unnamed"

    /// What a connection announces that names it, in `tv status` and `tv diag` alike (status left
    /// the Host header out: a trial).
    public static let announcedNames = "SNI, CONNECT, SOCKS5, a Host header"
}
