/// The sentence `tv diag` puts above its verdict when name resolution is broken in a tunnel
/// mode; nil when it is fine (a notice shown when all is well teaches the reader to ignore it).
/// Pure: the tunnel's DNS counters in, a case and its sentence out.
public enum NameResolutionNotice: Sendable, Equatable {
    /// The tunnel could announce no DNS server (`tunnel.dnsServers` = 0, where a session says).
    case noServerAnnounced
    /// `queries` lookups went out through the tunnel and none was answered (`timeouts` gave up).
    case unanswered(queries: UInt64, timeouts: UInt64)

    /// The notice for a session's `status` values; nil when none is due (not a tunnel mode, or
    /// lookups are answered).
    /// - `tunnel.dnsServers`: servers announced (absent: this session does not announce any);
    /// - `tunnel.dnsQueries`, `tunnel.dnsAnswers`, `tunnel.dnsTimeouts`: the tunnel's counters.
    public static func of(_ values: [String: String]) -> NameResolutionNotice? {
        func n(_ key: String) -> UInt64? { values["tunnel." + key].flatMap { UInt64($0) } }
        if n("dnsServers") == 0 { return .noServerAnnounced }
        let queries = n("dnsQueries") ?? 0, answers = n("dnsAnswers") ?? 0, timeouts = n("dnsTimeouts") ?? 0
        if queries > 0, answers == 0, timeouts > 0 { return .unanswered(queries: queries, timeouts: timeouts) }
        return nil
    }

    public var sentence: String {
        switch self {
        case .noServerAnnounced:
            return "No DNS server could be announced through the tunnel, so programs cannot look names up while it runs; check the servers in /etc/resolv.conf and start the session again."
        case let .unanswered(queries, timeouts):
            return "Name lookups are going out through the tunnel and nothing comes back (\(queries) sent, none answered, \(timeouts) given up), which is what a page loading forever looks like; check that the DNS servers in /etc/resolv.conf can be reached."
        }
    }
}
