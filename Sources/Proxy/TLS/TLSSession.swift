import COpenSSL
import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// One `SSL` object (one TLS leg), owned by a connection on one loop.
///
/// The SSL's app data (ex_data 0) points back here, unretained: the callbacks OpenSSL makes during
/// this leg's handshake (ALPN selection, new session) find what they need. Safe because this
/// object owns the SSL and frees it in `deinit`, so the pointer never outlives its target.
final class TLSSession {
    let ssl: OpaquePointer
    let isServer: Bool
    /// Client-leg (server role): the protocol the upstream chose, to select on this leg.
    var alpnChoice: [UInt8]?
    /// Upstream leg (client role): the session cache and key new sessions are stored under.
    var sessionCache: UpstreamSessionCache?
    var sessionKey: String?
    /// Upstream leg: the user's client certificates and the server they are chosen for
    /// (`ClientCertificateChoice`), read by the certificate callback (`TLSContexts`).
    var clientIdentities: [ClientCertificate] = []
    var clientCertificateServer: (host: String, port: UInt16)?
    /// Upstream leg: whether the server asked for a client certificate and what tv answered;
    /// carried on every failure of this leg (`TLSFailure.clientCertificate`).
    var clientCertificateAsk = ClientCertificateAsk()
    /// Upstream leg: the first error OpenSSL's verification of the server's chain met
    /// (`tvUpstreamVerify`), and the name or address it checked.
    var verifyError: UpstreamVerifyError?
    var verifyHost = ""
    private(set) var handshakeDone = false
    /// Server role: our first flight (with the certificate) has been written out.
    private(set) var flightSent = false
    /// Set by the socket BIO's read callback (`tv_ssl_track_socket_reads`): 1 when the last read
    /// from the socket was short or EAGAIN, i.e. the kernel had nothing more then.
    private let drained = UnsafeMutablePointer<Int32>.allocate(capacity: 1)

    init(ssl: OpaquePointer, isServer: Bool) {
        self.ssl = ssl
        self.isServer = isServer
        drained.initialize(to: 0)
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        SSL_set_ex_data(ssl, 0, nil)
        SSL_free(ssl)
        drained.deallocate()
    }

    /// Attaches the socket: reads through a socket BIO whose reads are tracked (`socketDrained`); writes through
    /// the gathering BIO (`tv_wbio_new`), sent by `flush()`, so that the records of one burst
    /// leave in one send(2).
    func attach(fd: Int32) {
        guard let rbio = BIO_new_socket(fd, BIO_NOCLOSE) else {
            SSL_set_fd(ssl, fd)
            _ = tv_ssl_track_socket_reads(ssl, drained)
            return
        }
        guard let wbio = tv_wbio_new(fd, TLSSession.gatherLimit) else {
            BIO_free(rbio)
            SSL_set_fd(ssl, fd)
            _ = tv_ssl_track_socket_reads(ssl, drained)
            return
        }
        SSL_set_bio(ssl, rbio, wbio)
        _ = tv_ssl_track_socket_reads(ssl, drained)
        gathering = wbio
    }

    /// At most this much waits in the gathering BIO; beyond it SSL_write says WANT_WRITE.
    static let gatherLimit = 512 * 1024
    private var gathering: OpaquePointer?

    /// Bytes written by OpenSSL and not yet sent.
    var unsent: Int { gathering.map { tv_wbio_pending($0) } ?? 0 }

    enum FlushOutcome: Equatable {
        case drained
        case blocked
        case failed(Int32)
    }

    /// Sends what OpenSSL wrote.
    func flush() -> FlushOutcome {
        guard let gathering else { return .drained }
        switch tv_wbio_flush(gathering) {
        case 1: return .drained
        case 0: return .blocked
        default: return .failed(errno)
        }
    }

    /// Nothing is left to read without a new epoll edge: no record or plaintext is buffered in
    /// OpenSSL and the last socket read came back short (or EAGAIN). Reading again now would only
    /// cost a read(2) returning EAGAIN.
    var socketDrained: Bool { drained.pointee == 1 && SSL_has_pending(ssl) != 1 }

    static func from(_ ssl: OpaquePointer?) -> TLSSession? {
        guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else { return nil }
        return Unmanaged<TLSSession>.fromOpaque(raw).takeUnretainedValue()
    }

    enum Progress {
        case done
        case wantRead
        case wantWrite
        case failed(TLSFailure)
    }

    /// Drives the handshake one step (non-blocking).
    func handshake() -> Progress {
        ERR_clear_error()
        // A server's flight is sent here, after SSL_do_handshake returns, not by OpenSSL's own
        // flush inside it: OpenSSL 3 flushes the flight up to the server Finished and only
        // then logs SERVER_TRAFFIC_SECRET_0 and CLIENT_HANDSHAKE_TRAFFIC_SECRET, so a TUN
        // capture could record the Finished before the secret that follows it, and Wireshark,
        // which derives a direction's keys as it reads its Finished, then decrypted nothing
        // that the server sent (seen 1 run in 8 of PacketViewExecTests on a loaded machine).
        let held = isServer ? gathering : nil
        if let held { tv_wbio_hold(held, 1) }
        let rc = SSL_do_handshake(ssl)
        // What the send did: nil when it sent everything; otherwise blocked or its errno.
        var sendOutcome: FlushOutcome?
        if let held {
            let savedErrno = errno
            tv_wbio_hold(held, 0)
            let outcome = flush()
            if outcome != .drained { sendOutcome = outcome }
            errno = savedErrno
        }
        if case .failed(let code)? = sendOutcome, rc == 1 || SSL_get_error(ssl, rc) == SSL_ERROR_WANT_READ {
            var failure = TLSFailure(peerAlert: nil, systemError: code, eof: false, text: Errno(code).phrase)
            failure.clientCertificate = clientCertificateAsk
            return .failed(failure)
        }
        if rc == 1 {
            // Tickets the socket did not take wait in the BIO, ahead of the first response.
            handshakeDone = true
            flightSent = true
            return .done
        }
        let err = SSL_get_error(ssl, rc)
        switch err {
        case SSL_ERROR_WANT_READ:
            // The rest of the flight goes when the socket is writable (driven again then).
            if sendOutcome == .blocked { return .wantWrite }
            // Everything we had to say is out: for a server, ServerHello..Finished (with our
            // certificate) has been written (a flight that did not fit would be WANT_WRITE).
            if isServer {
                let state = SSL_get_state(ssl)
                if state != TLS_ST_BEFORE && state != TLS_ST_SR_CLNT_HELLO { flightSent = true }
            }
            return .wantRead
        case SSL_ERROR_WANT_WRITE:
            return .wantWrite
        default:
            return .failed(captureFailure(code: err, rc: rc))
        }
    }

    enum IOResult {
        case bytes(Int)
        case wantRead
        case wantWrite
        /// close_notify or a clean EOF (SSL_OP_IGNORE_UNEXPECTED_EOF).
        case closed
        case failed(TLSFailure)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        let requestsBefore = clientCertificateAsk.requests
        let rc = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if rc > 0 {
            if requestsBefore > 0 { clientCertificateAsk.noteServerData(requestsBefore: requestsBefore) }
            return .bytes(Int(rc))
        }
        return classify(rc)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        guard bytes.count > 0 else { return .bytes(0) }
        let rc = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
        if rc > 0 { return .bytes(Int(rc)) }
        return classify(rc)
    }

    /// Sends close_notify (does not wait for the peer's).
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Frees the record buffers when nothing is in them: an idle connection then holds no
    /// 16 KiB read buffer (OpenSSL allocates one before the read that ends in WANT_READ and
    /// keeps it, even with SSL_MODE_RELEASE_BUFFERS).
    func releaseBuffers() {
        _ = SSL_free_buffers(ssl)
    }

    /// Plaintext already decrypted or records already read and not yet returned.
    var hasPending: Bool { SSL_has_pending(ssl) == 1 }

    private func classify(_ rc: Int32) -> IOResult {
        let err = SSL_get_error(ssl, rc)
        switch err {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL where ERR_peek_error() == 0 && (errno == 0 || rc == 0):
            ERR_clear_error()
            return .closed
        default:
            return .failed(captureFailure(code: err, rc: rc))
        }
    }

    /// OpenSSL's failure, with what this leg saw of a request for a client certificate.
    private func captureFailure(code: Int32, rc: Int32) -> TLSFailure {
        var failure = TLSFailure.capture(ssl: ssl, code: code, rc: rc)
        failure.clientCertificate = clientCertificateAsk
        return failure
    }

    // MARK: facts

    var version: TLSProtocolVersion { TLSProtocolVersion(rawValue: UInt16(truncatingIfNeeded: SSL_version(ssl))) }

    var selectedALPN: [UInt8]? {
        var data: UnsafePointer<UInt8>?
        var len: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &len)
        guard let data, len > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(len)))
    }

    var resumed: Bool { SSL_session_reused(ssl) == 1 }
}

/// Why a TLS operation failed: the alert the peer sent (if any), a system error, or OpenSSL's
/// reason, as one phrase.
public struct TLSFailure: Error, Equatable, Sendable {
    /// The fatal alert the peer sent us, when that is what ended it.
    var peerAlert: UInt8?
    /// The socket error (ECONNRESET…), when that is what ended it.
    var systemError: Int32?
    /// The peer closed the connection (EOF) in the middle.
    var eof: Bool
    var text: String
    /// The peers could not agree on a protocol version (a protocol_version alert, or OpenSSL's
    /// own version reasons): the client is best told so with the protocol_version alert.
    var versionMismatch = false
    /// Upstream leg: whether the server had asked for a client certificate, and whether tv
    /// presented one (`ClientCertificateVerdict` reads it).
    var clientCertificate = ClientCertificateAsk()

    static func capture(ssl: OpaquePointer, code: Int32, rc: Int32) -> TLSFailure {
        let savedErrno = errno
        var alert: UInt8?
        var reasons: [String] = []
        var versionMismatch = false
        var unexpectedEOF = false
        while true {
            let e = ERR_get_error()
            if e == 0 { break }
            let reason = tv_err_reason(e)
            if tv_err_lib(e) == ERR_LIB_SSL && reason >= 1000 && reason < 1256 && alert == nil {
                alert = UInt8(reason - 1000)
            }
            if tv_err_lib(e) == ERR_LIB_SSL && versionReasons.contains(reason) { versionMismatch = true }
            if tv_err_lib(e) == ERR_LIB_SSL && reason == SSL_R_UNEXPECTED_EOF_WHILE_READING { unexpectedEOF = true }
            if let p = ERR_reason_error_string(e) { reasons.append(String(cString: p)) } else { reasons.append("error \(reason)") }
        }
        if code == SSL_ERROR_SYSCALL {
            if savedErrno != 0 && reasons.isEmpty {
                return TLSFailure(peerAlert: nil, systemError: savedErrno, eof: false, text: Errno(savedErrno).phrase)
            }
            if reasons.isEmpty {
                return TLSFailure(peerAlert: nil, systemError: nil, eof: true, text: "the peer closed the connection")
            }
        }
        // In a handshake (the only caller that meets it: reads say `.closed`), ZERO_RETURN with
        // nothing queued is the peer's end without a fatal alert: its FIN, which
        // SSL_OP_IGNORE_UNEXPECTED_EOF turns into a close_notify received, or a close_notify. A
        // client that drops tv's handshake so (Node.js without tv's root, after reading tv's
        // certificate) read as "TLS error", so it was neither weighed as pinning nor told the
        // root: a new-user trial.
        if code == SSL_ERROR_ZERO_RETURN && reasons.isEmpty {
            return TLSFailure(peerAlert: nil, systemError: nil, eof: true, text: "the peer closed the connection")
        }
        if let alert {
            return TLSFailure(peerAlert: alert, systemError: nil, eof: false, text: "alert \(TLSAlert.name(alert))",
                              versionMismatch: alert == TLSAlert.protocolVersion)
        }
        return TLSFailure(peerAlert: nil, systemError: nil, eof: unexpectedEOF, text: reasons.isEmpty ? "TLS error" : reasons.joined(separator: "; "),
                          versionMismatch: versionMismatch)
    }

    /// OpenSSL's reasons (library SSL) that say the versions did not match.
    static let versionReasons: Set<Int32> = [
        SSL_R_WRONG_VERSION_NUMBER, SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH, SSL_R_BAD_PROTOCOL_VERSION_NUMBER,
        SSL_R_UNKNOWN_SSL_VERSION, SSL_R_UNSUPPORTED_SSL_VERSION, SSL_R_WRONG_SSL_VERSION, SSL_R_BAD_LEGACY_VERSION,
        SSL_R_BAD_HRR_VERSION, SSL_R_SSL_SESSION_VERSION_MISMATCH, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION,
    ]
}
