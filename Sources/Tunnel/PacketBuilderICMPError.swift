import Wire

/// ICMP errors tv writes into the TUN for what a router further out reported to its upstream
/// socket (`UpstreamErrorAction`), and, through `PacketBuilder.pathTooSmall`, for tv's own
/// EMSGSIZE (PathMTUSignalTests checks those bytes).
extension PacketBuilder {
    /// Writes an ICMP (RFC 792) / ICMPv6 (RFC 4443) error about `original` from `source` to
    /// `original`'s source into `buffer`, quoting `original` up to `maximumQuote` bytes.
    /// - Parameters:
    ///   - action: `.pathTooSmall(mtu:)` → type 3 code 4 with the MTU in the low 16 bits of the
    ///     second word (RFC 1191 §4) / type 2 code 0 with the 32-bit MTU (RFC 4443 §3.2);
    ///     `.portUnreachable` → type 3 code 3 / type 1 code 4 (RFC 4443 §3.1), second word 0;
    ///     `.unsendable` → `UnsendableDatagram.icmp`, second word 0.
    ///   - original: the packet the error is about (its IP header first); `originalLength` of it count.
    ///   - identification: the IPv4 Identification (ignored for IPv6).
    /// - Returns: the packet's length, or nil for `.ignore`, when `original` is shorter than its
    ///   IP header or of another family than `source`, or `buffer` is too small.
    public static func icmpError(into buffer: UnsafeMutableRawBufferPointer, action: UpstreamErrorAction,
                                 original: UnsafeRawBufferPointer, originalLength: Int, source: PacketAddress,
                                 identification: UInt16 = 0) -> Int? {
        let v6 = source.isIPv6
        let type: UInt8, code: UInt8, word: UInt32
        switch action {
        case .pathTooSmall(let mtu):
            (type, code) = v6 ? (2, 0) : (3, 4)
            word = v6 ? UInt32(clamping: max(0, mtu)) : UInt32(UInt16(clamping: max(0, mtu)))
        case .portUnreachable:
            (type, code, word) = v6 ? (1, 4, 0) : (3, 3, 0)
        case .unsendable(let why):
            (type, code) = why.icmp(isIPv6: v6)
            word = 0
        case .ignore:
            return nil
        }
        return icmpError(into: buffer, type: type, code: code, word: word, original: original, originalLength: originalLength,
                         source: source, identification: identification)
    }

    /// Writes an ICMP (RFC 792) / ICMPv6 (RFC 4443) error of `type` and `code`, its second word
    /// `word` (an MTU, or 0), about `original` from `source` to `original`'s source into
    /// `buffer`, quoting `original` up to `maximumQuote` bytes as it is.
    /// - Returns: the packet's length, or nil when `original` is shorter than its IP header or of
    ///   another family than `source`, or `buffer` is too small.
    public static func icmpError(into buffer: UnsafeMutableRawBufferPointer, type: UInt8, code: UInt8, word: UInt32,
                                 original: UnsafeRawBufferPointer, originalLength: Int, source: PacketAddress,
                                 identification: UInt16 = 0) -> Int? {
        let v6 = source.isIPv6
        let ipLength = v6 ? 40 : 20
        let length = min(originalLength, original.count)
        guard length >= ipLength, original[0] >> 4 == (v6 ? 6 : 4) else { return nil }
        let quote = min(length, maximumQuote(isIPv6: v6))
        let total = ipLength + 8 + quote
        guard buffer.count >= total else { return nil }
        let destination = PacketAddress(reading: original.baseAddress! + (v6 ? 8 : 12), isIPv6: v6)
        let base = buffer.baseAddress!
        writeIPHeader(base, source: source, destination: destination, protocolNumber: v6 ? IPProtocolNumber.icmpv6 : IPProtocolNumber.icmp,
                      transportLength: 8 + quote, identification: identification)
        let icmp = base + ipLength
        icmp.storeBytes(of: type, as: UInt8.self)
        icmp.storeBytes(of: code, toByteOffset: 1, as: UInt8.self)
        icmp.storeBytes(of: UInt16(0), toByteOffset: 2, as: UInt16.self)
        icmp.storeBytes(of: word.bigEndian, toByteOffset: 4, as: UInt32.self)
        (icmp + 8).copyMemory(from: original.baseAddress!, byteCount: quote)
        // ICMPv4 sums the message alone (RFC 792); ICMPv6 adds the pseudo-header (RFC 4443 §2.3).
        let initial = v6 ? InternetChecksum.pseudoHeaderSum(source: source, destination: destination,
                                                            protocolNumber: IPProtocolNumber.icmpv6, length: 8 + quote) : 0
        let checksum = InternetChecksum.finish(InternetChecksum.sum(UnsafeRawBufferPointer(start: icmp, count: 8 + quote), initial: initial))
        icmp.storeBytes(of: checksum.bigEndian, toByteOffset: 2, as: UInt16.self)
        return total
    }
}
