import COpenSSL
import Wire

/// The keys protecting one side's Initial packets (RFC 9001 §5.2; for QUIC v2 the salt and
/// labels of RFC 9369 §3.3): derived from the Destination Connection ID of the client's first
/// Initial with HKDF-SHA256 (RFC 5869) as TLS 1.3 labels it (RFC 8446 §7.1). OpenSSL computes
/// the HKDF; this type only builds its inputs.
public struct QUICInitialKeys: Sendable, Hashable {
    /// AEAD_AES_128_GCM key, 16 bytes.
    public let key: [UInt8]
    /// AEAD IV, 12 bytes (XORed with the packet number for each nonce, RFC 9001 §5.3).
    public let iv: [UInt8]
    /// Header-protection key for AES-128-ECB, 16 bytes (RFC 9001 §5.4.3).
    public let headerProtection: [UInt8]

    /// initial_salt: RFC 9001 §5.2 for v1, RFC 9369 §3.3.1 for v2.
    static func salt(_ version: QUICVersion) -> [UInt8] {
        version == .v2
            ? [0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93, 0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9]
            : [0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a]
    }

    /// The labels of the key, IV and header-protection key: "quic key" … in v1 (RFC 9001 §5.1),
    /// "quicv2 key" … in v2 (RFC 9369 §3.3.2).
    static func labels(_ version: QUICVersion) -> (key: String, iv: String, hp: String) {
        version == .v2 ? ("quicv2 key", "quicv2 iv", "quicv2 hp") : ("quic key", "quic iv", "quic hp")
    }

    /// The client's (or, with `server`, the server's) Initial keys for `version` and the
    /// Destination Connection ID of the client's first Initial; nil when OpenSSL fails.
    public init?(version: QUICVersion, destinationConnectionID: [UInt8], server: Bool = false) {
        guard let initial = Self.initialSecret(version: version, destinationConnectionID: destinationConnectionID),
              let secret = Self.expandLabel(secret: initial, label: server ? "server in" : "client in", length: 32) else { return nil }
        self.init(secret: secret, version: version)
    }

    /// The key, IV and header-protection key of a 32-byte traffic secret; nil when OpenSSL fails.
    public init?(secret: [UInt8], version: QUICVersion) {
        let labels = Self.labels(version)
        guard let key = Self.expandLabel(secret: secret, label: labels.key, length: 16),
              let iv = Self.expandLabel(secret: secret, label: labels.iv, length: 12),
              let hp = Self.expandLabel(secret: secret, label: labels.hp, length: 16) else { return nil }
        self.key = key
        self.iv = iv
        headerProtection = hp
    }

    /// initial_secret = HKDF-Extract(initial_salt, client_dst_connection_id) (RFC 9001 §5.2).
    public static func initialSecret(version: QUICVersion, destinationConnectionID: [UInt8]) -> [UInt8]? {
        hkdf(mode: EVP_KDF_HKDF_MODE_EXTRACT_ONLY, key: destinationConnectionID, salt: salt(version), info: [], length: 32)
    }

    /// HKDF-Expand-Label(secret, label, "", length) (RFC 8446 §7.1).
    public static func expandLabel(secret: [UInt8], label: String, length: Int) -> [UInt8]? {
        hkdf(mode: EVP_KDF_HKDF_MODE_EXPAND_ONLY, key: secret, salt: [], info: hkdfLabel(label, length: length), length: length)
    }

    /// The HkdfLabel structure (RFC 8446 §7.1): uint16 length, opaque label<7..255> = "tls13 " +
    /// label, opaque context<0..255> (empty here).
    public static func hkdfLabel(_ label: String, length: Int) -> [UInt8] {
        let full = Array("tls13 \(label)".utf8)
        return [UInt8(length >> 8), UInt8(length & 0xFF), UInt8(full.count)] + full + [0]
    }

    /// One HKDF-SHA256 step through OpenSSL's EVP_PKEY HKDF: extract (`key` = IKM, `salt`) or
    /// expand (`key` = PRK, `info`).
    private static func hkdf(mode: Int32, key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) > 0, EVP_PKEY_CTX_set_hkdf_md(context, EVP_sha256()) > 0,
              EVP_PKEY_CTX_set_hkdf_mode(context, mode) > 0,
              EVP_PKEY_CTX_set1_hkdf_key(context, key, Int32(key.count)) > 0 else { return nil }
        if !salt.isEmpty, EVP_PKEY_CTX_set1_hkdf_salt(context, salt, Int32(salt.count)) <= 0 { return nil }
        if !info.isEmpty, EVP_PKEY_CTX_add1_hkdf_info(context, info, Int32(info.count)) <= 0 { return nil }
        var out = [UInt8](repeating: 0, count: length)
        var outLength = length
        guard EVP_PKEY_derive(context, &out, &outLength) > 0, outLength == length else { return nil }
        return out
    }
}
