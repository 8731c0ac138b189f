import FlowTerms
import TVHome
import Wire

/// The comment a capture keeps beside each ICMP error tv writes to a program (pcapng
/// opt_comment, which tshark shows as `frame.comment` and Wireshark as the packet's comment):
/// where the error came from, since the packet itself cannot always say it (pure).
///
/// The capture is the program↔tv leg: it holds what the program received. An error the network
/// sent about tv's own datagram cannot reach the program as it came: its quote is of tv's
/// datagram (tv's address and port), and the program's kernel matches an ICMP error to its
/// socket by the quoted addresses and ports (Linux `icmp_unreach` → `udp_err`,
/// `icmpv6_notify` → `udpv6_err`; `tcp_v4_err` / `tcp_v6_err` also by the quoted sequence
/// number). So tv writes its own copy, quoting the program's datagram, and says here which one
/// it is: the network's (from whom, about which of tv's datagrams), or tv's own answer where no
/// ICMP came (tv's own send or connect failed).
public enum ICMPErrorNote {
    /// What an ICMP error said, in words: "ICMP fragmentation needed (next-hop MTU 1280)",
    /// "ICMPv6 packet too big (MTU 1280)", "ICMP port unreachable".
    public static func words(_ action: UpstreamErrorAction, isIPv6: Bool) -> String {
        let icmp = isIPv6 ? "ICMPv6" : "ICMP"
        switch action {
        case .pathTooSmall(let mtu): return isIPv6 ? "ICMPv6 packet too big (MTU \(mtu))" : "ICMP fragmentation needed (next-hop MTU \(mtu))"
        case .portUnreachable: return "\(icmp) port unreachable"
        case .unsendable(let why):
            let (type, code) = why.icmp(isIPv6: isIPv6)
            return "\(icmp) \(ICMPNames.name(isV6: isIPv6, type: type, code: code).lowercased())"
        case .ignore: return icmp
        }
    }

    /// The network's error about tv's datagram `tvSent` (tv's socket → `upstream`), from `from`
    /// (the router or server that sent it; nil: the kernel did not say), passed on to the
    /// program quoting its own datagram: with its own headers (`lengthsKnown`: tv still had them,
    /// `SentDatagrams`) or rebuilt from the five-tuple with lengths that count only the
    /// `quotedPayload` bytes the sender quoted.
    public static func forwarded(_ action: UpstreamErrorAction, isIPv6: Bool, from: PacketAddress?, tvSent: PacketEndpoint?,
                                 upstream: PacketEndpoint, quotedPayload: Int, lengthsKnown: Bool) -> String {
        let sender = from.map { "\($0)" } ?? "the network"
        let datagram = tvSent.map { "\($0) → \(upstream)" } ?? "to \(upstream)"
        let bytes = quotedPayload == 1 ? "1 payload byte" : "\(ByteWords.grouped(Int64(quotedPayload))) payload bytes"
        let quote = lengthsKnown
            ? "its headers as the program sent them, then the \(bytes) \(sender) quoted"
            : "its addresses and ports with lengths that count only the \(bytes) \(sender) quoted (tv no longer had that datagram's headers)"
        return "tv's copy for the program of the \(words(action, isIPv6: isIPv6)) \(sender) sent about tv's datagram \(datagram); "
            + "it quotes the program's datagram instead (\(quote)), since the program's kernel finds its socket by the quoted addresses and ports"
    }

    /// tv's own "fragmentation needed" / "packet too big": tv's send of the program's
    /// `length`-byte datagram to `upstream` failed with EMSGSIZE, its socket's path MTU being `mtu`.
    public static func ownPathMTU(mtu: Int, length: Int, upstream: PacketEndpoint, isIPv6: Bool) -> String {
        "tv's own \(words(.pathTooSmall(mtu: mtu), isIPv6: isIPv6)): tv could not send this \(ByteWords.grouped(Int64(length)))-byte datagram on to "
            + "\(upstream) (EMSGSIZE: its path MTU there is \(mtu)); no router sent it"
    }

    /// tv's own destination unreachable for a datagram it could not send on (`error`: its send's
    /// or connect's error).
    public static func ownUnsendable(_ why: UnsendableDatagram, error: Errno?, upstream: PacketAddress, isIPv6: Bool) -> String {
        "tv's own \(words(.unsendable(why), isIPv6: isIPv6)): tv could not send the datagram on to \(upstream)"
            + (error.map { ": \($0.namedPhrase)" } ?? "") + "; no ICMP came from the network"
    }

    /// tv's own destination unreachable answering a SYN whose upstream connect failed with `error`
    /// (`FailedConnectAnswer`), `type`/`code` its ICMP.
    public static func ownConnectAnswer(type: UInt8, code: UInt8, error: Errno, upstream: PacketEndpoint, isIPv6: Bool) -> String {
        "tv's own \(isIPv6 ? "ICMPv6" : "ICMP") \(ICMPNames.name(isV6: isIPv6, type: type, code: code).lowercased()): "
            + "tv's connect to \(upstream) failed: \(error.namedPhrase); no ICMP of the network's is passed on"
    }

    /// tv's own destination unreachable answering a retransmission of a SYN it answered so
    /// before (`TCPNATTable.SYNDecision.failedAgain`), `type`/`code` its ICMP.
    public static func ownConnectAnswerAgain(type: UInt8, code: UInt8, upstream: PacketEndpoint, isIPv6: Bool) -> String {
        "tv's own \(isIPv6 ? "ICMPv6" : "ICMP") \(ICMPNames.name(isV6: isIPv6, type: type, code: code).lowercased()) again: "
            + "the program resent its SYN after tv's connect to \(upstream) failed"
    }
}
