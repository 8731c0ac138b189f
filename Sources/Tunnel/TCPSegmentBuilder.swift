import Wire

/// Writes one whole IPv4 or IPv6 packet carrying a TCP segment with options and payload
/// (RFC 9293 §3.1), every checksum computed in full: what the decrypted capture's synthesized
/// streams are made of (`TCPStreamSynthesizer`).
public enum TCPSegmentBuilder {
    /// The fields of one segment.
    public struct Segment: Sendable, Equatable {
        public var source: PacketEndpoint
        public var destination: PacketEndpoint
        public var sequence: UInt32
        public var acknowledgment: UInt32
        /// Byte 13 (`TCPFlags.syn` …).
        public var flags: UInt8
        public var window: UInt16
        /// IPv4 Identification (ignored for IPv6).
        public var identification: UInt16
        /// Only a SYN carries one here: Maximum Segment Size (kind 2, RFC 9293 §3.7.1).
        public var maximumSegmentSize: UInt16?

        public init(source: PacketEndpoint, destination: PacketEndpoint, sequence: UInt32, acknowledgment: UInt32, flags: UInt8,
                    window: UInt16 = 65_535, identification: UInt16 = 0, maximumSegmentSize: UInt16? = nil) {
            self.source = source
            self.destination = destination
            self.sequence = sequence
            self.acknowledgment = acknowledgment
            self.flags = flags
            self.window = window
            self.identification = identification
            self.maximumSegmentSize = maximumSegmentSize
        }
    }

    /// The packet's length: the IP header (20 or 40), the TCP header (20, 24 with the MSS option)
    /// and `payloadCount` bytes.
    public static func length(_ segment: Segment, payloadCount: Int) -> Int {
        (segment.source.address.isIPv6 ? 40 : 20) + (segment.maximumSegmentSize == nil ? 20 : 24) + payloadCount
    }

    /// The packet's bytes: the IP header (IPv4 with DF set; IPv6 without extension headers), the
    /// TCP header (20 bytes, 24 with the MSS option) and `payload`. Both ends must be of one
    /// family; the payload must fit one packet (at most 65,535 − 60 bytes).
    public static func packet(_ segment: Segment, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length(segment, payloadCount: payload.count))
        append(segment, payload: payload, to: &out)
        return out
    }

    /// `packet` appended to `out` (`length` bytes): the headers (`appendHeaders`), then the
    /// payload.
    public static func append(_ segment: Segment, payload: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        appendHeaders(segment, payload: payload, to: &out)
        out.append(contentsOf: payload)
    }

    /// The packet's IP and TCP headers only (`length` less the payload's count), appended to
    /// `out`: lengths and the TCP checksum (RFC 9293 §3.1: pseudo-header, TCP header, payload)
    /// cover `payload`, which is read (summed) but not copied; the caller puts it right after.
    public static func appendHeaders(_ segment: Segment, payload: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let headerLength = length(segment, payloadCount: 0)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: headerLength))
        out.withUnsafeMutableBytes { buffer in
            writeHeaders(segment, payloadCount: payload.count, payloadSum: InternetChecksum.sum(payload), at: buffer.baseAddress! + start)
        }
    }

    /// The packet's IP and TCP headers (`length(segment, payloadCount: 0)` bytes) stored at `out`,
    /// for a payload of `payloadCount` bytes whose sum (`InternetChecksum.sum`) is `payloadSum`:
    /// the payload itself is never read (the decrypted capture's loops sum each chunk as they
    /// lay it out in the file's format, `DecryptedCaptureBatch`). Fields and checksums as
    /// `appendHeaders`.
    public static func writeHeaders(_ segment: Segment, payloadCount: Int, payloadSum: UInt32, at base: UnsafeMutableRawPointer) {
        let v6 = segment.source.address.isIPv6
        let ipLength = v6 ? 40 : 20
        let tcpHeaderLength = segment.maximumSegmentSize == nil ? 20 : 24
        let tcpLength = tcpHeaderLength + payloadCount
        base.initializeMemory(as: UInt8.self, repeating: 0, count: ipLength + tcpHeaderLength)
        PacketBuilder.writeIPHeader(base, source: segment.source.address, destination: segment.destination.address,
                                    protocolNumber: IPProtocolNumber.tcp, transportLength: tcpLength,
                                    identification: segment.identification, dontFragment: true)
        let t = base + ipLength
        t.storeBytes(of: segment.source.port.bigEndian, as: UInt16.self)
        t.storeBytes(of: segment.destination.port.bigEndian, toByteOffset: 2, as: UInt16.self)
        t.storeBytes(of: segment.sequence.bigEndian, toByteOffset: 4, as: UInt32.self)
        t.storeBytes(of: segment.acknowledgment.bigEndian, toByteOffset: 8, as: UInt32.self)
        t.storeBytes(of: UInt8(tcpHeaderLength / 4) << 4, toByteOffset: 12, as: UInt8.self)
        t.storeBytes(of: segment.flags, toByteOffset: 13, as: UInt8.self)
        t.storeBytes(of: segment.window.bigEndian, toByteOffset: 14, as: UInt16.self)
        if let mss = segment.maximumSegmentSize {
            t.storeBytes(of: UInt8(2), toByteOffset: 20, as: UInt8.self)
            t.storeBytes(of: UInt8(4), toByteOffset: 21, as: UInt8.self)
            t.storeBytes(of: mss.bigEndian, toByteOffset: 22, as: UInt16.self)
        }
        // The header's length is even (20 or 24), so the payload's 16-bit words keep their
        // places in the sum when it is summed apart (RFC 1071 §2 (B): the sum is associative).
        let pseudo = InternetChecksum.pseudoHeaderSum(source: segment.source.address, destination: segment.destination.address,
                                                      protocolNumber: IPProtocolNumber.tcp, length: tcpLength)
        let header = InternetChecksum.sum(UnsafeRawBufferPointer(start: t, count: tcpHeaderLength), initial: pseudo)
        let checksum = InternetChecksum.finish(InternetChecksum.fold(header &+ payloadSum))
        t.storeBytes(of: checksum.bigEndian, toByteOffset: 16, as: UInt16.self)
    }

    /// `packet` over an array (tests).
    public static func packet(_ segment: Segment, payload: [UInt8] = []) -> [UInt8] {
        payload.withUnsafeBytes { packet(segment, payload: $0) }
    }
}
