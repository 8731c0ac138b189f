/// Whether a UDP flow's first datagram shows an encrypted protocol, so its flow says
/// `encrypted` rather than "not encrypted — plain bytes, readable by anyone on the path" (a
/// trial: draft QUIC v2, version negotiation, a QUIC connection's migrated path and DTLS all
/// read as plain). Pure; a guess from the first datagram, port 443 as before.
///
/// - QUIC (RFC 9000 §17.2): a long header (first bit set) with the fixed bit, a 4-byte version,
///   in a datagram of at least 1,200 bytes, as a client's Initial is padded to (§14.1), or a
///   version negotiation (version 0).
/// - DTLS (RFC 6347 §4.1, RFC 9147 §4): a record of content type 20–25 with version 0xFEFF
///   (1.0), 0xFEFD (1.2) or 0xFEFC, and the 13-byte record header.
enum UDPEncryptionGuess {
    static func looksEncrypted(_ payload: UnsafeRawBufferPointer, port: UInt16) -> Bool {
        if port == 443 { return true }
        guard payload.count >= 5 else { return false }
        let first = payload[0]
        if first & 0xC0 == 0xC0 {
            let version = UInt32(payload[1]) << 24 | UInt32(payload[2]) << 16 | UInt32(payload[3]) << 8 | UInt32(payload[4])
            if payload.count >= 1_200 || version == 0 { return true }
        }
        if payload.count >= 13, (20...25).contains(first), payload[1] == 0xFE, [0xFF, 0xFD, 0xFC].contains(payload[2]) { return true }
        return false
    }
}
