import CTVShims
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TLS 1.2 server on 127.0.0.1 that reads a request head, then renegotiates to ask for a
/// client certificate (HelloRequest, then a handshake with a CertificateRequest, RFC 5246
/// §7.4.1.1, §7.4.4; secure renegotiation, RFC 5746) and answers `client certificate: SUBJECT`.
/// A client that sends none gets OpenSSL's handshake_failure alert (SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
///
/// `openssl s_server` cannot do this since OpenSSL 3.0: its `/renegcert` page and `R` command
/// set SSL_VERIFY_CLIENT_ONCE, which makes OpenSSL skip the CertificateRequest in a renegotiation.
final class RenegotiatingServer: Sendable {
    let port: UInt16
    private let listener: Int32

    init(cert: String, key: String) throws {
        // tv's own shim, not Glibc's SOCK_STREAM: with the OpenSSL headers imported here, Glibc's
        // constant became invisible to the other files compiled in the same batch (Shell.swift).
        let fd = tv_socket_stream(AF_INET)
        if fd >= 0 { _ = fcntl(fd, F_SETFL, 0) }  // a blocking listener: the thread waits in accept
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { close(fd) }
            throw TestError("the renegotiating server could not listen: \(String(cString: strerror(errno)))")
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { Self.serve(fd, cert: cert, key: key) }
    }

    /// Stops accepting (the thread ends at its next accept).
    func stop() { _ = shutdown(listener, Int32(SHUT_RDWR)) }

    deinit {
        stop()
        close(listener)
    }

    private static func serve(_ fd: Int32, cert: String, key: String) {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { return }
        defer { SSL_CTX_free(ctx) }
        _ = tv_ssl_ctx_set_max_proto(ctx, TLS1_2_VERSION)
        // A renegotiation must be a full handshake (a resumed one asks for no certificate):
        // SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION, SSL_OP_BIT(16) in <openssl/ssl.h>.
        _ = SSL_CTX_set_options(ctx, UInt64(1) << 16)
        // Verifying clients needs a session id context (else OpenSSL fails the handshake).
        let context = Array("tv-renegotiating-server".utf8)
        _ = SSL_CTX_set_session_id_context(ctx, context, UInt32(context.count))
        guard SSL_CTX_use_certificate_chain_file(ctx, cert) == 1, SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 else { return }
        while true {
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            receiveTimeout(connection, seconds: 5)
            answer(connection, ctx)
            close(connection)
        }
    }

    private static func receiveTimeout(_ fd: Int32, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func answer(_ connection: Int32, _ ctx: OpaquePointer) {
        guard let ssl = SSL_new(ctx) else { return }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, connection)
        guard SSL_accept(ssl) == 1 else { return }
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            let n = SSL_read(ssl, &buffer, Int32(buffer.count))
            guard n > 0 else { return }
            head += buffer[0..<Int(n)]
        }
        SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, { _, _ in 1 })
        guard SSL_renegotiate(ssl) == 1, SSL_do_handshake(ssl) == 1 else { return }
        // The client's new handshake is processed by the next reads; no data follows it, so a
        // short timeout ends the read once it is done. A refused renegotiation or a missing
        // certificate fails the read (and OpenSSL sends the alert).
        receiveTimeout(connection, seconds: 1)
        while SSL_renegotiate_pending(ssl) == 1 {
            let n = SSL_read(ssl, &buffer, Int32(buffer.count))
            if n <= 0 && SSL_get_error(ssl, n) == SSL_ERROR_SSL { return }
            if n <= 0 { break }
        }
        var subject = "none"
        if let peer = SSL_get0_peer_certificate(ssl) {
            var name = [CChar](repeating: 0, count: 256)
            if let text = X509_NAME_oneline(X509_get_subject_name(peer), &name, Int32(name.count)) { subject = String(cString: text) }
        }
        let body = "client certificate: \(subject)\n"
        let response = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        _ = SSL_write(ssl, response, Int32(response.count))
        _ = SSL_shutdown(ssl)
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
