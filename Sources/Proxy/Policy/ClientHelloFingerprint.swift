import COpenSSL
import Wire

/// A short fingerprint of how a client program speaks TLS, read from its ClientHello (in the
/// spirit of JA3/JA4): what a program's TLS library and settings decide, and nothing that changes
/// from one connection of the same program to the next.
///
/// The canonical text is `versions|ciphers|extensions|alpn`: supported_versions, cipher suites
/// (both in the order sent), extension types (sorted: some clients shuffle them), ALPN protocol
/// names, each list comma-separated in lowercase hex (ALPN as text), GREASE values (RFC 8701)
/// left out. Also left out are the extensions whose presence varies between one program's
/// connections: server_name (0; the host is keyed on its own), padding (21; depends on the
/// hello's length), pre_shared_key (41) and early_data (42) (present only when resuming), cookie
/// (44; only after a HelloRetryRequest). The fingerprint is the first 12 hex digits of the
/// SHA-256 of that text: an identifier, not a secret.
public enum ClientHelloFingerprint {
    /// Extension types whose presence varies between connections of one program.
    static let unstableExtensions: Set<UInt16> = [0, 21, 41, 42, 44]

    /// The canonical text the fingerprint is taken of.
    public static func canonical(_ hello: ClientHello) -> String {
        func hex(_ values: [UInt16]) -> String {
            values.filter { !GREASE.isReserved($0) }.map { String($0, radix: 16) }.joined(separator: ",")
        }
        let extensions = hello.extensionTypes.filter { !unstableExtensions.contains($0) }.sorted()
        let alpn = hello.alpnProtocolIDs.map { String(decoding: $0, as: UTF8.self) }.joined(separator: ",")
        return [hex(hello.supportedVersions), hex(hello.cipherSuites), hex(extensions), alpn].joined(separator: "|")
    }

    /// 12 lowercase hex digits naming how `hello`'s program speaks TLS.
    public static func of(_ hello: ClientHello) -> String {
        let text = Array(canonical(hello).utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = text.withUnsafeBytes { bytes in
            EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        }
        // EVP_Digest with SHA-256 fails only when OpenSSL cannot allocate: fall back to the text's
        // length, still a stable (if coarse) identifier.
        guard ok == 1 else { return String(repeating: "0", count: 8) + String(format4: text.count) }
        return digest.prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

private extension String {
    /// Four lowercase hex digits of `value` (mod 65536).
    init(format4 value: Int) {
        let digits = String(value & 0xFFFF, radix: 16)
        self = String(repeating: "0", count: 4 - digits.count) + digits
    }
}
