import COpenSSL
import CTVShims

/// A private key held by OpenSSL (`EVP_PKEY`), freed when the last reference goes.
///
/// `@unchecked Sendable`: the key is never mutated after creation; OpenSSL 3 documents
/// `EVP_PKEY` as safe to use concurrently for signing and reading ("Threads", openssl-threads(7)),
/// and the handle is only freed in `deinit`, when no other reference exists.
public final class PrivateKey: @unchecked Sendable {
    /// The OpenSSL handle; valid for the life of this object.
    public let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { EVP_PKEY_free(handle) }

    /// Makes a fresh key of `type`.
    /// - Throws: `OpenSSLError` when key generation fails.
    public static func generate(_ type: KeyType) throws -> PrivateKey {
        let key: OpaquePointer?
        switch type {
        case .ecdsaP256: key = tv_ec_keygen("P-256")
        case .ecdsaP384: key = tv_ec_keygen("P-384")
        case .rsa2048: key = tv_rsa_keygen(2048)
        case .rsa3072: key = tv_rsa_keygen(3072)
        }
        guard let key else { throw OpenSSLError("generating a \(type.name) key") }
        return PrivateKey(owning: key)
    }

    /// Reads a PEM private key (PKCS#8 or traditional, unencrypted).
    /// - Throws: `OpenSSLError` when the bytes are not a PEM private key.
    public static func fromPEM(_ pem: [UInt8]) throws -> PrivateKey {
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        defer { BIO_free(bio) }
        // A callback that gives no passphrase: an encrypted key fails here instead of OpenSSL
        // asking for one on the terminal (a trial saw "Enter PEM pass phrase:" twice).
        guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil) else {
            throw OpenSSLError("reading a PEM private key")
        }
        return PrivateKey(owning: key)
    }

    /// The key as unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY").
    public func pkcs8PEM() throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLError("allocating a buffer") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PKCS8PrivateKey(bio, handle, nil, nil, 0, nil, nil) == 1 else {
            throw OpenSSLError("writing a private key")
        }
        return bioBytes(bio)
    }

    /// The key type, if it is one `tv` makes.
    public var type: KeyType? {
        let bits = EVP_PKEY_get_bits(handle)
        if EVP_PKEY_is_a(handle, "EC") == 1 {
            return bits == 256 ? .ecdsaP256 : bits == 384 ? .ecdsaP384 : nil
        }
        if EVP_PKEY_is_a(handle, "RSA") == 1 {
            return bits == 2048 ? .rsa2048 : bits == 3072 ? .rsa3072 : nil
        }
        return nil
    }

    /// A description such as "ECDSA P-256" or "RSA 4096", also for keys `tv` does not make.
    public var typeDescription: String {
        if let type { return type.displayName }
        let bits = EVP_PKEY_get_bits(handle)
        if EVP_PKEY_is_a(handle, "EC") == 1 { return "ECDSA \(bits)-bit" }
        if EVP_PKEY_is_a(handle, "RSA") == 1 { return "RSA \(bits)" }
        return "\(String(cString: EVP_PKEY_get0_type_name(handle))) \(bits)-bit"
    }

    /// Whether tv can sign certificates with it: ECDSA or RSA (an Ed25519 or Ed448 key signs
    /// without a separate digest, which the certificate builder always names).
    public var canSignCertificates: Bool { EVP_PKEY_is_a(handle, "EC") == 1 || isRSA }

    /// Whether clients at OpenSSL's default security level (1 and Debian's 2: at least 80 and
    /// 112 bits of security) refuse a chain signed by this key: RSA under 2048 bits, or an EC
    /// key under 224 bits. curl and Python said "CA certificate key too weak" for every leaf of
    /// an imported RSA-1024 root that tv had taken (a trial). NIST SP 800-57 part 1, table 2.
    public var tooWeakForClients: Bool {
        let bits = EVP_PKEY_get_bits(handle)
        return isRSA ? bits < 2048 : bits < 224
    }

    /// Whether this is an RSA key (leaves then also carry keyEncipherment).
    public var isRSA: Bool { EVP_PKEY_is_a(handle, "RSA") == 1 }
}

/// Reads everything a memory BIO holds.
func bioBytes(_ bio: OpaquePointer) -> [UInt8] {
    var pointer: UnsafeMutablePointer<CChar>?
    let count = tv_bio_get_mem_data(bio, &pointer)
    guard count > 0, let pointer else { return [] }
    return pointer.withMemoryRebound(to: UInt8.self, capacity: count) {
        Array(UnsafeBufferPointer(start: $0, count: count))
    }
}
