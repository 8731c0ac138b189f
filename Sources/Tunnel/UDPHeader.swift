import Wire

/// The UDP header of a whole (reassembled) datagram (RFC 768; RFC 8200 §8.1 for IPv6).
public struct UDPHeader: Sendable, Equatable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    /// Where the payload starts in the packet's bytes.
    public var payloadOffset: Int
    /// Payload bytes (UDP Length − 8).
    public var payloadLength: Int

    /// Reads the UDP header of `packet`. The UDP Length must lie between 8 and the bytes the IP
    /// header gives it (bytes past it are padding). The checksum is verified unless it is 0 over IPv4 ("not computed", RFC 768); over IPv6
    /// a zero checksum is a drop (RFC 8200 §8.1).
    public static func parse(_ bytes: UnsafeRawBufferPointer, _ packet: IPPacket, verifyChecksum: Bool = true) -> Result<UDPHeader, PacketDrop> {
        let base = bytes.baseAddress!
        let start = packet.transportOffset
        let length = packet.transportLength
        guard length >= 8 else { return .failure(.truncated) }
        let udpLength = Int(PacketParser.u16(base, start + 4))
        guard udpLength >= 8, udpLength <= length else { return .failure(.badLength) }
        let checksum = PacketParser.u16(base, start + 6)
        if checksum == 0 && packet.isIPv6 { return .failure(.badChecksum) }
        if verifyChecksum && checksum != 0 {
            let pseudo = InternetChecksum.pseudoHeaderSum(source: packet.source, destination: packet.destination,
                                                          protocolNumber: IPProtocolNumber.udp, length: udpLength)
            let sum = InternetChecksum.sum(UnsafeRawBufferPointer(start: base + start, count: udpLength), initial: pseudo)
            guard InternetChecksum.finish(sum) == 0 else { return .failure(.badChecksum) }
        }
        return .success(UDPHeader(sourcePort: PacketParser.u16(base, start), destinationPort: PacketParser.u16(base, start + 2),
                                  payloadOffset: start + 8, payloadLength: udpLength - 8))
    }
}
