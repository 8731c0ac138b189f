import COpenSSL

/// Why OpenSSL cannot use a root as its own trust anchor for TLS server chains: OpenSSL's
/// verify error code (`X509_V_ERR_*`), its text rendered from the code by OpenSSL. Decisions
/// branch on `code`.
public struct RootAnchorFailure: Sendable, Equatable {
    /// OpenSSL's verify error, e.g. 30 (`X509_V_ERR_AKID_SKID_MISMATCH`), 7 (signature failure).
    public let code: Int32

    /// Creates a failure with OpenSSL's verify error `code`.
    public init(code: Int32) { self.code = code }

    /// OpenSSL's text for the code, e.g. "authority and subject key identifier mismatch".
    public var text: String { String(cString: X509_verify_cert_error_string(Int(code))) }

    /// What to change in the root, as a clause after "reissue it".
    public var remedy: String {
        switch code {
        case X509_V_ERR_AKID_SKID_MISMATCH, X509_V_ERR_AKID_ISSUER_SERIAL_MISMATCH:
            return "with an authorityKeyIdentifier equal to its subjectKeyIdentifier, or with none"
        case X509_V_ERR_SUBJECT_ISSUER_MISMATCH:
            return "self-signed, with its issuer name equal to its subject name"
        case X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            return "with keyCertSign in its keyUsage"
        case X509_V_ERR_CERT_SIGNATURE_FAILURE:
            return "signed by its own key"
        case X509_V_ERR_INVALID_PURPOSE:
            return "with serverAuth in its extendedKeyUsage, or with none"
        default:
            return "so that `openssl verify -CAfile ROOT ROOT` accepts it"
        }
    }
}

extension Certificate {
    /// Whether this root issues itself as OpenSSL sees it, the part of being an anchor that needs
    /// no key: `X509_check_issued(root, root)` (issuer name = subject name, the authority key
    /// identifier, if any, = the subject key identifier, keyCertSign when keyUsage is present)
    /// and a self-signature that verifies with its own public key. Nil when it does.
    public var selfIssueFailure: RootAnchorFailure? {
        let issued = X509_check_issued(handle, handle)
        guard issued == X509_V_OK else { return RootAnchorFailure(code: issued) }
        defer { ERR_clear_error() }
        guard let key = X509_get0_pubkey(handle), X509_verify(handle, key) == 1 else {
            return RootAnchorFailure(code: X509_V_ERR_CERT_SIGNATURE_FAILURE)
        }
        return nil
    }
}

extension CertificateAuthority {
    /// Whether OpenSSL accepts this root as the only trust anchor of the chains tv will serve
    /// (what `openssl verify -CAfile root.pem root.pem` asks, for TLS servers): the root must
    /// issue itself (`Certificate.selfIssueFailure`: names, authority/subject key identifiers,
    /// keyUsage, self-signature), and a leaf it signs must verify under
    /// `X509_PURPOSE_SSL_SERVER` / `X509_TRUST_SSL_SERVER` with the root as the only anchor.
    /// Nil when it does; else OpenSSL's verify error.
    /// - Parameter now: seconds since 1970-01-01 UTC, the verification time.
    /// - Throws: `OpenSSLError` when the test leaf cannot be minted.
    public func anchorFailure(now: Int64) throws -> RootAnchorFailure? {
        if let failure = root.selfIssueFailure { return failure }
        let leaf = try mintLeaf(for: try LeafIdentity(names: [Self.anchorCheckHost]), now: now).certificate
        guard let store = X509_STORE_new() else { return RootAnchorFailure(code: X509_V_ERR_OUT_OF_MEM) }
        defer { X509_STORE_free(store) }
        X509_STORE_add_cert(store, root.handle)
        guard let ctx = X509_STORE_CTX_new() else { return RootAnchorFailure(code: X509_V_ERR_OUT_OF_MEM) }
        defer { X509_STORE_CTX_free(ctx) }
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard X509_STORE_CTX_init(ctx, store, leaf.handle, nil) == 1 else { return RootAnchorFailure(code: X509_V_ERR_UNSPECIFIED) }
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER)
        X509_STORE_CTX_set_trust(ctx, X509_TRUST_SSL_SERVER)
        let param = X509_STORE_CTX_get0_param(ctx)
        // An anchor's own signature is not checked unless asked (openssl-verification-options(1)).
        X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_CHECK_SS_SIGNATURE))
        X509_VERIFY_PARAM_set_time(param, time_t(now))
        guard X509_verify_cert(ctx) == 1 else {
            let code = X509_STORE_CTX_get_error(ctx)
            // A name-constrained root (RFC 5280 §4.2.1.10) refuses the throwaway leaf's name
            // only: it anchors the names it permits, and clients refuse the rest themselves (a
            // trial's `.internal.test` root could not be imported, though `openssl verify`
            // accepted it and its leaves).
            if code == X509_V_ERR_PERMITTED_VIOLATION, root.hasNameConstraints { return nil }
            return RootAnchorFailure(code: code)
        }
        return nil
    }

    /// The name of the throwaway leaf `anchorFailure` verifies (never served).
    static let anchorCheckHost = "anchor-check.tunnelvision.invalid"
}
