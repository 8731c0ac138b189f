import Wire
import FlowTerms

/// Rebuilds one inspected flow as a TCP connection between its real ends, from its plaintext:
/// what the decrypted capture writes so Wireshark dissects HTTP/1 and HTTP/2 without keys (as
/// sslsplit `-X` and PolarProxy do). Pure: events in, whole IP packets out, in order.
///
/// - `.opened`: the three-way handshake (RFC 9293 §3.5): SYN with the MSS option, SYN-ACK, ACK.
/// - `.reopened`: the same handshake for a stream already open, its SYNs one before each side's
///   next byte (the start of a new file of the decrypted capture).
/// - `.data`: the bytes cut into segments of at most `maximumSegmentSize` (by default as large as
///   an IP packet allows, as a capture of a sender with segmentation offload shows them), ACK on
///   each and PSH on the last, sequence numbers continuing the sender's; then the receiver's ACK.
/// - `.ended(.closed(firstFrom:))`: FIN-ACK from the side that closed first, FIN-ACK from the
///   other, the first side's ACK (RFC 9293 §3.6). `.ended(.reset(from:))`: one RST-ACK from the
///   side that reset (the flow was cut off).
///
/// Data before `.opened` opens the stream first; anything after the end is ignored. When the two
/// ends are of different families (an IPv4 client of a proxy reaching an IPv6 server), the IPv4
/// one is written as its IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2): one stream has one family.
///
/// `handle` returns whole packets; `opening`, `carrying` and `ending` return the same segments as
/// plans (header fields and which bytes of the data each carries), for a writer that builds
/// them straight into its own buffer (`TCPSegmentBuilder.append`) without copying the data first.
public struct TCPStreamSynthesizer: Sendable {
    public let client: PacketEndpoint
    public let server: PacketEndpoint
    public let maximumSegmentSize: Int
    /// The next sequence number each side sends.
    public private(set) var clientNext: UInt32
    public private(set) var serverNext: UInt32
    public private(set) var state: State = .fresh
    private var clientID: UInt16 = 1
    private var serverID: UInt16 = 1

    public enum State: Sendable, Equatable { case fresh, open, ended }

    public enum Event: Sendable, Equatable {
        case opened
        /// The handshake again at the current sequence numbers (`reopening`).
        case reopened
        case data(Direction, [UInt8])
        case ended(StreamEnd)
    }

    /// One synthesized packet and which way it went.
    public struct Packet: Sendable, Equatable {
        public var direction: Direction
        public var bytes: [UInt8]
    }

    /// One segment to send: which way, its header fields, and the range of the data event's
    /// bytes it carries (empty for a segment without payload).
    public struct PlannedSegment: Sendable, Equatable {
        public var direction: Direction
        public var fields: TCPSegmentBuilder.Segment
        public var payload: Range<Int>
    }

    /// The window every synthesized segment advertises.
    public static let window: UInt16 = 65_535

    /// The largest MSS a packet's 16-bit length field allows: 65,495 over IPv4 (65,535 less the IPv4
    /// and TCP headers, RFC 791 "Total Length"), 65,515 over IPv6 (the Payload Length counts the
    /// TCP header but not the IPv6 header, RFC 8200 §3). Fewer, larger segments cost the capture
    /// less per byte, and Wireshark reassembles HTTP/1 and HTTP/2 across them alike.
    public static func largestMSS(isIPv6: Bool) -> Int { isIPv6 ? 65_515 : 65_495 }

    /// - Parameters:
    ///   - clientISN / serverISN: the initial sequence numbers (the caller's choice: the capture
    ///     derives them from the flow id, so a file is reproducible).
    ///   - maximumSegmentSize: nil for `largestMSS`.
    public init(client: PacketEndpoint, server: PacketEndpoint, clientISN: UInt32, serverISN: UInt32, maximumSegmentSize: Int? = nil) {
        var c = client, s = server
        if c.address.isIPv6 != s.address.isIPv6 {
            c.address = Self.mapped(c.address)
            s.address = Self.mapped(s.address)
        }
        self.client = c
        self.server = s
        self.maximumSegmentSize = min(max(1, maximumSegmentSize ?? Self.largestMSS(isIPv6: c.address.isIPv6)),
                                      Self.largestMSS(isIPv6: c.address.isIPv6))
        clientNext = clientISN
        serverNext = serverISN
    }

    /// `address` as IPv6: an IPv4 address becomes `::ffff:a.b.c.d`.
    static func mapped(_ address: PacketAddress) -> PacketAddress {
        guard !address.isIPv6 else { return address }
        return PacketAddress(bytes: [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + address.bytes)!
    }

    public mutating func handle(_ event: Event) -> [Packet] {
        switch event {
        case .opened:
            return packets(opening(), data: [])
        case .reopened:
            return packets(reopening(), data: [])
        case .data(let direction, let bytes):
            return packets(carrying(direction, count: bytes.count), data: bytes)
        case .ended(let end):
            return packets(ending(end), data: [])
        }
    }

    /// `.opened`: the handshake's segments (none once open).
    public mutating func opening() -> [PlannedSegment] {
        state == .fresh ? open() : []
    }

    /// A handshake again for a stream already open, at its current sequence numbers (each SYN
    /// one before the side's next byte, RFC 9293 §3.4), so the stream's next segments follow it
    /// with no gap: what a new file of the decrypted capture starts with for every stream still
    /// open (a rotation, or a new file after a full disk), so each file reads whole on its own.
    /// None unless open; the stream goes on as before.
    public mutating func reopening() -> [PlannedSegment] {
        guard state == .open else { return [] }
        clientNext &-= 1
        serverNext &-= 1
        return open()
    }

    /// `.data` of `count` bytes going `direction`: the segments, each with its range of those bytes
    /// (none after the end).
    public mutating func carrying(_ direction: Direction, count: Int) -> [PlannedSegment] {
        guard state != .ended else { return [] }
        var out = state == .fresh ? open() : []
        out += data(direction, count: count)
        return out
    }

    /// `.ended`: the FINs, or the RST (none after the end).
    public mutating func ending(_ end: StreamEnd) -> [PlannedSegment] {
        guard state != .ended else { return [] }
        var out = state == .fresh ? open() : []
        switch end {
        case .closed(let first): out += finish(first: first)
        case .reset(let from): out += cutOff(from: from)
        }
        state = .ended
        return out
    }

    private func packets(_ planned: [PlannedSegment], data: [UInt8]) -> [Packet] {
        data.withUnsafeBytes { raw in
            planned.map { Packet(direction: $0.direction, bytes: TCPSegmentBuilder.packet($0.fields, payload: UnsafeRawBufferPointer(rebasing: raw[$0.payload]))) }
        }
    }

    private mutating func segment(_ direction: Direction, flags: UInt8, payload: Range<Int> = 0..<0,
                                  mss: UInt16? = nil) -> PlannedSegment {
        let fromClient = direction == .clientToServer
        let id: UInt16
        if fromClient { id = clientID; clientID &+= 1 } else { id = serverID; serverID &+= 1 }
        let fields = TCPSegmentBuilder.Segment(
            source: fromClient ? client : server, destination: fromClient ? server : client,
            sequence: fromClient ? clientNext : serverNext,
            acknowledgment: flags & TCPFlags.ack != 0 ? (fromClient ? serverNext : clientNext) : 0,
            flags: flags, window: Self.window, identification: id, maximumSegmentSize: mss)
        let length = UInt32(payload.count) &+ (flags & TCPFlags.syn != 0 ? 1 : 0) &+ (flags & TCPFlags.fin != 0 ? 1 : 0)
        if fromClient { clientNext &+= length } else { serverNext &+= length }
        return PlannedSegment(direction: direction, fields: fields, payload: payload)
    }

    private mutating func open() -> [PlannedSegment] {
        state = .open
        let mss = UInt16(clamping: maximumSegmentSize)
        return [segment(.clientToServer, flags: TCPFlags.syn, mss: mss),
                segment(.serverToClient, flags: TCPFlags.syn | TCPFlags.ack, mss: mss),
                segment(.clientToServer, flags: TCPFlags.ack)]
    }

    private mutating func data(_ direction: Direction, count: Int) -> [PlannedSegment] {
        guard count > 0 else { return [] }
        var out: [PlannedSegment] = []
        var start = 0
        while start < count {
            let end = min(start + maximumSegmentSize, count)
            let flags = TCPFlags.ack | (end == count ? TCPFlags.psh : 0)
            out.append(segment(direction, flags: flags, payload: start..<end))
            start = end
        }
        out.append(segment(direction.opposite, flags: TCPFlags.ack))
        return out
    }

    private mutating func finish(first: Direction) -> [PlannedSegment] {
        [segment(first, flags: TCPFlags.fin | TCPFlags.ack),
         segment(first.opposite, flags: TCPFlags.fin | TCPFlags.ack),
         segment(first, flags: TCPFlags.ack)]
    }

    private mutating func cutOff(from: Direction) -> [PlannedSegment] {
        [segment(from, flags: TCPFlags.rst | TCPFlags.ack)]
    }
}
