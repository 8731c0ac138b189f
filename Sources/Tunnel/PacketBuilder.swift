import Wire

/// Crafts the packets the tunnel writes into the TUN itself: UDP datagrams carrying replies
/// (src = the remote, dst = the app) and TCP resets. Every checksum is computed in full: the
/// kernel drops what does not verify (tun-nat.md).
public enum PacketBuilder {
    /// IPv4 TTL / IPv6 Hop Limit of crafted packets.
    public static let hopLimit: UInt8 = 64
    /// The largest UDP payload that fits one IPv4 (65,507) or IPv6 (65,527) packet.
    public static func maximumUDPPayload(isIPv6: Bool) -> Int { isIPv6 ? 65_535 - 8 : 65_535 - 20 - 8 }

    /// Bytes a UDP packet with `payloadCount` bytes takes.
    public static func udpPacketLength(isIPv6: Bool, payloadCount: Int) -> Int { (isIPv6 ? 40 : 20) + 8 + payloadCount }

    /// Writes an IP/UDP packet (RFC 768) into `buffer` and returns its length. The payload must
    /// already sit at `buffer[udpPacketLength(…) - payloadCount…]`, i.e. right after the 28 (IPv4)
    /// or 48 (IPv6) header bytes, so a reply read from a socket is never copied.
    /// - Parameters:
    ///   - identification: the IPv4 Identification (ignored for IPv6).
    ///   - dontFragment: set IPv4 DF (ignored for IPv6).
    /// - Returns: the packet length, or nil when the payload is too long for one packet.
    public static func udp(into buffer: UnsafeMutableRawBufferPointer, source: PacketEndpoint, destination: PacketEndpoint,
                           payloadCount: Int, identification: UInt16 = 0, dontFragment: Bool = false) -> Int? {
        let v6 = source.address.isIPv6
        guard payloadCount <= maximumUDPPayload(isIPv6: v6) else { return nil }
        let ipLength = v6 ? 40 : 20
        let total = ipLength + 8 + payloadCount
        guard buffer.count >= total else { return nil }
        let base = buffer.baseAddress!
        writeIPHeader(base, source: source.address, destination: destination.address, protocolNumber: IPProtocolNumber.udp,
                      transportLength: 8 + payloadCount, identification: identification, dontFragment: dontFragment)
        let u = base + ipLength
        u.storeBytes(of: source.port.bigEndian, as: UInt16.self)
        u.storeBytes(of: destination.port.bigEndian, toByteOffset: 2, as: UInt16.self)
        u.storeBytes(of: UInt16(8 + payloadCount).bigEndian, toByteOffset: 4, as: UInt16.self)
        u.storeBytes(of: 0, toByteOffset: 6, as: UInt16.self)
        let pseudo = InternetChecksum.pseudoHeaderSum(source: source.address, destination: destination.address,
                                                      protocolNumber: IPProtocolNumber.udp, length: 8 + payloadCount)
        var checksum = InternetChecksum.finish(InternetChecksum.sum(UnsafeRawBufferPointer(start: u, count: 8 + payloadCount), initial: pseudo))
        // A computed 0 is sent as all ones (RFC 768; mandatory for IPv6, RFC 8200 §8.1).
        if checksum == 0 { checksum = 0xffff }
        u.storeBytes(of: checksum.bigEndian, toByteOffset: 6, as: UInt16.self)
        return total
    }

    /// A UDP packet as an array (tests).
    public static func udp(source: PacketEndpoint, destination: PacketEndpoint, payload: [UInt8], identification: UInt16 = 0,
                           dontFragment: Bool = false) -> [UInt8]? {
        let header = source.address.isIPv6 ? 48 : 28
        var out = [UInt8](repeating: 0, count: header + payload.count)
        out.replaceSubrange(header..., with: payload)
        let n = out.withUnsafeMutableBytes { udp(into: $0, source: source, destination: destination, payloadCount: payload.count,
                                                      identification: identification, dontFragment: dontFragment) }
        return n == nil ? nil : out
    }

    /// Writes a 20-byte TCP segment without options or payload (a reset) and returns its length.
    public static func tcp(into buffer: UnsafeMutableRawBufferPointer, source: PacketEndpoint, destination: PacketEndpoint,
                           sequence: UInt32, acknowledgment: UInt32, flags: UInt8, window: UInt16 = 0, dontFragment: Bool = false) -> Int {
        let v6 = source.address.isIPv6
        let ipLength = v6 ? 40 : 20
        let base = buffer.baseAddress!
        writeIPHeader(base, source: source.address, destination: destination.address, protocolNumber: IPProtocolNumber.tcp,
                      transportLength: 20, identification: 0, dontFragment: dontFragment)
        let t = base + ipLength
        t.storeBytes(of: source.port.bigEndian, as: UInt16.self)
        t.storeBytes(of: destination.port.bigEndian, toByteOffset: 2, as: UInt16.self)
        t.storeBytes(of: sequence.bigEndian, toByteOffset: 4, as: UInt32.self)
        t.storeBytes(of: acknowledgment.bigEndian, toByteOffset: 8, as: UInt32.self)
        t.storeBytes(of: UInt8(5 << 4), toByteOffset: 12, as: UInt8.self)
        t.storeBytes(of: flags, toByteOffset: 13, as: UInt8.self)
        t.storeBytes(of: window.bigEndian, toByteOffset: 14, as: UInt16.self)
        t.storeBytes(of: UInt32(0), toByteOffset: 16, as: UInt32.self)  // checksum + urgent pointer
        let pseudo = InternetChecksum.pseudoHeaderSum(source: source.address, destination: destination.address,
                                                      protocolNumber: IPProtocolNumber.tcp, length: 20)
        let checksum = InternetChecksum.finish(InternetChecksum.sum(UnsafeRawBufferPointer(start: t, count: 20), initial: pseudo))
        t.storeBytes(of: checksum.bigEndian, toByteOffset: 16, as: UInt16.self)
        return ipLength + 20
    }

    /// The reset answering `segment` (RFC 9293 §3.10.7.1, a segment for no connection): if it
    /// carried ACK, `RST` with seq = its ack; otherwise `RST|ACK` with seq 0 and ack = its seq +
    /// its length. `from`/`to` are the segment's destination and source.
    public static func reset(into buffer: UnsafeMutableRawBufferPointer, answering segment: TCPHeader,
                             from: PacketEndpoint, to: PacketEndpoint) -> Int {
        if segment.isACK {
            return tcp(into: buffer, source: from, destination: to, sequence: segment.acknowledgmentNumber, acknowledgment: 0, flags: TCPFlags.rst)
        }
        return tcp(into: buffer, source: from, destination: to, sequence: 0,
                   acknowledgment: segment.sequenceNumber &+ segment.segmentLength, flags: TCPFlags.rst | TCPFlags.ack)
    }

    /// The most of an invoking packet an ICMP error quotes, so the whole error stays within 576
    /// bytes for IPv4 (RFC 1812 §4.3.2.3: 576 − 20 − 8) and 1,280 bytes for IPv6 (RFC 4443
    /// §2.4 (c): 1,280 − 40 − 8).
    public static func maximumQuote(isIPv6: Bool) -> Int { isIPv6 ? 1_232 : 548 }

    /// Writes the ICMP error that tells the app its datagram does not fit the path: for IPv4
    /// "destination unreachable, fragmentation needed and DF set" (RFC 792 type 3 code 4) with
    /// the next-hop MTU in the low 16 bits of the second word (RFC 1191 §4); for IPv6 "packet too
    /// big" (RFC 4443 §3.2, type 2 code 0, a 32-bit MTU). The body quotes the start of `original`
    /// (its IP header and as much more as `maximumQuote` allows), so the app's kernel finds the
    /// socket and lowers its path MTU toward `original`'s destination.
    /// - Parameters:
    ///   - original: the app's packet as read from the TUN (its IP header first); only its first
    ///     `originalLength` bytes are its (padding after them is ignored).
    ///   - source: who reports it (the remote the datagram was for); the destination is
    ///     `original`'s source, read from its header.
    ///   - mtu: the path MTU in bytes (IPv4: at most 65,535).
    ///   - identification: the IPv4 Identification (ignored for IPv6).
    /// - Returns: the packet's length (IPv4 20 + 8 + quote, IPv6 40 + 8 + quote), or nil when
    ///   `original` is shorter than its IP header, of another family than `source`, or
    ///   `buffer` is too small.
    public static func pathTooSmall(into buffer: UnsafeMutableRawBufferPointer, original: UnsafeRawBufferPointer, originalLength: Int,
                                    source: PacketAddress, mtu: Int, identification: UInt16 = 0) -> Int? {
        icmpError(into: buffer, action: .pathTooSmall(mtu: mtu), original: original, originalLength: originalLength,
                  source: source, identification: identification)
    }

    /// A packet as an array, for tests: `body` fills a buffer of `capacity` bytes.
    public static func array(capacity: Int = 128, _ body: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: capacity)
        let n = out.withUnsafeMutableBytes(body)
        return Array(out.prefix(n))
    }

    /// The IPv4 (20 bytes, no options) or IPv6 (40 bytes, no extension headers, flow label 0) header.
    static func writeIPHeader(_ base: UnsafeMutableRawPointer, source: PacketAddress, destination: PacketAddress,
                              protocolNumber: UInt8, transportLength: Int, identification: UInt16, dontFragment: Bool = false) {
        if source.isIPv6 {
            base.storeBytes(of: UInt32(0x6000_0000).bigEndian, as: UInt32.self)
            base.storeBytes(of: UInt16(transportLength).bigEndian, toByteOffset: 4, as: UInt16.self)
            base.storeBytes(of: protocolNumber, toByteOffset: 6, as: UInt8.self)
            base.storeBytes(of: hopLimit, toByteOffset: 7, as: UInt8.self)
            source.write(to: base + 8)
            destination.write(to: base + 24)
        } else {
            base.storeBytes(of: UInt8(0x45), as: UInt8.self)
            base.storeBytes(of: UInt8(0), toByteOffset: 1, as: UInt8.self)
            base.storeBytes(of: UInt16(20 + transportLength).bigEndian, toByteOffset: 2, as: UInt16.self)
            base.storeBytes(of: identification.bigEndian, toByteOffset: 4, as: UInt16.self)
            base.storeBytes(of: UInt16(dontFragment ? 0x4000 : 0).bigEndian, toByteOffset: 6, as: UInt16.self)
            base.storeBytes(of: hopLimit, toByteOffset: 8, as: UInt8.self)
            base.storeBytes(of: protocolNumber, toByteOffset: 9, as: UInt8.self)
            source.write(to: base + 12)
            destination.write(to: base + 16)
            PacketRewriter.setIPv4HeaderChecksum(base, headerLength: 20)
        }
    }
}
