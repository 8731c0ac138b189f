import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// Before the data phase: the client's unread bytes (peeked, then consumed as the machine
/// says), the proxy's own replies, resolving and connecting to the server.
extension ProxyConnection {
    func peekClient() {
        guard !released else { return }
        let n = tv_peek(client.fd, buffer.baseAddress, buffer.count)
        if n > 0 {
            feed(.clientBytes(UnsafeRawBufferPointer(rebasing: buffer[0..<n])))
            if client.peerClosing && !released { feed(.clientFinished) }
            return
        }
        if n == 0 {
            client.readClosed = true
            if machine.phase.io == .clientHandshake { return driveClientHandshake() }
            feed(.clientGone(reset: false))
            return
        }
        let err = errno
        if err == EAGAIN || err == EWOULDBLOCK || err == EINTR { return }
        feed(.clientGone(reset: true))
    }

    func consumeClient(_ count: Int) {
        var left = count
        while left > 0 {
            let n = Glibc.read(client.fd, buffer.baseAddress, min(left, buffer.count))
            if n <= 0 { break }
            left -= n
        }
    }

    func sendClient(_ bytes: [UInt8]) {
        // tv's 502 for an upstream failure: the request it answers gets its row (`.answered`).
        if machine.answering != nil, exchanges != nil { bytes.withUnsafeBytes { readPlainAnswer($0) } }
        bytes.withUnsafeBytes { raw in
            if client.hasPending { client.stash(raw); return }
            switch client.write(raw) {
            case .wrote(let n): if n < raw.count { client.stash(UnsafeRawBufferPointer(rebasing: raw[n...])) }
            case .failed: break
            }
        }
        // Over tv's TLS leg (a 502 in the data phase): the records leave now.
        if client.tls != nil { _ = client.flushRecords() }
    }

    /// tv's own bytes to the server (an HTTP/2 GOAWAY, `.sendServer`), after what it holds for it.
    func sendServer(_ bytes: [UInt8]) {
        guard let upstream, upstream.fd >= 0 else { return }
        bytes.withUnsafeBytes { raw in
            if upstream.hasPending { upstream.stash(raw); return }
            switch upstream.write(raw) {
            case .wrote(let n): if n < raw.count { upstream.stash(UnsafeRawBufferPointer(rebasing: raw[n...])) }
            case .failed: break
            }
        }
        if upstream.tls != nil { _ = upstream.flushRecords() }
    }

    /// Answering an upstream failure over tv's TLS leg: reads the client's plaintext and hands
    /// it to the machine (`.clientRequestBytes`) until it answers (`.readRequestRow` and tv's 502,
    /// or `.closeClientTLS`) or the client ends. Called at once (the request may have come with
    /// the client's Finished) and on each client event after.
    func readClientRequest() {
        while !released, machine.phase.io == .answer {
            switch client.read(into: buffer) {
            case .bytes(let n):
                guard n > 0 else { return }
                feed(.clientRequestBytes(UnsafeRawBufferPointer(rebasing: buffer[..<n])))
            case .wouldBlock, .blockedOnWrite: return
            case .eof: return feed(.clientGone(reset: false))
            case .failed(let reset, _): return feed(.clientGone(reset: reset))
            }
        }
    }

    /// The client's request, begun in `bytes`, read into a row as the relay's are, which tv's
    /// answer (`sendClient`) then ends: curl's, Python's and Node's 502s made no row (a trial).
    func readRequestRow(_ bytes: [UInt8], http2: Bool) {
        guard !exchangesStopped, startReadingExchanges(flow: machine.facts.id, scheme: "https", http2: http2) else { return }
        bytes.withUnsafeBytes { feedExchanges($0, .clientToServer, at: EngineClock.wallMicros()) }
    }

    func flushClientReplies() {
        guard !released, client.hasPending, client.writable else { return }
        _ = client.flush()
    }

    /// Drains what the client sent (its ClientHello), so that closing sends a FIN after our
    /// alert, not a reset that could discard it; sends the alert; closes.
    func refuseClient(alert: UInt8) {
        while true {
            let n = Glibc.read(client.fd, buffer.baseAddress, buffer.count)
            if n <= 0 { break }
        }
        let record = TLSAlert.plaintextRecord(alert)
        _ = record.withUnsafeBytes { tv_send(client.fd, $0.baseAddress, $0.count) }
        _ = Glibc.shutdown(client.fd, Int32(SHUT_WR))
        finish(reset: false)
    }

    func resolve(host: String, port: UInt16) {
        let inbox = loop.inbox
        let token = self.token
        shared.resolver.resolve(host: host, port: port) { result in
            inbox.post { loop in
                guard let connection = loop.handler(for: token) as? ProxyConnection else { return }
                connection.resolved(result)
            }
        }
    }

    private func resolved(_ result: Result<[SocketAddress], Resolver.ResolveFailure>) {
        guard !released else { return }
        switch result {
        case .success(let addresses): feed(.resolved(addresses))
        case .failure(let failure): feed(.resolveFailed(failure.message))
        }
    }

    func connect(to address: SocketAddress) {
        if let old = upstream {
            old.close(reset: false)
            upstream = nil
        }
        let attempt: Result<(fd: Int32, done: Bool), Errno>
        if let fd = preconnectedUpstream {
            // Connect-first front-ends (TUN) hand in the socket they already connected.
            preconnectedUpstream = nil
            attempt = .success((fd, true))
        } else {
            attempt = Socket.connect(to: address, mark: shared.configuration.upstreamMark)
        }
        switch attempt {
        case .success(let (fd, done)):
            let leg = Leg(fd: fd)
            leg.connecting = !done
            upstream = leg
            loop.watch(fd, token: token, side: 1, events: tv_EPOLLIN | tv_EPOLLOUT | tv_EPOLLRDHUP)
            if done { enqueue(.connected(address)) }
            pendingConnect = address
        case .failure(let err):
            enqueue(.connectFailed(err))
        }
    }

    /// The server leg before the data phase: the connect's outcome, or its first bytes.
    func upstreamControlEvent(_ events: UInt32) {
        guard let up = upstream else { return }
        if up.connecting {
            guard events & (tv_EPOLLOUT | tv_EPOLLERR | tv_EPOLLHUP) != 0 else { return }
            let err = tv_socket_error(up.fd)
            up.connecting = false
            if err == 0, let address = pendingConnect {
                // Whatever came with the connect event is still unread (level of the socket).
                up.readable = events & tv_EPOLLIN != 0
                up.peerClosing = events & tv_EPOLLRDHUP != 0
                feed(.connected(address))
            } else {
                up.close(reset: false)
                upstream = nil
                feed(.connectFailed(Errno(err == 0 ? ECONNREFUSED : err)))
            }
            return
        }
        if up.readable || up.peerClosing { feed(upstreamFirstEvent(up)) }
    }

    /// What the server did first: spoke, or closed without a byte (peeked: an EOF with nothing
    /// before it is not a plain-text relay: a trial's empty tunnel read "not encrypted").
    func upstreamFirstEvent(_ up: Leg) -> ConnectionMachine.Event {
        var byte: UInt8 = 0
        return tv_peek(up.fd, &byte, 1) == 0 ? .upstreamClosedFirst : .upstreamSpokeFirst
    }
}
