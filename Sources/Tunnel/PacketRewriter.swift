/// The NAT rewrite of a TCP segment in place: new source and destination address and port, the
/// TCP checksum updated incrementally (RFC 1624 Eqn. 3 over the changed words: both addresses
/// and both ports, 12 bytes for IPv4 and 36 for IPv6), the IPv4 header checksum recomputed over
/// the IHL bytes. Sequence numbers and options are untouched (tun-nat.md).
///
/// A segment whose checksum the kernel left unfinished (CHECKSUM_PARTIAL: read from a TUN with
/// `IFF_VNET_HDR`, `VirtioNetHeader.needsChecksum`) holds only the pseudo-header sum in its
/// checksum field: there only the address change is applied, without complements
/// (`InternetChecksum.adjustPartial`); the ports are summed later with the rest of the segment.
/// GSO segments are rewritten the same way (the field's pseudo-header sum covers the whole
/// packet's length, which NAT does not change).
public enum PacketRewriter {
    /// Rewrites the segment `packet` describes in `bytes`. The new addresses must be of the
    /// packet's family.
    /// - Parameter checksumIsPartial: the TCP checksum field holds a partial (pseudo-header) sum
    ///   (`VirtioNetHeader.needsChecksum`), not a finished checksum.
    public static func rewriteTCP(_ bytes: UnsafeMutableRawBufferPointer, _ packet: IPPacket,
                                  source: PacketEndpoint, destination: PacketEndpoint, checksumIsPartial: Bool = false) {
        let base = bytes.baseAddress!
        let t = packet.transportOffset
        let checksum = PacketParser.u16(UnsafeRawPointer(base), t + 16)
        let updated: UInt16
        if checksumIsPartial {
            updated = InternetChecksum.adjustPartial(checksum, oldSum: packet.source.wordSum &+ packet.destination.wordSum,
                                                     newSum: source.address.wordSum &+ destination.address.wordSum)
        } else {
            let oldSourcePort = PacketParser.u16(UnsafeRawPointer(base), t)
            let oldDestinationPort = PacketParser.u16(UnsafeRawPointer(base), t + 2)
            let oldSum = packet.source.wordSum &+ packet.destination.wordSum &+ UInt32(oldSourcePort) &+ UInt32(oldDestinationPort)
            let newSum = source.address.wordSum &+ destination.address.wordSum &+ UInt32(source.port) &+ UInt32(destination.port)
            updated = InternetChecksum.adjust(checksum, oldSum: oldSum, newSum: newSum)
        }
        if packet.isIPv6 {
            source.address.write(to: base + 8)
            destination.address.write(to: base + 24)
        } else {
            source.address.write(to: base + 12)
            destination.address.write(to: base + 16)
            setIPv4HeaderChecksum(base, headerLength: t)
        }
        base.storeBytes(of: source.port.bigEndian, toByteOffset: t, as: UInt16.self)
        base.storeBytes(of: destination.port.bigEndian, toByteOffset: t + 2, as: UInt16.self)
        base.storeBytes(of: updated.bigEndian, toByteOffset: t + 16, as: UInt16.self)
    }

    /// Recomputes the IPv4 header checksum over `headerLength` bytes (RFC 791 §3.1).
    @inline(__always)
    static func setIPv4HeaderChecksum(_ base: UnsafeMutableRawPointer, headerLength: Int) {
        base.storeBytes(of: 0, toByteOffset: 10, as: UInt16.self)
        let sum = InternetChecksum.sum(UnsafeRawBufferPointer(start: base, count: headerLength))
        base.storeBytes(of: InternetChecksum.finish(sum).bigEndian, toByteOffset: 10, as: UInt16.self)
    }
}
