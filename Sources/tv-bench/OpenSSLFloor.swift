import COpenSSL
import CTVShims
import Foundation
import LocalCA
#if canImport(Glibc)
import Glibc
#endif

/// The heap OpenSSL 3 itself keeps for one idle spliced connection: the two `SSL` objects tv
/// holds (a server-side one for the client leg, a client-side one for the upstream leg) after
/// their TLS 1.3 handshakes (the upstream one resumed), a ticket each way and one small exchange, with their record
/// buffers freed (`SSL_free_buffers`, as tv's idle timer does) and socket BIOs on real sockets,
/// as in tv. Contexts are set up as tv's are (`Sources/Proxy/TLS/TLSContexts.swift`: release
/// buffers, read-ahead, one ticket per handshake, the P-256 leaf key on the server context).
///
/// The peers (the real client and the real server in tv's case) are freed after the exchange,
/// so what stays is tv's side only. Measured with glibc's `tv_heap_in_use()` (bytes in
/// allocated chunks, headers included) before and after `connections` such pairs; returns
/// bytes per connection. No Swift object of tv's is involved: this is the floor under tv's
/// "memory per idle connection" row while both legs keep an `SSL`.
/// - Throws: `FloorError` when OpenSSL refuses a step.
func openSSLIdleFloor(leaf: Leaf, connections: Int) throws -> Double {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

    func context(server: Bool) throws -> OpaquePointer {
        guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else { throw FloorError("SSL_CTX_new") }
        _ = tv_ssl_ctx_set_min_proto(ctx, tv_TLS1_2_VERSION)
        SSL_CTX_set_options(ctx, tv_SSL_OP_NO_COMPRESSION | tv_SSL_OP_NO_RENEGOTIATION | tv_SSL_OP_IGNORE_UNEXPECTED_EOF)
        _ = tv_ssl_ctx_set_mode(ctx, tv_SSL_MODE_RELEASE_BUFFERS | tv_SSL_MODE_ENABLE_PARTIAL_WRITE | tv_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        tv_ssl_ctx_set_read_ahead(ctx, 1)
        SSL_CTX_set_default_read_buffer_len(ctx, 4 * (16_384 + 256) + 5)
        if server {
            let sid: [UInt8] = Array("tv-floor".utf8)
            _ = SSL_CTX_set_session_id_context(ctx, sid, UInt32(sid.count))
            _ = tv_ssl_ctx_set_session_cache_mode(ctx, tv_SSL_SESS_CACHE_SERVER)
            _ = SSL_CTX_set_num_tickets(ctx, 1)
            guard SSL_CTX_use_certificate(ctx, leaf.certificate.handle) == 1,
                  SSL_CTX_use_PrivateKey(ctx, leaf.key.handle) == 1 else { throw FloorError("loading the leaf") }
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
            _ = tv_ssl_ctx_set_session_cache_mode(ctx, tv_SSL_SESS_CACHE_CLIENT | tv_SSL_SESS_CACHE_NO_INTERNAL_STORE)
            SSL_CTX_sess_set_new_cb(ctx, floorNewSession)
        }
        return ctx
    }
    // tv's two contexts, and the peers' (the real client's and the real server's).
    let tvServer = try context(server: true), tvClient = try context(server: false)
    let peerServer = try context(server: true), peerClient = try context(server: false)
    defer { for ctx in [tvServer, tvClient, peerServer, peerClient] { SSL_CTX_free(ctx) } }

    /// A connected, non-blocking socket pair with an SSL on each end (socket BIOs).
    func pair(_ a: OpaquePointer, _ b: OpaquePointer) throws -> (OpaquePointer, OpaquePointer, [Int32]) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else { throw FloorError("socketpair") }
        guard let x = SSL_new(a), let y = SSL_new(b) else { throw FloorError("SSL_new") }
        SSL_set_fd(x, fds[0])
        SSL_set_fd(y, fds[1])
        SSL_set_accept_state(x)
        SSL_set_connect_state(y)
        return (x, y, fds)
    }
    /// Drives both ends until each handshake is done, both tickets arrived and `bytes` went
    /// each way.
    func converse(_ server: OpaquePointer, _ client: OpaquePointer) throws {
        var doneS = false, doneC = false
        for _ in 0..<100 where !(doneS && doneC) {
            if !doneS { doneS = SSL_do_handshake(server) == 1 }
            if !doneC { doneC = SSL_do_handshake(client) == 1 }
        }
        guard doneS && doneC else { throw FloorError("the handshake did not finish") }
        let request = [UInt8](repeating: 0x47, count: 100), response = [UInt8](repeating: 0x48, count: 1_024)
        var buffer = [UInt8](repeating: 0, count: 4_096)
        guard SSL_write(client, request, Int32(request.count)) == Int32(request.count) else { throw FloorError("SSL_write") }
        var got = 0
        for _ in 0..<100 where got < request.count { got += max(0, Int(SSL_read(server, &buffer, 4_096))) }
        guard SSL_write(server, response, Int32(response.count)) == Int32(response.count) else { throw FloorError("SSL_write") }
        got = 0
        // The client reads the ticket (post-handshake) and the response.
        for _ in 0..<100 where got < response.count { got += max(0, Int(SSL_read(client, &buffer, 4_096))) }
        guard got == response.count else { throw FloorError("the exchange did not complete") }
        // One more read on each side sees EAGAIN, as an idle leg does.
        _ = SSL_read(server, &buffer, 4_096)
        _ = SSL_read(client, &buffer, 4_096)
        ERR_clear_error()
    }

    // Warm up (lazy provider and algorithm caches are per process, not per connection).
    var kept: [(OpaquePointer, Int32)] = []
    var resumed = 0
    // The upstream leg resumes the previous connection's session, as tv's upstream session
    // cache makes it do (the server's certificate is then shared, not parsed again).
    let upstreamSession = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
    upstreamSession.initialize(to: nil)
    defer {
        if let session = upstreamSession.pointee { SSL_SESSION_free(session) }
        upstreamSession.deallocate()
    }
    func one() throws {
        let (clientLeg, realClient, fdsA) = try pair(tvServer, peerClient)
        try converse(clientLeg, realClient)
        let (realServer, upstreamLeg, fdsB) = try pair(peerServer, tvClient)
        if let session = upstreamSession.pointee { _ = SSL_set_session(upstreamLeg, session) }
        _ = SSL_set_ex_data(upstreamLeg, 0, upstreamSession)
        _ = tv_ssl_set_sni(upstreamLeg, "floor.bench.test")
        try converse(realServer, upstreamLeg)
        if SSL_session_reused(upstreamLeg) == 1 { resumed += 1 }
        _ = SSL_free_buffers(clientLeg)
        _ = SSL_free_buffers(upstreamLeg)
        SSL_free(realClient); close(fdsA[1])
        SSL_free(realServer); close(fdsB[0])
        kept.append((clientLeg, fdsA[0]))
        kept.append((upstreamLeg, fdsB[1]))
    }
    for _ in 0..<20 { try one() }
    for (ssl, fd) in kept { SSL_free(ssl); close(fd) }
    kept.removeAll(keepingCapacity: true)
    kept.reserveCapacity(2 * connections)

    resumed = 0
    let before = tv_heap_in_use()
    for _ in 0..<connections { try one() }
    let after = tv_heap_in_use()
    guard resumed * 10 >= connections * 9 else { throw FloorError("resuming the upstream session (\(resumed) of \(connections))") }
    for (ssl, fd) in kept { SSL_free(ssl); close(fd) }
    return Double(Int(after) - Int(before)) / Double(connections)
}

struct FloorError: Error, CustomStringConvertible {
    let description: String
    init(_ step: String) { description = "OpenSSL floor: \(step) failed" }
}

/// The upstream context's new-session callback: keeps the newest ticket-bearing session in the
/// slot the SSL's ex-data 0 points at (an `UnsafeMutablePointer<OpaquePointer?>`), as tv's
/// upstream session cache keeps one per destination (OpenSSL uses a TLS 1.3 ticket once).
private let floorNewSession: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
    guard let ssl, let session, let slot = SSL_get_ex_data(ssl, 0) else { return 0 }
    let box = slot.assumingMemoryBound(to: OpaquePointer?.self)
    if let old = box.pointee { SSL_SESSION_free(old) }
    box.pointee = session
    return 1
}
