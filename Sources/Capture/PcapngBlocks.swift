/// The pcapng blocks tv writes, encoded byte for byte (draft-ietf-opsawg-pcapng, "PCAP Next
/// Generation (pcapng) Capture File Format"): a Section Header Block (§4.1), one Interface
/// Description Block (§4.2) of LINKTYPE_RAW with µs timestamps, Enhanced Packet Blocks (§4.3)
/// and Decryption Secrets Blocks (§4.7). Pure: values in, the block's bytes out, little-endian
/// (the byte order the Section Header's magic declares).
///
/// Every block is `type, total length, body (padded to 32 bits), total length` (§3.1); options
/// (§3.5) are `code, length, value padded to 32 bits`, closed by `opt_endofopt` when any is
/// present.
public enum PcapngBlocks {
    /// Block types (§4, §11.1).
    public static let sectionHeaderType: UInt32 = 0x0A0D_0D0A
    public static let interfaceDescriptionType: UInt32 = 0x0000_0001
    public static let enhancedPacketType: UInt32 = 0x0000_0006
    public static let decryptionSecretsType: UInt32 = 0x0000_000A
    /// The Section Header's byte-order magic (§4.1).
    public static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    /// LINKTYPE_RAW: the packet begins with an IPv4 or IPv6 header (the tcpdump.org link types).
    public static let linkTypeRaw: UInt16 = 101
    /// DSB secrets type for a TLS key log (§4.7: 0x544c534b, "TLSK"): SSLKEYLOGFILE lines.
    public static let tlsKeyLogSecrets: UInt32 = 0x544C_534B
    /// Option codes: opt_endofopt, opt_comment (§3.5), if_tsresol (§4.2), epb_flags (§4.3).
    public static let optionEnd: UInt16 = 0
    public static let optionComment: UInt16 = 1
    public static let optionInterfaceTimestampResolution: UInt16 = 9
    public static let optionPacketFlags: UInt16 = 2
    /// shb_userappl (§4.1), if_name and if_description (§4.2).
    public static let optionApplication: UInt16 = 4
    public static let optionInterfaceName: UInt16 = 2
    public static let optionInterfaceDescription: UInt16 = 3
    /// The EPB header before the packet bytes: type, length, interface, timestamp (2), captured and
    /// original lengths, 4 bytes each. The packet's bytes start this far into its block.
    public static let enhancedPacketHeaderSize = 28

    /// The SHB's shb_userappl of every capture tv writes.
    public static let application = "TunnelVision (tv)"
    /// The IDB's if_name and if_description of the TUN's captures (`tv exec`, `--mode tun`).
    public static let tunnelInterface = "tv0"
    public static let tunnelInterfaceDescription = "tv's TUN: the programs' packets as they sent and received them"

    /// The first blocks of a TUN capture file (`CaptureWriter`): its Section Header and its one
    /// Interface Description, named.
    public static func tunnelCaptureHead(snapLength: UInt32) -> [UInt8] {
        sectionHeader(application: application)
            + interfaceDescription(snapLength: snapLength, name: tunnelInterface, description: tunnelInterfaceDescription)
    }

    /// Bytes of padding that bring `count` to a multiple of 4.
    @inlinable
    public static func padding(_ count: Int) -> Int { (4 - count % 4) % 4 }

    /// A Section Header Block (§4.1): version 1.0, section length -1 (not known: the file grows),
    /// an optional comment and the application that wrote it (shb_userappl, which Wireshark's
    /// capture file properties show).
    public static func sectionHeader(comment: String? = nil, application: String? = nil) -> [UInt8] {
        var body: [UInt8] = []
        body.appendLE(byteOrderMagic)
        body.appendLE(UInt16(1))
        body.appendLE(UInt16(0))
        body.appendLE(UInt64.max)  // -1: section length not specified
        appendOptions(&body, comment: comment, extra: application.map { [(optionApplication, optionBytes($0))] } ?? [])
        return block(sectionHeaderType, body)
    }

    /// An Interface Description Block (§4.2): `linkType`, `snapLength` (0: no limit), with
    /// if_tsresol = 6 (timestamps in µs) stated explicitly, then the interface's name and
    /// description when given (without if_name Wireshark shows "unknown": a trial).
    public static func interfaceDescription(linkType: UInt16 = linkTypeRaw, snapLength: UInt32, name: String? = nil,
                                            description: String? = nil) -> [UInt8] {
        var body: [UInt8] = []
        body.appendLE(linkType)
        body.appendLE(UInt16(0))
        body.appendLE(snapLength)
        var options: [(UInt16, [UInt8])] = [(optionInterfaceTimestampResolution, [6])]
        if let name { options.append((optionInterfaceName, optionBytes(name))) }
        if let description { options.append((optionInterfaceDescription, optionBytes(description))) }
        appendOptions(&body, comment: nil, extra: options)
        return block(interfaceDescriptionType, body)
    }

    /// A text option's UTF-8 bytes, cut to what a 16-bit option length holds.
    private static func optionBytes(_ text: String) -> [UInt8] { Array(text.utf8.prefix(Int(UInt16.max))) }

    /// The direction an EPB's epb_flags states (§4.3, bits 0-1: 01 inbound, 10 outbound).
    public enum FlagDirection: UInt32, Sendable {
        case inbound = 1
        case outbound = 2
    }

    /// An Enhanced Packet Block (§4.3) on interface 0.
    /// - Parameters:
    ///   - timestampMicros: µs since the epoch (the IDB's if_tsresol is 6).
    ///   - packet: the captured bytes (already cut to the snap length by the caller).
    ///   - originalLength: the packet's length on the wire.
    ///   - direction: written as epb_flags when given.
    ///   - comment: opt_comment (UTF-8) when given.
    public static func enhancedPacket(timestampMicros: Int64, packet: UnsafeRawBufferPointer, originalLength: Int,
                                      direction: FlagDirection? = nil, comment: String? = nil) -> [UInt8] {
        var out: [UInt8] = []
        appendEnhancedPacket(to: &out, timestampMicros: timestampMicros, packet: packet, originalLength: originalLength,
                             direction: direction, comment: comment)
        return out
    }

    /// The length of an Enhanced Packet Block (§4.3) holding `capturedLength` bytes, with
    /// epb_flags when `direction` is given and an opt_comment of `commentLength` UTF-8 bytes
    /// (already cut to 65,532) when given: what `appendEnhancedPacket` appends.
    @inlinable
    public static func enhancedPacketLength(capturedLength: Int, direction: FlagDirection?, commentLength: Int?) -> Int {
        var optionsLength = 0
        if direction != nil { optionsLength += 8 }
        if let commentLength { optionsLength += 4 + commentLength + padding(commentLength) }
        if optionsLength > 0 { optionsLength += 4 }
        return enhancedPacketHeaderSize + capturedLength + padding(capturedLength) + optionsLength + 4
    }

    /// An opt_comment's bytes: the comment's UTF-8, cut to what a 16-bit option length holds (§3.5).
    public static func commentBytes(_ comment: String) -> [UInt8] { Array(comment.utf8.prefix(65_532)) }

    /// `enhancedPacket` appended to `out` without an intermediate array (the writers' hot path).
    /// - Returns: the block's length.
    @discardableResult
    public static func appendEnhancedPacket(to out: inout [UInt8], timestampMicros: Int64, packet: UnsafeRawBufferPointer,
                                            originalLength: Int, direction: FlagDirection? = nil, comment: String? = nil) -> Int {
        appendEnhancedPacket(to: &out, timestampMicros: timestampMicros, capturedLength: packet.count, originalLength: originalLength,
                             direction: direction, comment: comment.map(commentBytes)) { $0.append(contentsOf: packet) }
    }

    /// An Enhanced Packet Block whose packet bytes `writePacket` appends to `out` itself, exactly
    /// `capturedLength` of them: a packet built straight into its block, never copied from a
    /// buffer of its own. `out` grows geometrically. A writer that gathers its file from parts
    /// may append fewer (the decrypted capture appends a segment's headers only): the rest of
    /// the packet then belongs where `writePacket` stopped, and the block is whole only with it.
    /// - Parameter comment: opt_comment's bytes (`commentBytes`), when given.
    /// - Returns: the block's length.
    @discardableResult
    public static func appendEnhancedPacket(to out: inout [UInt8], timestampMicros: Int64, capturedLength: Int, originalLength: Int,
                                            direction: FlagDirection?, comment: [UInt8]?,
                                            writePacket: (inout [UInt8]) -> Void) -> Int {
        let total = enhancedPacketLength(capturedLength: capturedLength, direction: direction, commentLength: comment?.count)
        // Grown geometrically: reserving exactly what each packet needs would reallocate (and
        // copy everything encoded so far) at every packet of a batch larger than the last.
        if out.capacity < out.count + total { out.reserveCapacity(max(out.count + total, 2 * out.capacity)) }
        let ticks = UInt64(bitPattern: timestampMicros)
        out.appendLE(enhancedPacketType)
        out.appendLE(UInt32(total))
        out.appendLE(UInt32(0))
        out.appendLE(UInt32(truncatingIfNeeded: ticks >> 32))
        out.appendLE(UInt32(truncatingIfNeeded: ticks))
        out.appendLE(UInt32(capturedLength))
        out.appendLE(UInt32(originalLength))
        writePacket(&out)
        out.append(contentsOf: repeatElement(0, count: padding(capturedLength)))
        if let direction {
            out.appendLE(optionPacketFlags)
            out.appendLE(UInt16(4))
            out.appendLE(direction.rawValue)
        }
        if let comment { appendOption(&out, optionComment, comment) }
        if total > enhancedPacketHeaderSize + capturedLength + padding(capturedLength) + 4 { out.appendLE(UInt32(0)) }
        out.appendLE(UInt32(total))
        return total
    }

    /// `appendEnhancedPacket` written in place: the block's `length` bytes (exactly
    /// `enhancedPacketLength(capturedLength: packet.count, …)`) at `out`, the header, options and
    /// trailer stored directly and the packet's bytes copied once (the capture queue's hot path:
    /// no per-field append, uniqueness or capacity check).
    /// - Parameter comment: opt_comment's bytes (`commentBytes`), when given.
    public static func writeEnhancedPacket(at out: UnsafeMutableRawPointer, length total: Int, timestampMicros: Int64,
                                           packet: UnsafeRawBufferPointer, originalLength: Int, direction: FlagDirection?,
                                           comment: [UInt8]?) {
        func put32(_ value: UInt32, _ offset: Int) { out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
        func put16(_ value: UInt16, _ offset: Int) { out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self) }
        func zero(_ count: Int, _ offset: Int) { if count > 0 { (out + offset).initializeMemory(as: UInt8.self, repeating: 0, count: count) } }
        writeEnhancedPacketHeader(at: out, length: total, timestampMicros: timestampMicros,
                                  capturedLength: packet.count, originalLength: originalLength)
        var at = enhancedPacketHeaderSize
        if let source = packet.baseAddress, packet.count > 0 { (out + at).copyMemory(from: source, byteCount: packet.count) }
        at += packet.count
        zero(padding(packet.count), at)
        at += padding(packet.count)
        if let direction {
            put16(optionPacketFlags, at)
            put16(4, at + 2)
            put32(direction.rawValue, at + 4)
            at += 8
        }
        if let comment {
            put16(optionComment, at)
            put16(UInt16(comment.count), at + 2)
            comment.withUnsafeBytes { if let source = $0.baseAddress, $0.count > 0 { (out + at + 4).copyMemory(from: source, byteCount: $0.count) } }
            at += 4 + comment.count
            zero(padding(comment.count), at)
            at += padding(comment.count)
        }
        if direction != nil || comment != nil {
            put32(0, at)  // opt_endofopt
            at += 4
        }
        put32(UInt32(total), at)
        assert(at + 4 == total, "the block's length is enhancedPacketLength")
    }

    /// The frame of an Enhanced Packet Block without options around `capturedLength` packet
    /// bytes already in place at `out + enhancedPacketHeaderSize` (never read nor moved): the
    /// header, the padding and the trailing length, `enhancedPacketLength(capturedLength:
    /// direction: nil, commentLength: nil)` bytes in all, as `writeEnhancedPacket` writes them (the
    /// decrypted capture's loops copy each payload straight into its place in the file's format).
    public static func writeEnhancedPacketFrame(at out: UnsafeMutableRawPointer, timestampMicros: Int64, capturedLength: Int,
                                                originalLength: Int) {
        let total = enhancedPacketLength(capturedLength: capturedLength, direction: nil, commentLength: nil)
        writeEnhancedPacketHeader(at: out, length: total, timestampMicros: timestampMicros,
                                  capturedLength: capturedLength, originalLength: originalLength)
        let end = enhancedPacketHeaderSize + capturedLength
        let pad = padding(capturedLength)
        if pad > 0 { (out + end).initializeMemory(as: UInt8.self, repeating: 0, count: pad) }
        out.storeBytes(of: UInt32(total).littleEndian, toByteOffset: end + pad, as: UInt32.self)
    }

    /// The first `enhancedPacketHeaderSize` (28) bytes of an Enhanced Packet Block (§4.3) at
    /// `out`: block type, total length, interface 0, the timestamp's high and low halves (µs),
    /// captured and original length, little-endian.
    @inline(__always)
    static func writeEnhancedPacketHeader(at out: UnsafeMutableRawPointer, length total: Int, timestampMicros: Int64,
                                          capturedLength: Int, originalLength: Int) {
        func put32(_ value: UInt32, _ offset: Int) { out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
        let ticks = UInt64(bitPattern: timestampMicros)
        put32(enhancedPacketType, 0)
        put32(UInt32(total), 4)
        put32(0, 8)
        put32(UInt32(truncatingIfNeeded: ticks >> 32), 12)
        put32(UInt32(truncatingIfNeeded: ticks), 16)
        put32(UInt32(capturedLength), 20)
        put32(UInt32(originalLength), 24)
    }

    /// A Decryption Secrets Block (§4.7) carrying `secrets` of `secretsType` (for TLS,
    /// `tlsKeyLogSecrets`: SSLKEYLOGFILE lines, each ending in a line feed). It must come before
    /// the packets it decrypts (§4.7); Wireshark reads every DSB of the file before dissecting.
    public static func decryptionSecrets(secretsType: UInt32 = tlsKeyLogSecrets, secrets: [UInt8], comment: String? = nil) -> [UInt8] {
        var body: [UInt8] = []
        body.appendLE(secretsType)
        body.appendLE(UInt32(secrets.count))
        body.append(contentsOf: secrets)
        body.append(contentsOf: repeatElement(0, count: padding(secrets.count)))
        appendOptions(&body, comment: comment, extra: [])
        return block(decryptionSecretsType, body)
    }

    // MARK: helpers

    private static func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        let total = 12 + body.count
        var out: [UInt8] = []
        out.reserveCapacity(total)
        out.appendLE(type)
        out.appendLE(UInt32(total))
        out.append(contentsOf: body)
        out.appendLE(UInt32(total))
        return out
    }

    private static func appendOptions(_ out: inout [UInt8], comment: String?, extra: [(UInt16, [UInt8])]) {
        guard comment != nil || !extra.isEmpty else { return }
        if let comment { appendOption(&out, optionComment, Array(comment.utf8)) }
        for (code, value) in extra { appendOption(&out, code, value) }
        out.appendLE(UInt32(0))  // opt_endofopt
    }

    private static func appendOption(_ out: inout [UInt8], _ code: UInt16, _ value: [UInt8]) {
        out.appendLE(code)
        out.appendLE(UInt16(value.count))
        out.append(contentsOf: value)
        out.append(contentsOf: repeatElement(0, count: padding(value.count)))
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` little-endian.
    @inlinable
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
