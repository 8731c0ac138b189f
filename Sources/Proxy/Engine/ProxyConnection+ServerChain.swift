import COpenSSL
import CTVShims
import FlowTerms
import LocalCA

/// The certificate chain the real server sent, as the upstream leg saw it (issue 23's evidence:
/// `flows.chain` and the `certificates` table).
extension ProxyConnection {
    /// The fingerprints of `ssl`'s peer chain (`SSL_get_peer_cert_chain`: on a client, leaf
    /// first, then what the server sent after it), and the certificates this loop has not handed
    /// to the sink before (their DER through `i2d_X509`), so a repeating chain costs its
    /// fingerprints only. `leaf` is the peer certificate's facts when already read (its SHA-256
    /// is not computed twice). Fingerprints: SHA-256 through OpenSSL's `X509_digest`.
    func serverChain(_ ssl: OpaquePointer, leaf: ServerCertificateFacts?) -> (chain: [String], new: [SeenCertificate]) {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return ([], []) }
        let peer = SSL_get0_peer_certificate(ssl)
        let count = tv_x509_stack_count(stack)
        guard count > 0 else { return ([], []) }
        var chain: [String] = []
        var fresh: [SeenCertificate] = []
        chain.reserveCapacity(Int(count))
        for index in 0..<count {
            guard let handle = tv_x509_stack_value(stack, index) else { continue }
            let certificate = Certificate.retaining(handle)
            let sha256 = handle == peer ? (leaf?.sha256 ?? Hex.encode(certificate.sha256)) : Hex.encode(certificate.sha256)
            chain.append(sha256)
            if loop.noteCertificateSent(sha256) {
                fresh.append(SeenCertificate(sha256: sha256, der: certificate.der))
            }
        }
        return (chain, fresh)
    }
}

extension EventLoop {
    /// Records that `sha256`'s DER goes to the sink now; false when it already went
    /// (`SentCertificates`).
    func noteCertificateSent(_ sha256: String) -> Bool {
        certificatesSent.note(sha256, now: now, forgets: ServerCertificateMemory.forgets)
    }
}
