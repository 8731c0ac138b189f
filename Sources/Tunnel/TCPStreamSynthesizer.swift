import Wire
import FlowTerms

/// Rebuilds one inspected flow as a TCP connection between its real ends, from its plaintext:
/// what the decrypted capture writes so Wireshark dissects HTTP/1 and HTTP/2 without keys (as
/// sslsplit `-X` and PolarProxy do). Pure: events in, whole IP packets out, in order.
///
/// - `.opened`: the three-way handshake (RFC 9293 §3.5): SYN with the MSS option, SYN-ACK, ACK.
/// - `.data`: the bytes cut into segments of at most `maximumSegmentSize`, ACK on each and PSH on
///   the last, sequence numbers continuing the sender's; then the receiver's ACK of them.
/// - `.ended(reset: false)`: FIN-ACK from the client, FIN-ACK from the server, the client's ACK
///   (RFC 9293 §3.6). `.ended(reset: true)`: one RST-ACK from the server (the flow was cut off).
///
/// Data before `.opened` opens the stream first; anything after the end is ignored. When the two
/// ends are of different families (an IPv4 client of a proxy reaching an IPv6 server), the IPv4
/// one is written as its IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2): one stream has one family.
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
        case data(Direction, [UInt8])
        case ended(reset: Bool)
    }

    /// One synthesized packet and which way it went.
    public struct Packet: Sendable, Equatable {
        public var direction: Direction
        public var bytes: [UInt8]
    }

    /// The window every synthesized segment advertises.
    public static let window: UInt16 = 65_535

    /// The largest MSS that keeps every packet within a 1,500-byte MTU: 1,460 over IPv4, 1,440
    /// over IPv6.
    public static func standardMSS(isIPv6: Bool) -> Int { isIPv6 ? 1_440 : 1_460 }

    /// - Parameters:
    ///   - clientISN / serverISN: the initial sequence numbers (the caller's choice: the capture
    ///     derives them from the flow id, so a file is reproducible).
    ///   - maximumSegmentSize: nil for `standardMSS`.
    public init(client: PacketEndpoint, server: PacketEndpoint, clientISN: UInt32, serverISN: UInt32, maximumSegmentSize: Int? = nil) {
        var c = client, s = server
        if c.address.isIPv6 != s.address.isIPv6 {
            c.address = Self.mapped(c.address)
            s.address = Self.mapped(s.address)
        }
        self.client = c
        self.server = s
        self.maximumSegmentSize = max(1, maximumSegmentSize ?? Self.standardMSS(isIPv6: c.address.isIPv6))
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
            return state == .fresh ? open() : []
        case .data(let direction, let bytes):
            guard state != .ended else { return [] }
            var out = state == .fresh ? open() : []
            out += data(direction, bytes)
            return out
        case .ended(let reset):
            guard state != .ended else { return [] }
            var out = state == .fresh ? open() : []
            out += reset ? cutOff() : finish()
            state = .ended
            return out
        }
    }

    private mutating func segment(_ direction: Direction, flags: UInt8, payload: ArraySlice<UInt8> = [],
                                  mss: UInt16? = nil) -> Packet {
        let fromClient = direction == .clientToServer
        let id: UInt16
        if fromClient { id = clientID; clientID &+= 1 } else { id = serverID; serverID &+= 1 }
        let fields = TCPSegmentBuilder.Segment(
            source: fromClient ? client : server, destination: fromClient ? server : client,
            sequence: fromClient ? clientNext : serverNext,
            acknowledgment: flags & TCPFlags.ack != 0 ? (fromClient ? serverNext : clientNext) : 0,
            flags: flags, window: Self.window, identification: id, maximumSegmentSize: mss)
        let bytes = payload.withUnsafeBytes { TCPSegmentBuilder.packet(fields, payload: $0) }
        let length = UInt32(payload.count) &+ (flags & TCPFlags.syn != 0 ? 1 : 0) &+ (flags & TCPFlags.fin != 0 ? 1 : 0)
        if fromClient { clientNext &+= length } else { serverNext &+= length }
        return Packet(direction: direction, bytes: bytes)
    }

    private mutating func open() -> [Packet] {
        state = .open
        let mss = UInt16(clamping: maximumSegmentSize)
        return [segment(.clientToServer, flags: TCPFlags.syn, mss: mss),
                segment(.serverToClient, flags: TCPFlags.syn | TCPFlags.ack, mss: mss),
                segment(.clientToServer, flags: TCPFlags.ack)]
    }

    private mutating func data(_ direction: Direction, _ bytes: [UInt8]) -> [Packet] {
        guard !bytes.isEmpty else { return [] }
        var out: [Packet] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + maximumSegmentSize, bytes.count)
            let flags = TCPFlags.ack | (end == bytes.count ? TCPFlags.psh : 0)
            out.append(segment(direction, flags: flags, payload: bytes[start..<end]))
            start = end
        }
        out.append(segment(direction.opposite, flags: TCPFlags.ack))
        return out
    }

    private mutating func finish() -> [Packet] {
        [segment(.clientToServer, flags: TCPFlags.fin | TCPFlags.ack),
         segment(.serverToClient, flags: TCPFlags.fin | TCPFlags.ack),
         segment(.clientToServer, flags: TCPFlags.ack)]
    }

    private mutating func cutOff() -> [Packet] {
        [segment(.serverToClient, flags: TCPFlags.rst | TCPFlags.ack)]
    }
}
