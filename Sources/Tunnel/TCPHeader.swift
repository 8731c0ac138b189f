import Wire

/// The fields of a TCP header the NAT reads (RFC 793 §3.1 / RFC 9293 §3.1).
public struct TCPHeader: Sendable, Equatable {
    public var sourcePort: UInt16
    public var destinationPort: UInt16
    public var sequenceNumber: UInt32
    public var acknowledgmentNumber: UInt32
    /// The flag bits of byte 13 (CWR ECE URG ACK PSH RST SYN FIN; `TCPFlags`).
    public var flags: UInt8
    /// Data Offset × 4: where the payload starts, from the start of the TCP header.
    public var headerLength: Int
    /// Payload bytes (segment length minus the header).
    public var payloadLength: Int

    public var isSYN: Bool { flags & TCPFlags.syn != 0 }
    public var isACK: Bool { flags & TCPFlags.ack != 0 }
    public var isRST: Bool { flags & TCPFlags.rst != 0 }
    public var isFIN: Bool { flags & TCPFlags.fin != 0 }
    /// A connection request: SYN without ACK.
    public var isConnectionRequest: Bool { flags & (TCPFlags.syn | TCPFlags.ack) == TCPFlags.syn }

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

    /// Whether the TCP checksum of `packet` (pseudo-header, header and payload: RFC 9293 §3.1) is
    /// right. Reads every byte of the segment: for a 64 KB segment this is the engine's largest
    /// user-space cost, so the engine asks only where `TCPChecksumPolicy` says it must.
    public static func checksumIsValid(_ bytes: UnsafeRawBufferPointer, _ packet: IPPacket) -> Bool {
        let base = bytes.baseAddress!
        let length = packet.transportLength
        let pseudo = InternetChecksum.pseudoHeaderSum(source: packet.source, destination: packet.destination,
                                                      protocolNumber: IPProtocolNumber.tcp, length: length)
        let sum = InternetChecksum.sum(UnsafeRawBufferPointer(start: base + packet.transportOffset, count: length), initial: pseudo)
        return InternetChecksum.finish(sum) == 0
    }

    /// Reads the TCP header of `packet`. With `verifyChecksum`, a wrong checksum is a drop.
    public static func parse(_ bytes: UnsafeRawBufferPointer, _ packet: IPPacket, verifyChecksum: Bool = true) -> Result<TCPHeader, PacketDrop> {
        let base = bytes.baseAddress!
        let start = packet.transportOffset
        let length = packet.transportLength
        guard length >= 20 else { return .failure(.truncated) }
        let dataOffset = Int(base.load(fromByteOffset: start + 12, as: UInt8.self) >> 4) * 4
        guard dataOffset >= 20, dataOffset <= length else { return .failure(.badLength) }
        if verifyChecksum && !checksumIsValid(bytes, packet) { return .failure(.badChecksum) }
        return .success(TCPHeader(
            sourcePort: PacketParser.u16(base, start),
            destinationPort: PacketParser.u16(base, start + 2),
            sequenceNumber: UInt32(bigEndian: base.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self)),
            acknowledgmentNumber: UInt32(bigEndian: base.loadUnaligned(fromByteOffset: start + 8, as: UInt32.self)),
            flags: base.load(fromByteOffset: start + 13, as: UInt8.self),
            headerLength: dataOffset, payloadLength: length - dataOffset))
    }
}

/// When the TUN engine verifies a TCP checksum itself (the pure decision behind
/// `TunnelEngineConfiguration.verifyChecksums` for TCP).
///
/// A segment the engine only forwards (rewritten in place and written back into the TUN) need not
/// be verified here: the RFC 1624 incremental update carries a wrong checksum over into a wrong
/// checksum, and the kernel verifies every TCP segment written into a TUN without `IFF_VNET_HDR`
/// (tun-nat.md "Checksums"), so a corrupted segment is still dropped, by the kernel
/// (`TcpInCsumErrors`) instead of by us. What the engine acts on itself is verified first, as
/// before: segments carrying SYN, FIN or RST (they create or end NAT state) and segments it answers
/// or drops (no entry: a reset; unknown fake peer; no listener). Skipping the forwarded data
/// segments saves one pass over every byte in bulk transfers (a 64 KB segment per TUN read).
///
/// With checksum offload on the TUN (`TUNOffload`), segments the kernel marks NEEDS_CSUM
/// (CHECKSUM_PARTIAL: made by this host's stack, checksum to be finished later) or DATA_VALID are
/// never verified: a partial checksum is not a checksum yet.
public enum TCPChecksumPolicy {
    /// What the engine is about to do with the segment.
    public enum Action: Sendable, Equatable {
        /// Rewrite it and write it back into the TUN (rules 1 and 2 with a known entry).
        case forward
        /// Anything else: open a connection, answer with a reset, drop and count.
        case act
    }

    /// Whether the checksum must be verified before `action` on a segment with `flags` (byte 13 of
    /// the TCP header), when verification is on at all.
    /// - Parameter kernelVouches: the segment's virtio-net header says NEEDS_CSUM or DATA_VALID
    ///   (`VirtioNetHeader.kernelVouchesForChecksum`): the local kernel made it and left the
    ///   checksum unfinished (a partial one would never verify) or verified it already; never
    ///   verified then.
    public static func mustVerify(flags: UInt8, action: Action, kernelVouches: Bool = false) -> Bool {
        if kernelVouches { return false }
        return action == .act || flags & (TCPFlags.syn | TCPFlags.fin | TCPFlags.rst) != 0
    }
}
