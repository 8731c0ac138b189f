/// The fields of a TCP header the NAT reads (RFC 793 §3.1 / RFC 9293 §3.1).
public struct TCPHeader: Sendable, Equatable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    /// The flag bits of byte 13 (CWR ECE URG ACK PSH RST SYN FIN).
    public var flags: UInt8
    /// Data Offset × 4: where the payload starts, from the start of the TCP header.
    public var headerLength: Int
    /// Payload bytes (segment length minus the header).
    public var payloadLength: Int

    public static let fin: UInt8 = 0x01
    public static let syn: UInt8 = 0x02
    public static let rst: UInt8 = 0x04
    public static let psh: UInt8 = 0x08
    public static let ack: UInt8 = 0x10

    public var isSYN: Bool { flags & Self.syn != 0 }
    public var isACK: Bool { flags & Self.ack != 0 }
    public var isRST: Bool { flags & Self.rst != 0 }
    public var isFIN: Bool { flags & Self.fin != 0 }
    /// A connection request: SYN without ACK.
    public var isConnectionRequest: Bool { flags & (Self.syn | Self.ack) == Self.syn }

    /// Sequence space the segment occupies: payload + 1 for SYN + 1 for FIN (RFC 9293 §3.4).
    public var segmentLength: UInt32 {
        UInt32(payloadLength) &+ (isSYN ? 1 : 0) &+ (isFIN ? 1 : 0)
    }

    public init(sourcePort: UInt16, destinationPort: UInt16, sequenceNumber: UInt32, acknowledgmentNumber: UInt32,
                flags: UInt8, headerLength: Int = 20, payloadLength: Int = 0) {
        self.sourcePort = sourcePort
        self.destinationPort = destinationPort
        self.sequenceNumber = sequenceNumber
        self.acknowledgmentNumber = acknowledgmentNumber
        self.flags = flags
        self.headerLength = headerLength
        self.payloadLength = payloadLength
    }

    /// Reads the TCP header of `packet`. With `verifyChecksum`, a wrong checksum is a drop.
    public static func parse(_ bytes: UnsafeRawBufferPointer, _ packet: IPPacket, verifyChecksum: Bool = true) -> Result<TCPHeader, PacketDrop> {
        let base = bytes.baseAddress!
        let start = packet.transportOffset
        let length = packet.transportLength
        guard length >= 20 else { return .failure(.truncated) }
        let dataOffset = Int(base.load(fromByteOffset: start + 12, as: UInt8.self) >> 4) * 4
        guard dataOffset >= 20, dataOffset <= length else { return .failure(.badLength) }
        if verifyChecksum {
            let pseudo = InternetChecksum.pseudoHeaderSum(source: packet.source, destination: packet.destination,
                                                          protocolNumber: IPProtocolNumber.tcp, length: length)
            let sum = InternetChecksum.sum(UnsafeRawBufferPointer(start: base + start, count: length), initial: pseudo)
            guard InternetChecksum.finish(sum) == 0 else { return .failure(.badChecksum) }
        }
        return .success(TCPHeader(
            sourcePort: PacketParser.u16(base, start),
            destinationPort: PacketParser.u16(base, start + 2),
            sequenceNumber: UInt32(bigEndian: base.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self)),
            acknowledgmentNumber: UInt32(bigEndian: base.loadUnaligned(fromByteOffset: start + 8, as: UInt32.self)),
            flags: base.load(fromByteOffset: start + 13, as: UInt8.self),
            headerLength: dataOffset, payloadLength: length - dataOffset))
    }
}
