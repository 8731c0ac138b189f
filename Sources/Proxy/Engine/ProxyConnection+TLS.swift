import COpenSSL
import CTVShims
import LocalCA
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// The two TLS legs: the session to the server as the machine planned it, our leaf to the
/// client, and each handshake driven to its end (reported to the machine as facts).
extension ProxyConnection {
    func startUpstreamTLS(_ plan: ConnectionMachine.UpstreamTLSPlan) {
        guard let up = upstream, let ssl = SSL_new(shared.contexts.client) else {
            return enqueue(.failed(.tlsSession(OpenSSLError("SSL_new").reasons.joined(separator: "; "))))
        }
        let session = TLSSession(ssl: ssl, isServer: false)
        session.attach(fd: up.fd)
        if let name = plan.serverName { _ = tv_ssl_set_sni(ssl, name) }
        if !plan.alpn.isEmpty {
            let wire = ALPNSelection.wireList(plan.alpn)
            _ = SSL_set_alpn_protos(ssl, wire, UInt32(wire.count))
        }
        // A name counts only in a subjectAltName, never in the subject's CN (RFC 6125 §6.4.4,
        // as browsers check it: Chromium since version 58; OpenSSL falls back to the CN when the
        // certificate has no DNS SAN, so a CN-only certificate passed and its leaf was reissued
        // with the SAN browsers require: a new-user trial). An address is matched against
        // iPAddress SANs only (`X509_check_ip` never reads the CN).
        X509_VERIFY_PARAM_set_hostflags(SSL_get0_param(ssl), UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT))
        if IPAddress(plan.verifyHost) != nil {
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), plan.verifyHost)
        } else {
            _ = SSL_set1_host(ssl, plan.verifyHost)
        }
        session.verifyHost = plan.verifyHost
        session.sessionCache = shared.contexts.sessionCache
        session.sessionKey = plan.sessionKey
        // A server may ask for a client certificate: in the handshake, after it (TLS 1.3
        // post-handshake authentication, offered as curl offers it), or in a renegotiation it
        // starts (TLS 1.2, RFC 5746 secure renegotiation only); the certificate callback answers.
        session.clientIdentities = shared.contexts.clientIdentities
        session.clientCertificateServer = (plan.verifyHost, machine.destination?.port ?? 0)
        SSL_set_post_handshake_auth(ssl, 1)
        _ = SSL_clear_options(ssl, tv_SSL_OP_NO_RENEGOTIATION)
        if let cached = shared.contexts.sessionCache.session(for: plan.sessionKey) {
            _ = SSL_set_session(ssl, cached.handle)
        }
        SSL_set_connect_state(ssl)
        up.tls = session
        driveUpstreamHandshake()
    }

    func driveUpstreamHandshake() {
        guard machine.phase.io == .upstreamHandshake, let up = upstream, let session = up.tls else { return }
        switch session.handshake() {
        case .wantRead, .wantWrite:
            return
        case .done:
            feed(.upstreamHandshakeDone(upstreamFacts(session)))
        case .failed(let failure):
            if let key = session.sessionKey { shared.contexts.sessionCache.remove(key) }
            feed(.upstreamHandshakeFailed(failure))
        }
    }

    private func upstreamFacts(_ session: TLSSession) -> ConnectionMachine.UpstreamHandshake {
        let ssl = session.ssl
        let verify = SSL_get_verify_result(ssl)
        // The peer's certificate as OpenSSL already parsed it (re-parsing the DER would decode
        // its public key again, the costliest part of OpenSSL 3's certificate parsing).
        var facts: ServerCertificateFacts?
        var names: [SubjectAlternativeName] = []
        var peerCertificate: Certificate?
        if let peer = SSL_get0_peer_certificate(ssl) {
            if let last = loop.lastUpstreamCertificate, last.certificate.handle == peer {
                (facts, names, peerCertificate) = (last.facts, last.names, last.certificate)
            } else {
                let certificate = Certificate.retaining(peer)
                names = certificate.subjectAlternativeNames
                facts = ServerCertificateFacts(certificate)
                peerCertificate = certificate
                loop.lastUpstreamCertificate = (certificate, facts!, names)
            }
        }
        if session.resumed { loop.counters.upstreamResumptions.wrappingAdd(1, ordering: .relaxed) }
        var problem: UpstreamCertificateProblem?
        if verify != X509_V_OK {
            problem = UpstreamCertificateProblem.read(
                code: Int32(truncatingIfNeeded: verify), recorded: session.verifyError,
                peer: peerCertificate,
                host: session.verifyHost, checkedAt: loop.wallNow / 1_000_000, securityLevel: SSL_get_security_level(ssl))
        }
        let (chain, fresh) = serverChain(ssl, leaf: facts)
        return ConnectionMachine.UpstreamHandshake(
            version: session.version, alpn: session.selectedALPN, certificateProblem: problem,
            certificate: facts, certificateSANs: names, resumed: session.resumed,
            chain: chain, newCertificates: fresh)
    }

    func startClientTLS(_ plan: ConnectionMachine.ClientTLSPlan) {
        guard let cache = shared.leafCache else { return enqueue(.failed(.noCA)) }
        guard let ssl = SSL_new(shared.contexts.server) else { return enqueue(.failed(.tlsSession(nil))) }
        let session = TLSSession(ssl: ssl, isServer: true)
        // One certificate per key type; OpenSSL picks by the client's suites and signature
        // algorithms. The first CA's leaf key is already the context's; another type's key, or a
        // CA made or remade since, goes with its certificate. (`session` frees the SSL on every
        // early return.)
        let contextKey = shared.configuration.authority?.leafKey.handle
        for type in plan.keyTypes {
            let leaf: Leaf
            do {
                leaf = try cache.leaf(for: plan.identity, keyType: type, now: loop.wallNow / 1_000_000)
            } catch {
                return enqueue(.leafMintFailed((error as? OpenSSLError)?.message ?? "\(error)"))
            }
            guard SSL_use_certificate(ssl, leaf.certificate.handle) == 1,
                  leaf.key.handle == contextKey || SSL_use_PrivateKey(ssl, leaf.key.handle) == 1 else {
                ERR_clear_error()
                return enqueue(.failed(.certificateUse))
            }
        }
        session.alpnChoice = plan.alpn
        session.attach(fd: client.fd)
        SSL_set_accept_state(ssl)
        client.tls = session
        // A client that vanished while the upstream leg was set up (its FIN or reset already
        // here) may still let the flight be written, then fail the next read.
        enqueue(.clientTLSStarted(clientAlreadyClosed: client.peerClosing || tv_peer_has_closed(client.fd) == 1))
        driveClientHandshake()
    }

    func driveClientHandshake() {
        guard machine.phase.io == .clientHandshake, let session = client.tls else { return }
        switch session.handshake() {
        case .wantRead, .wantWrite:
            return
        case .done:
            if session.resumed { loop.counters.clientResumptions.wrappingAdd(1, ordering: .relaxed) }
            feed(.clientHandshakeDone(.init(version: session.version, resumed: session.resumed, atMicros: loop.wallNow)))
        case .failed(let failure):
            feed(.clientHandshakeFailed(.init(failure: failure, flightSent: session.flightSent)))
        }
    }
}
