import COpenSSL
import CTVShims
import LocalCA
import TVHome
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The two `SSL_CTX` objects every connection shares, configured once at start.
///
/// sslsplit spends most of its ~4 ms per connection building contexts; here a connection costs an
/// `SSL_new` per leg. The server context (client legs) carries the shared leaf key; each SSL gets
/// its leaf certificate with `SSL_use_certificate`. The client context (upstream legs) carries
/// the verification store.
///
/// `@unchecked Sendable`: both contexts are fully configured in `init` and never changed after,
/// but for two changes made for running handshakes: a root added to the client context's store
/// (`trustUpstream`: the X509_STORE takes its own lock) and the key log callback set once
/// (`armKeyLog`: one pointer, NULL to tv's function and never back, `tv_keylog_arm`). OpenSSL
/// allows concurrent `SSL_new` and handshakes on a shared, no-longer-modified `SSL_CTX`
/// (openssl-threads(7)). Freed in `deinit` only.
final class TLSContexts: @unchecked Sendable {
    let server: OpaquePointer
    let client: OpaquePointer
    let sessionCache: UpstreamSessionCache
    /// The TLS 1.2 suites the server context enables, by the key type they authenticate with
    /// (OpenSSL's own table, `SSL_CIPHER_get_auth_nid`): what `LeafKeyPlan` reads a client's
    /// suites against.
    let serverSuiteKeys: LeafKeyPlan.CipherSuiteKeys
    /// The user's client certificates, in order (`ClientCertificateChoice` picks among them).
    let clientIdentities: [ClientCertificate]
    private let keylogFD: Int32
    /// The client legs' secrets recorder, retained for the C callback while the server context lives.
    private let secretsBox: Unmanaged<SecretsBox>?
    /// The upstream legs' recorder (`ProxyConfiguration.upstreamLegSecrets`, i21-audit).
    private let upstreamSecretsBox: Unmanaged<SecretsBox>?

    init(configuration: ProxyConfiguration, sessionCache: UpstreamSessionCache) throws {
        self.sessionCache = sessionCache
        clientIdentities = try configuration.clientCertificates.map { try ClientCertificate.load($0, now: Int64(time(nil))) }
        var keylog: Int32 = -1
        if let path = configuration.keylogPath, !path.isEmpty {
            do { keylog = try SecretFile.openKeyLogForAppend(path) } catch {
                switch error {
                case .secretFile(.refused(let problem)): throw ProxyError.keylogRefused(path: path, problem: problem)
                case .notAKeyLog: throw ProxyError.keylogNotAKeyLog(path: path)
                case .secretFile(.cannotOpen(let reason)): throw ProxyError.keylogUnwritable(path: path, reason: reason)
                case .secretFile(.tooManyOpenFiles(let scope)): throw TooManyOpenFiles(opening: "the key log file \(path)", scope: scope)
                }
            }
        }
        keylogFD = keylog
        guard let server = SSL_CTX_new(TLS_server_method()), let client = SSL_CTX_new(TLS_client_method()) else {
            if keylog >= 0 { close(keylog) }
            throw ProxyError.tlsSetupFailed(OpenSSLError("creating TLS contexts").reasons.joined(separator: "; "))
        }
        self.server = server
        self.client = client

        let legacy = configuration.minimumTLSVersion < .tls12
        for ctx in [server, client] {
            _ = tv_ssl_ctx_set_min_proto(ctx, Int32(configuration.minimumTLSVersion.rawValue))
            if legacy {
                SSL_CTX_set_security_level(ctx, 0)
                _ = SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0")
            }
            SSL_CTX_set_options(ctx, tv_SSL_OP_NO_COMPRESSION | tv_SSL_OP_NO_RENEGOTIATION | tv_SSL_OP_IGNORE_UNEXPECTED_EOF)
            // TLS 1.3 suites: OpenSSL's defaults in OpenSSL's order, and on client legs the
            // client's order decides (no server preference). A client gets the suite it asked for,
            // as from the real server, and the upstream leg offers what any OpenSSL client offers.
            // (AES-128-GCM first would save ~0.74 M instructions per connection, the SHA-384 key
            // schedule, but would change what the client negotiated and make the benchmark's
            // anchors, which all run AES-256-GCM, no longer like for like.)
            _ = tv_ssl_ctx_set_mode(ctx, tv_SSL_MODE_RELEASE_BUFFERS | tv_SSL_MODE_ENABLE_PARTIAL_WRITE | tv_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
            // Read ahead into a buffer of four full records: one read(2) per ~64 KiB in bulk
            // transfers instead of one per record (the buffer is released when empty).
            tv_ssl_ctx_set_read_ahead(ctx, 1)
            SSL_CTX_set_default_read_buffer_len(ctx, 4 * (16_384 + 256) + 5)
            if keylog >= 0 { _ = tv_keylog_attach(ctx, keylog) }
        }

        // Client legs (we are the server): session tickets for resumption (stateless, RFC 8446
        // §4.6.1), one ticket per handshake, ALPN chosen per connection.
        let sid: [UInt8] = Array("tv-client-leg".utf8)
        _ = SSL_CTX_set_session_id_context(server, sid, UInt32(sid.count))
        _ = tv_ssl_ctx_set_session_cache_mode(server, tv_SSL_SESS_CACHE_SERVER)
        _ = tv_ssl_ctx_set_session_cache_size(server, 1024)
        _ = SSL_CTX_set_num_tickets(server, 1)
        SSL_CTX_set_alpn_select_cb(server, tvALPNSelect, nil)
        if let authority = configuration.authority {
            guard SSL_CTX_use_PrivateKey(server, authority.leafKey.handle) == 1 else {
                throw ProxyError.tlsSetupFailed(OpenSSLError("loading the leaf key").reasons.joined(separator: "; "))
            }
        }

        // Upstream legs (we are the client): verify against the system store (+ the extra CA
        // file, + tv's own root), but let the handshake finish and judge the result ourselves, so that a refusal
        // can say exactly why and the flow can show the certificate (SSL_VERIFY_NONE still runs
        // the verification; SSL_get_verify_result reads it, and the callback notes which
        // certificate of the chain the error is about: `UpstreamVerification`).
        SSL_CTX_set_verify(client, SSL_VERIFY_NONE, tvUpstreamVerify)
        SystemRootPlan.current().load(into: client)  // as set_default_verify_paths, the bundle on demand
        // tv's own root also verifies servers: `tv ca issue` makes certificates for local
        // development servers, and only this machine holds the root's key.
        if let authority = configuration.authority, let store = SSL_CTX_get_cert_store(client) {
            _ = X509_STORE_add_cert(store, authority.root.handle)
        }
        if let file = configuration.upstreamCAFile {
            guard access(file, R_OK) == 0 else {
                throw ProxyError.upstreamCAFileUnreadable(path: file, reason: Errno(errno).phrase)
            }
            guard SSL_CTX_load_verify_locations(client, file, nil) == 1 else {
                // OpenSSL opens the file itself: with no descriptor left that is not a bad file.
                let failure = OpenSSLError("loading \(file)")
                if let code = failure.systemErrno, let shortage = TooManyOpenFiles(errno: code, opening: "the upstream CA file \(file)") {
                    throw shortage
                }
                throw ProxyError.upstreamCAFileUnreadable(path: file, reason: "no PEM certificate could be read from it")
            }
        }
        _ = tv_ssl_ctx_set_session_cache_mode(client, tv_SSL_SESS_CACHE_CLIENT | tv_SSL_SESS_CACHE_NO_INTERNAL_STORE)
        SSL_CTX_sess_set_new_cb(client, tvNewUpstreamSession)
        secretsBox = configuration.clientLegSecrets.flatMap { Self.attachSecrets($0, to: server) }
        upstreamSecretsBox = configuration.upstreamLegSecrets.flatMap { Self.attachSecrets($0, to: client) }
        serverSuiteKeys = Self.suiteKeys(server)
        // A server that asks for a client certificate (in the handshake, in TLS 1.3
        // post-handshake authentication, in a TLS 1.2 renegotiation): noted, and answered with
        // the user's certificate for it, if any.
        SSL_CTX_set_cert_cb(client, tvClientCertificate, nil)
        ERR_clear_error()
        // The recorders' lines are made once something wants them (`KeyLogSwitch`).
        if secretsBox != nil || upstreamSecretsBox != nil {
            if let keyLogSwitch = configuration.keyLogSwitch {
                keyLogSwitch.whenOn { [weak self] in self?.armKeyLog() }
            } else {
                armKeyLog()
            }
        }
    }

    /// Whether libssl makes key log lines for each context (a key log file, or a recorder's
    /// lines wanted): `(server, client)`.
    var keyLogArmed: (server: Bool, client: Bool) {
        (SSL_CTX_get_keylog_callback(server) != nil, SSL_CTX_get_keylog_callback(client) != nil)
    }

    /// Gives each context with a recorder attached its key log callback (once; from any thread,
    /// handshakes running: `tv_keylog_arm`).
    private func armKeyLog() {
        if secretsBox != nil { tv_keylog_arm(server) }
        if upstreamSecretsBox != nil { tv_keylog_arm(client) }
    }

    /// The suites `ctx` enables, split by the certificate key their authentication needs.
    static func suiteKeys(_ ctx: OpaquePointer) -> LeafKeyPlan.CipherSuiteKeys {
        var keys = LeafKeyPlan.CipherSuiteKeys()
        guard let list = SSL_CTX_get_ciphers(ctx) else { return keys }
        let stack = list
        for i in 0..<OPENSSL_sk_num(stack) {
            guard let raw = OPENSSL_sk_value(stack, i) else { continue }
            let cipher = OpaquePointer(raw)
            let id = SSL_CIPHER_get_protocol_id(cipher)
            switch SSL_CIPHER_get_auth_nid(cipher) {
            case NID_auth_ecdsa: keys.ecdsa.insert(id)
            case NID_auth_rsa: keys.rsa.insert(id)
            default: break
            }
        }
        return keys
    }

    /// Adds `root` to the roots upstream servers are verified against (a CA made while the
    /// server runs: `tv ca issue` certificates from it verify, as the first CA's do). Safe from any
    /// thread: an X509_STORE takes its own lock in X509_STORE_add_cert; a root already there is
    /// accepted as is.
    func trustUpstream(_ root: Certificate) {
        if let store = SSL_CTX_get_cert_store(client) { _ = X509_STORE_add_cert(store, root.handle) }
        ERR_clear_error()
    }

    /// Takes `root` out of the roots upstream servers are verified against (a CA remade or
    /// removed while the server runs: the root given up must not go on vouching for servers,
    /// which it did until the next start: a new-user trial), and forgets the upstream sessions,
    /// whose resumption would carry the old verification over. Safe from any thread (the
    /// store's own lock; the cache's).
    func untrustUpstream(_ root: Certificate) {
        if let store = SSL_CTX_get_cert_store(client) { _ = tv_x509_store_remove_cert(store, root.handle) }
        sessionCache.removeAll()
        ERR_clear_error()
    }

    /// Hands `ctx`'s key log lines to `recorder` (`tv_keylog_attach_sink`), once the context is
    /// armed (`armKeyLog`); the box to release when the contexts go, nil when it could not be
    /// attached.
    static func attachSecrets(_ recorder: any TLSSecretsRecorder, to ctx: OpaquePointer) -> Unmanaged<SecretsBox>? {
        let box = Unmanaged.passRetained(SecretsBox(recorder))
        if tv_keylog_attach_sink(ctx, tvClientLegSecret, box.toOpaque()) == 1 { return box }
        box.release()
        return nil
    }

    deinit {
        SSL_CTX_free(server)
        SSL_CTX_free(client)
        if keylogFD >= 0 { close(keylogFD) }
        secretsBox?.release()
        upstreamSecretsBox?.release()
    }
}

/// Holds the client legs' `TLSSecretsRecorder` for the C key log callback.
final class SecretsBox: Sendable {
    let recorder: any TLSSecretsRecorder
    init(_ recorder: any TLSSecretsRecorder) { self.recorder = recorder }
}

/// OpenSSL's key log line for a leg, handed to the session's recorder (never blocks).
private let tvClientLegSecret: tv_secrets_sink_fn = { context, line, length in
    guard let context, let line else { return }
    Unmanaged<SecretsBox>.fromOpaque(context).takeUnretainedValue().recorder
        .record(keyLogLine: UnsafeRawBufferPointer(start: line, count: length))
}

/// ALPN on a client leg: select exactly what the upstream chose (`ALPNSelection`), or nothing.
private let tvALPNSelect: @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?) -> Int32 = { ssl, out, outlen, input, inlen, _ in
    guard let session = TLSSession.from(ssl), let input, let out, let outlen else { return SSL_TLSEXT_ERR_NOACK }
    let offered = UnsafeBufferPointer(start: input, count: Int(inlen))
    guard let range = ALPNSelection.select(serverChose: session.alpnChoice, clientOffered: offered) else {
        return SSL_TLSEXT_ERR_NOACK
    }
    out.pointee = input + range.lowerBound
    outlen.pointee = UInt8(range.count)
    return SSL_TLSEXT_ERR_OK
}

/// A new upstream session (TLS 1.3 tickets arrive after the handshake): keep it for resumption.
private let tvNewUpstreamSession: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
    guard let session, let owner = TLSSession.from(ssl), let cache = owner.sessionCache, let key = owner.sessionKey,
          SSL_SESSION_is_resumable(session) == 1 else { return 0 }
    cache.store(session, for: key)
    return 1
}

/// A server asked for a client certificate (OpenSSL calls this on the upstream leg whenever a
/// CertificateRequest arrives): note it on the leg, and set the certificate
/// `ClientCertificateChoice` picks for the server, if any (none: an empty Certificate message).
private let tvClientCertificate: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, _ in
    guard let ssl, let session = TLSSession.from(ssl) else { return 1 }
    session.clientCertificateAsk.noteRequest()
    guard let server = session.clientCertificateServer,
          let index = ClientCertificateChoice.select(host: server.host, port: server.port,
                                                     patterns: session.clientIdentities.map(\.pattern)) else { return 1 }
    let identity = session.clientIdentities[index]
    guard SSL_use_certificate(ssl, identity.certificate.handle) == 1, SSL_use_PrivateKey(ssl, identity.key.handle) == 1 else {
        ERR_clear_error()
        return 1
    }
    _ = tv_ssl_clear_chain_certs(ssl)
    for certificate in identity.chain { _ = tv_ssl_add1_chain_cert(ssl, certificate.handle) }
    session.clientCertificateAsk.presented = true
    return 1
}
