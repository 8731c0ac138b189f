import COpenSSL
import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// An X.509 certificate held by OpenSSL (`X509`), freed when the last reference goes.
///
/// `@unchecked Sendable`: the certificate is finished (signed) before this object exists and is
/// never mutated afterwards; OpenSSL allows concurrent reads of a finished `X509` (its cached
/// extension data is computed under a lock, openssl-threads(7)); freed only in `deinit`.
public final class Certificate: @unchecked Sendable {
    /// The OpenSSL handle; valid for the life of this object.
    public let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { X509_free(handle) }

    /// Shares an `X509` someone else holds (e.g. a TLS peer's certificate) without re-parsing it:
    /// takes its own reference (X509_up_ref). The certificate must be finished (no more changes).
    public static func retaining(_ handle: OpaquePointer) -> Certificate {
        X509_up_ref(handle)
        return Certificate(owning: handle)
    }

    /// Reads the first certificate of a PEM text.
    /// - Throws: `OpenSSLError` when no PEM certificate can be read.
    public static func fromPEM(_ pem: [UInt8]) throws -> Certificate {
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        defer { BIO_free(bio) }
        guard let cert = PEM_read_bio_X509(bio, nil, nil, nil) else {
            throw OpenSSLError("reading a PEM certificate")
        }
        return Certificate(owning: cert)
    }

    /// Reads every certificate of a PEM text, in order (an empty list when there is none).
    public static func allFromPEM(_ pem: [UInt8]) -> [Certificate] {
        let bio = pem.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        defer { BIO_free(bio) }
        var out: [Certificate] = []
        while let cert = PEM_read_bio_X509(bio, nil, nil, nil) { out.append(Certificate(owning: cert)) }
        ERR_clear_error()
        return out
    }

    /// Reads a DER certificate.
    /// - Throws: `OpenSSLError` when the bytes are not a DER certificate.
    public static func fromDER(_ der: [UInt8]) throws -> Certificate {
        try der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let cert = d2i_X509(nil, &p, buf.count) else { throw OpenSSLError("reading a DER certificate") }
            return Certificate(owning: cert)
        }
    }

    /// The DER encoding (RFC 5280 §4.1).
    public var der: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_X509(handle, &out)
        guard count > 0, let out else { return [] }
        defer { tv_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(count)))
    }

    /// The PEM encoding ("BEGIN CERTIFICATE", RFC 7468 §5).
    public var pem: [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        PEM_write_bio_X509(bio, handle)
        return bioBytes(bio)
    }

    /// SHA-256 of the DER, 32 bytes.
    public var sha256: [UInt8] { digest(EVP_sha256()) }
    /// SHA-1 of the DER, 20 bytes (still what many UIs show).
    public var sha1: [UInt8] { digest(EVP_sha1()) }

    private func digest(_ md: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var len: UInt32 = 0
        X509_digest(handle, md, &out, &len)
        return Array(out.prefix(Int(len)))
    }

    /// The subject as one line in RFC 2253 order reversed for reading (`CN=…, O=…`).
    public var subject: String { Certificate.oneLine(X509_get_subject_name(handle)) }
    /// The issuer, written like `subject`.
    public var issuer: String { Certificate.oneLine(X509_get_issuer_name(handle)) }

    /// The subject's common name, if it has one.
    public var commonName: String? {
        let name = X509_get_subject_name(handle)
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let n = ASN1_STRING_to_UTF8(&utf8, data)
        guard n >= 0, let utf8 else { return nil }
        defer { tv_openssl_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(n)), as: UTF8.self)
    }

    static func oneLine(_ name: OpaquePointer?) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, tv_name_print_flags())
        return String(decoding: bioBytes(bio), as: UTF8.self)
    }

    /// The serial number as uppercase hex (no separators).
    public var serialHex: String {
        guard let bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(handle), nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { tv_openssl_free(hex) }
        return String(cString: hex)
    }

    /// The serial number's content octets (big-endian, as DER carries them).
    public var serialBytes: [UInt8] {
        guard let bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(handle), nil) else { return [] }
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        BN_bn2bin(bn, &out)
        return out
    }

    /// notBefore as seconds since 1970-01-01 UTC.
    public var notBefore: Int64 { Certificate.epochSeconds(X509_get0_notBefore(handle)) }
    /// notAfter as seconds since 1970-01-01 UTC.
    public var notAfter: Int64 { Certificate.epochSeconds(X509_get0_notAfter(handle)) }

    static func epochSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64 {
        var t = tm()
        guard let time, ASN1_TIME_to_tm(time, &t) == 1 else { return 0 }
        return Int64(timegm(&t))
    }

    /// Whether basicConstraints says CA:TRUE (RFC 5280 §4.2.1.9).
    public var isCA: Bool { (X509_get_extension_flags(handle) & UInt32(EXFLAG_CA)) != 0 }

    /// The pathLenConstraint, or nil when absent.
    public var pathLength: Int? {
        let v = X509_get_pathlen(handle)
        return v < 0 ? nil : Int(v)
    }

    /// keyUsage bits as OpenSSL's `KU_*` flags; nil when the extension is absent.
    public var keyUsage: UInt32? {
        guard (X509_get_extension_flags(handle) & UInt32(EXFLAG_KUSAGE)) != 0 else { return nil }
        return X509_get_key_usage(handle)
    }

    /// extendedKeyUsage bits as OpenSSL's `XKU_*` flags; nil when the extension is absent.
    public var extendedKeyUsage: UInt32? {
        guard (X509_get_extension_flags(handle) & UInt32(EXFLAG_XKUSAGE)) != 0 else { return nil }
        return X509_get_extended_key_usage(handle)
    }

    /// The subject key identifier (RFC 5280 §4.2.1.2), if present.
    public var subjectKeyIdentifier: [UInt8]? {
        guard let skid = X509_get0_subject_key_id(handle) else { return nil }
        return Certificate.octets(skid)
    }

    /// The authority key identifier's keyIdentifier (RFC 5280 §4.2.1.1), if present.
    public var authorityKeyIdentifier: [UInt8]? {
        guard let akid = X509_get0_authority_key_id(handle) else { return nil }
        return Certificate.octets(akid)
    }

    static func octets(_ s: UnsafePointer<ASN1_OCTET_STRING>) -> [UInt8] {
        let n = Int(ASN1_STRING_length(s))
        guard n > 0, let p = ASN1_STRING_get0_data(s) else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: n))
    }

    /// Whether the certificate carries name constraints (RFC 5280 §4.2.1.10).
    public var hasNameConstraints: Bool { isCritical(NID_name_constraints) != nil }

    /// Whether the extension with `nid` is present and marked critical.
    public func isCritical(_ nid: Int32) -> Bool? {
        let index = X509_get_ext_by_NID(handle, nid, -1)
        guard index >= 0, let ext = X509_get_ext(handle, index) else { return nil }
        return X509_EXTENSION_get_critical(ext) == 1
    }

    /// Subject alternative names: DNS names and IP addresses, in certificate order.
    public var subjectAlternativeNames: [SubjectAlternativeName] {
        guard let raw = X509_get_ext_d2i(handle, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { tv_general_names_free(names) }
        var out: [SubjectAlternativeName] = []
        for i in 0..<tv_general_names_count(names) {
            guard let gn = tv_general_names_value(names, i) else { continue }
            switch gn.pointee.type {
            case GEN_DNS:
                let s = gn.pointee.d.dNSName!
                out.append(.dns(String(decoding: Certificate.octets(UnsafePointer(s)), as: UTF8.self)))
            case GEN_IPADD:
                let bytes = Certificate.octets(UnsafePointer(gn.pointee.d.iPAddress!))
                if let ip = IPAddress(bytes: bytes) { out.append(.ip(ip)) }
            default:
                continue
            }
        }
        return out
    }

    /// Whether `key` is the private half of this certificate's public key.
    public func matches(_ key: PrivateKey) -> Bool {
        let ok = X509_check_private_key(handle, key.handle) == 1
        ERR_clear_error()
        return ok
    }

    /// The public key's type, as `PrivateKey.typeDescription` writes it.
    public var publicKeyDescription: String {
        guard let pkey = X509_get0_pubkey(handle) else { return "unknown" }
        let bits = EVP_PKEY_get_bits(pkey)
        if EVP_PKEY_is_a(pkey, "EC") == 1 { return bits == 256 ? "ECDSA P-256" : bits == 384 ? "ECDSA P-384" : "ECDSA \(bits)-bit" }
        if EVP_PKEY_is_a(pkey, "RSA") == 1 { return "RSA \(bits)" }
        return "\(String(cString: EVP_PKEY_get0_type_name(pkey))) \(bits)-bit"
    }

    /// OpenSSL's `subject_hash_old` (MD5-based), the file name Android's system store uses
    /// (`<hash>.0`, AOSP system/ca-certificates/README.cacerts).
    public var subjectHashOld: UInt {
        UInt(X509_subject_name_hash_old(handle))
    }

    /// Whether this certificate's signature verifies under `issuer`'s public key.
    public func isSigned(by issuer: Certificate) -> Bool {
        guard let pkey = X509_get0_pubkey(issuer.handle) else { return false }
        let ok = X509_verify(handle, pkey) == 1
        ERR_clear_error()
        return ok
    }
}

/// One subject alternative name (RFC 5280 §4.2.1.6) of the kinds `tv` writes.
public enum SubjectAlternativeName: Sendable, Equatable, Hashable, CustomStringConvertible {
    case dns(String)
    case ip(IPAddress)

    public var description: String {
        switch self {
        case .dns(let name): return "DNS:\(name)"
        case .ip(let ip): return "IP:\(ip)"
        }
    }

    /// The name or address alone, as a user writes it (`a.test`, `10.0.0.1`).
    public var name: String {
        switch self {
        case .dns(let name): return name
        case .ip(let ip): return ip.description
        }
    }
}
