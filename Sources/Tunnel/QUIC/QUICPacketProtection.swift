import COpenSSL
import Wire

/// Why an Initial packet could not be opened.
public enum QUICOpenFailure: Error, Sendable, Hashable {
    /// Fewer bytes after the packet number's offset than the 4 + 16-byte sample RFC 9001 §5.4.2
    /// needs, or than the packet number and the 16-byte tag.
    case tooShort
    /// The AEAD tag did not verify: not QUIC, other keys (another connection ID or version), or
    /// damaged bytes.
    case notAuthentic
    /// OpenSSL could not run a cipher.
    case cipherFailed
}

/// An opened (unprotected and decrypted) Initial packet.
public struct QUICOpenedPacket: Sendable, Hashable {
    /// The full packet number (RFC 9000 §17.1, Appendix A.3).
    public var packetNumber: UInt64
    /// The plaintext frames.
    public var payload: [UInt8]
}

/// Opens Initial packets: removes header protection (RFC 9001 §5.4, AES-128-ECB) and decrypts
/// the payload (§5.3, AEAD_AES_128_GCM), both through OpenSSL's EVP ciphers. Nothing is
/// written back: the datagram is forwarded as it came.
public enum QUICPacketProtection {
    /// Opens the Initial at the start of `packet` (its `header.packetLength` bytes).
    /// - Parameter largestPacketNumber: the largest packet number opened so far on this flow,
    ///   nil before the first, to expand the truncated packet number (RFC 9000 Appendix A.3).
    public static func open(_ packet: UnsafeRawBufferPointer, header: QUICInitialHeader, keys: QUICInitialKeys,
                            largestPacketNumber: UInt64?) -> Result<QUICOpenedPacket, QUICOpenFailure> {
        let pnOffset = header.packetNumberOffset
        // The sample starts 4 bytes after the packet number's start (§5.4.2).
        guard header.packetLength <= packet.count, pnOffset + 4 + 16 <= header.packetLength else { return .failure(.tooShort) }
        guard let mask = headerProtectionMask(keys.headerProtection, sample: Array(packet[(pnOffset + 4)..<(pnOffset + 20)])) else {
            return .failure(.cipherFailed)
        }
        let first = packet[0] ^ (mask[0] & 0x0F)  // long header: the low 4 bits (§5.4.1)
        let pnLength = Int(first & 0x03) + 1
        guard pnOffset + pnLength + 16 <= header.packetLength else { return .failure(.tooShort) }
        var aad = Array(packet[0..<(pnOffset + pnLength)])
        aad[0] = first
        var truncated: UInt64 = 0
        for i in 0..<pnLength {
            aad[pnOffset + i] ^= mask[1 + i]
            truncated = truncated << 8 | UInt64(aad[pnOffset + i])
        }
        let number = decodePacketNumber(largest: largestPacketNumber, truncated: truncated, bits: pnLength * 8)
        var nonce = keys.iv
        for i in 0..<8 { nonce[nonce.count - 1 - i] ^= UInt8((number >> (8 * UInt64(i))) & 0xFF) }
        let sealed = Array(packet[(pnOffset + pnLength)..<header.packetLength])
        switch decrypt(key: keys.key, nonce: nonce, aad: aad, sealed: sealed) {
        case .failure(let failure): return .failure(failure)
        case .success(let payload): return .success(QUICOpenedPacket(packetNumber: number, payload: payload))
        }
    }

    /// The 5 mask bytes AES-128-ECB(hp, sample) gives (RFC 9001 §5.4.3); nil when OpenSSL fails.
    public static func headerProtectionMask(_ hp: [UInt8], sample: [UInt8]) -> [UInt8]? {
        guard hp.count == 16, sample.count == 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: 32)
        var count: Int32 = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nil, hp, nil) > 0,
              EVP_CIPHER_CTX_set_padding(context, 0) > 0,
              EVP_EncryptUpdate(context, &out, &count, sample, 16) > 0, count == 16 else { return nil }
        return Array(out[0..<5])
    }

    /// AEAD_AES_128_GCM decryption of `sealed` (ciphertext then the 16-byte tag).
    static func decrypt(key: [UInt8], nonce: [UInt8], aad: [UInt8], sealed: [UInt8]) -> Result<[UInt8], QUICOpenFailure> {
        guard sealed.count >= 16, let context = EVP_CIPHER_CTX_new() else { return .failure(.cipherFailed) }
        defer { EVP_CIPHER_CTX_free(context) }
        let cipherCount = sealed.count - 16
        var tag = Array(sealed[cipherCount...])
        var plain = [UInt8](repeating: 0, count: cipherCount + 16)
        var count: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_128_gcm(), nil, nil, nil) > 0,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(nonce.count), nil) > 0,
              EVP_DecryptInit_ex(context, nil, nil, key, nonce) > 0,
              EVP_DecryptUpdate(context, nil, &count, aad, Int32(aad.count)) > 0,
              EVP_DecryptUpdate(context, &plain, &count, sealed, Int32(cipherCount)) > 0,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tag) > 0 else { return .failure(.cipherFailed) }
        let written = Int(count)
        var last: Int32 = 0
        let verified = plain.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + written, &last) }
        guard verified > 0 else { return .failure(.notAuthentic) }
        return .success(Array(plain[0..<(written + Int(last))]))
    }

    /// The full packet number from its truncated `bits`-bit form and the largest number seen so
    /// far (RFC 9000 Appendix A.3); with none seen yet, the expected number is 0.
    public static func decodePacketNumber(largest: UInt64?, truncated: UInt64, bits: Int) -> UInt64 {
        let expected = largest.map { $0 + 1 } ?? 0
        let window = UInt64(1) << UInt64(bits)
        let halfWindow = window / 2
        let mask = window - 1
        let candidate = (expected & ~mask) | truncated
        if candidate + halfWindow <= expected && candidate < (UInt64(1) << 62) - window {
            return candidate + window
        }
        if candidate > expected + halfWindow && candidate >= window {
            return candidate - window
        }
        return candidate
    }
}
