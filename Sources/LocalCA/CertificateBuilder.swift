import COpenSSL
import CTVShims

/// Builds and signs one X.509 v3 certificate through OpenSSL; used for the root and for leaves.
///
/// Extensions are added with OpenSSL's own configuration syntax (`X509V3_EXT_nconf_nid`), so the
/// ASN.1 is OpenSSL's, never ours. Not thread-safe: one builder per certificate. An unfinished
/// certificate is freed with the builder; `sign` hands the finished one over.
final class CertificateBuilder {
    private var pending: OpaquePointer?
    private var cert: OpaquePointer { pending! }

    deinit { if let pending { X509_free(pending) } }

    /// Starts a v3 certificate for `subjectKey` with the given serial and validity.
    /// - Parameters:
    ///   - serial: the serial's content octets (positive: first byte 0x01–0x7F).
    ///   - notBefore, notAfter: seconds since 1970-01-01 UTC.
    init(subjectKey: PrivateKey, serial: [UInt8], notBefore: Int64, notAfter: Int64) throws {
        guard let cert = X509_new() else { throw OpenSSLError("allocating a certificate") }
        self.pending = cert
        guard X509_set_version(cert, 2) == 1 else { throw OpenSSLError("setting the version") }
        guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { throw OpenSSLError("making the serial") }
        defer { BN_free(bn) }
        guard let asn1 = BN_to_ASN1_INTEGER(bn, nil) else { throw OpenSSLError("making the serial") }
        defer { ASN1_INTEGER_free(asn1) }
        X509_set_serialNumber(cert, asn1)
        guard let nb = ASN1_TIME_set(nil, time_t(notBefore)), let na = ASN1_TIME_set(nil, time_t(notAfter)) else {
            throw OpenSSLError("setting the validity")
        }
        defer { ASN1_TIME_free(nb); ASN1_TIME_free(na) }
        X509_set1_notBefore(cert, nb)
        X509_set1_notAfter(cert, na)
        guard X509_set_pubkey(cert, subjectKey.handle) == 1 else { throw OpenSSLError("setting the public key") }
    }

    /// Sets the subject to the given (attribute, value) pairs in order, e.g. [("CN","x"),("O","y")];
    /// an empty list leaves the subject empty (then SAN must be critical, RFC 5280 §4.2.1.6).
    func setSubject(_ rdns: [(String, String)]) throws {
        let name = X509_get_subject_name(cert)
        for (field, value) in rdns {
            let ok = X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0)
            guard ok == 1 else { throw OpenSSLError("writing the subject's \(field)") }
        }
    }

    /// Sets the issuer name (a copy of the issuer certificate's subject, or our own for a root).
    func setIssuer(_ issuer: Certificate?) throws {
        let name = issuer.map { X509_get_subject_name($0.handle) } ?? X509_get_subject_name(cert)
        guard X509_set_issuer_name(cert, name) == 1 else { throw OpenSSLError("setting the issuer") }
    }

    /// Adds one extension in OpenSSL configuration syntax, e.g. (NID_basic_constraints,
    /// "critical,CA:TRUE,pathlen:0"). `issuer` nil means self-issued (for keyid look-ups).
    func addExtension(_ nid: Int32, _ value: String, issuer: Certificate?) throws {
        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer?.handle ?? cert, cert, nil, nil, 0)
        guard let ext = X509V3_EXT_nconf_nid(nil, &ctx, nid, value) else {
            throw OpenSSLError("adding the extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(cert, ext, -1) == 1 else { throw OpenSSLError("adding an extension") }
    }

    /// Signs with `key` (SHA-384 for P-384 keys, SHA-256 otherwise) and hands the finished certificate over.
    func sign(with key: PrivateKey) throws -> Certificate {
        let md = key.type == .ecdsaP384 ? EVP_sha384() : EVP_sha256()
        guard X509_sign(cert, key.handle, md) > 0 else { throw OpenSSLError("signing the certificate") }
        let finished = cert
        pending = nil
        return Certificate(owning: finished)
    }
}

/// Serial numbers: 16 random bytes, first byte 0x01–0x7F so the INTEGER is positive and 16 octets
/// (RFC 5280 §4.1.2.2: positive, at most 20 octets; at least 64 bits of entropy, CA/B BR 7.1).
enum SerialNumber {
    static func random() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, 16) == 1 else { throw OpenSSLError("drawing a random serial") }
        bytes[0] &= 0x7F
        if bytes[0] == 0 { bytes[0] = 0x01 }
        return bytes
    }
}
