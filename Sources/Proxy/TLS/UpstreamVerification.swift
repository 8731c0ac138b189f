import COpenSSL
import LocalCA

/// The upstream leg's certificate verification as OpenSSL ran it: the first error its verify
/// callback saw (the code, the depth and the certificate, which `SSL_get_verify_result` alone
/// does not give), read into an `UpstreamCertificateProblem` once the handshake is done.
///
/// The contexts keep `SSL_VERIFY_NONE` (the handshake finishes whatever the result, so tv can say
/// why and show the certificate); the callback returns OpenSSL's own verdict, so verification
/// stops at the same first error it always did (`X509_verify_cert` with the default callback).
struct UpstreamVerifyError {
    var code: Int32
    var depth: Int
    var certificate: Certificate
}

extension UpstreamCertificateProblem.Traits {
    /// The fields of `certificate` a problem's sentence may name.
    init(_ certificate: Certificate) {
        self.init(subject: certificate.subject, issuer: certificate.issuer, commonName: certificate.commonName,
                  names: certificate.subjectAlternativeNames, notBefore: certificate.notBefore, notAfter: certificate.notAfter,
                  key: certificate.publicKeyDescription, signatureAlgorithm: Self.signatureAlgorithm(certificate),
                  extendedKeyUsage: certificate.extendedKeyUsage.map(Self.purposes))
    }

    /// The signature algorithm's long name (`sha256WithRSAEncryption`, `ecdsa-with-SHA1`).
    static func signatureAlgorithm(_ certificate: Certificate) -> String {
        let nid = X509_get_signature_nid(certificate.handle)
        guard nid != NID_undef, let name = OBJ_nid2ln(nid) else { return "an unknown algorithm" }
        return String(cString: name)
    }

    /// OpenSSL's `XKU_*` bits as RFC 5280 §4.2.1.12's names, in that order.
    static func purposes(_ bits: UInt32) -> [String] {
        let named: [(Int32, String)] = [
            (XKU_SSL_SERVER, "serverAuth"), (XKU_SSL_CLIENT, "clientAuth"), (XKU_CODE_SIGN, "codeSigning"),
            (XKU_SMIME, "emailProtection"), (XKU_TIMESTAMP, "timeStamping"), (XKU_OCSP_SIGN, "OCSPSigning"),
            (XKU_DVCS, "dvcs"), (XKU_SGC, "serverGatedCrypto"), (XKU_ANYEKU, "anyExtendedKeyUsage"),
        ]
        return named.filter { bits & UInt32($0.0) != 0 }.map(\.1)
    }
}

extension UpstreamCertificateProblem {
    /// The problem of a finished upstream handshake whose verify result is `code` (not
    /// `X509_V_OK`): the callback's first error when it ran and agrees, else (a resumed session,
    /// which is not verified again and keeps its result) the server's own certificate, `peer`;
    /// with neither, a certificate of no known fields (the failure still counts).
    static func read(code: Int32, recorded: UpstreamVerifyError?, peer: Certificate?, host: String,
                     checkedAt: Int64, securityLevel: Int32) -> UpstreamCertificateProblem {
        var depth = 0
        var traits = Traits(subject: "", issuer: "", commonName: nil, names: [], notBefore: 0, notAfter: 0,
                            key: "unknown", signatureAlgorithm: "an unknown algorithm", extendedKeyUsage: nil)
        if let recorded, recorded.code == code {
            (depth, traits) = (recorded.depth, Traits(recorded.certificate))
        } else if let peer {
            traits = Traits(peer)
        }
        return UpstreamCertificateProblem(code: code, depth: depth, host: host, certificate: traits,
                                          checkedAt: checkedAt, securityLevel: Int(securityLevel))
    }
}

/// The upstream contexts' verify callback (SSL_CTX_set_verify(3)): notes the first error on the
/// leg (`TLSSession.verifyError`), then answers as OpenSSL's default callback does.
let tvUpstreamVerify: @convention(c) (Int32, OpaquePointer?) -> Int32 = { ok, store in
    guard ok == 0, let store,
          let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
          let session = TLSSession.from(OpaquePointer(raw)), session.verifyError == nil,
          let current = X509_STORE_CTX_get_current_cert(store) else { return ok }
    session.verifyError = UpstreamVerifyError(code: X509_STORE_CTX_get_error(store),
                                              depth: Int(X509_STORE_CTX_get_error_depth(store)),
                                              certificate: Certificate.retaining(current))
    return ok
}
