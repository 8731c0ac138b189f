#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Why tv could not send a program's datagram on, answered with an ICMP "destination
/// unreachable" (RFC 792, RFC 4443 §3.1) so that the program's connected socket fails at once
/// instead of waiting out its timeout, as it would have without tv: its own send(2) would have
/// failed then (no route, a firewall), and through the TUN it succeeds.
///
/// The codes are among those Linux takes as hard errors (`icmp_err_convert` and
/// `icmpv6_err_convert`, their `fatal` column): a UDP socket without `IP_RECVERR` /
/// `IPV6_RECVERR` ignores the soft ones (net and host unreachable, RFC 1122 §3.2.2.1 calls
/// them hints), so the program would learn nothing.
public enum UnsendableDatagram: Sendable, Equatable {
    /// No route to the destination (tv's send or connect failed with ENETUNREACH,
    /// EHOSTUNREACH, EHOSTDOWN or ENONET): type 3 code 6 "destination network unknown" (the
    /// program's socket reports ENETUNREACH) / ICMPv6 type 1 code 6 "reject route to
    /// destination" (EACCES; Linux's missing route is a reject route, `RTF_REJECT`).
    case noRoute
    /// Refused: an address in `--mode tun`'s own TUN networks (`PacketDrop.tunnelNetwork`), or
    /// a local firewall (EPERM, EACCES): type 3 code 13 "communication administratively
    /// prohibited" (EHOSTUNREACH) / ICMPv6 type 1 code 1 (EACCES).
    case prohibited

    /// The kind for a failed connect(2) or send(2) of tv's upstream socket; nil for the errors
    /// that say nothing about the destination (EMFILE, ENOBUFS…: counted only).
    public init?(errno: Int32) {
        switch errno {
        case ENETUNREACH, EHOSTUNREACH, EHOSTDOWN, ENONET: self = .noRoute
        case EPERM, EACCES: self = .prohibited
        default: return nil
        }
    }

    /// ICMP / ICMPv6 type and code.
    public func icmp(isIPv6: Bool) -> (type: UInt8, code: UInt8) {
        switch (self, isIPv6) {
        case (.noRoute, false): return (3, 6)
        case (.noRoute, true): return (1, 6)
        case (.prohibited, false): return (3, 13)
        case (.prohibited, true): return (1, 1)
        }
    }

    /// What the program's connected socket then reports on Linux.
    public func programSees(isIPv6: Bool) -> Errno {
        switch (self, isIPv6) {
        case (.noRoute, false): return Errno(ENETUNREACH)
        case (.prohibited, false): return Errno(EHOSTUNREACH)
        case (_, true): return Errno(EACCES)
        }
    }
}
