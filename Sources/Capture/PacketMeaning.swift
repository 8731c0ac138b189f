import Wire

/// What one packet meant for its connection, the title of a row in `tv packets` (seed "Flow
/// Inspector": every packet is titled by what it meant; the flags' acronyms come second).
///
/// Stored in `packets.meaning` as the raw value.
public enum PacketMeaning: String, Sendable, Equatable, CaseIterable {
    /// SYN without ACK: the connection was asked for.
    case opened
    /// SYN with ACK: the other side accepted it.
    case accepted
    /// Carried payload (TCP with data, every UDP datagram, anything not TCP).
    case data
    /// A TCP segment with ACK and nothing else to say: what was sent arrived.
    case deliveryConfirmed = "delivery_confirmed"
    /// FIN: this side finished sending (data on the same segment is still its last words).
    case finishedSending = "finished_sending"
    /// RST: the connection was cut off; or an ICMP destination unreachable (ICMPv4 type 3,
    /// ICMPv6 type 1), UDP's answer for the same (a port unreachable was titled "data": a trial).
    case cutOff = "cut_off"
    /// An ICMP "fragmentation needed" (type 3 code 4) or ICMPv6 "packet too big" (type 2): a
    /// datagram was larger than a link on the way takes (its MTU is in the message). Nothing was
    /// cut off: the sender sends smaller and the flow goes on (a trial read IPv4's as "cut off",
    /// IPv6's as "data").
    case tooBigForPath = "too_big_for_path"

    /// The words people read ("delivery confirmed").
    public var words: String {
        switch self {
        case .opened: return "opened"
        case .accepted: return "accepted"
        case .data: return "data"
        case .deliveryConfirmed: return "delivery confirmed"
        case .finishedSending: return "finished sending"
        case .cutOff: return "cut off"
        case .tooBigForPath: return "too big for the path"
        }
    }

    /// Classifies a packet.
    /// - Parameters:
    ///   - tcpFlags: the TCP header's flag byte (RFC 9293 §3.1: CWR ECE URG ACK PSH RST SYN FIN,
    ///     high bit to low), nil for a packet that is not TCP.
    ///   - payloadLength: bytes after the transport header.
    /// RST outranks every other flag: it arrives with ACK set almost every time, and reading it
    /// as a confirmation would hide the one thing worth telling. Then SYN (with or without ACK),
    /// then FIN, then payload; a segment with none of them confirms delivery.
    ///   - destinationUnreachable: the packet is an ICMP or ICMPv6 destination unreachable.
    ///   - pathTooSmall: the packet is an ICMP fragmentation needed or ICMPv6 packet too big
    ///     (it outranks `destinationUnreachable`, of which IPv4's is a code).
    public static func classify(tcpFlags: UInt8?, payloadLength: Int, destinationUnreachable: Bool = false,
                                pathTooSmall: Bool = false) -> PacketMeaning {
        if pathTooSmall { return .tooBigForPath }
        if destinationUnreachable { return .cutOff }
        guard let flags = tcpFlags else { return .data }
        if flags & TCPFlags.rst != 0 { return .cutOff }
        if flags & TCPFlags.syn != 0 { return flags & TCPFlags.ack != 0 ? .accepted : .opened }
        if flags & TCPFlags.fin != 0 { return .finishedSending }
        if payloadLength > 0 { return .data }
        return .deliveryConfirmed
    }
}
