import CTVShims
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// One side of a connection: a socket, maybe a TLS session over it, its readiness as the
/// edge-triggered epoll last said, and the bytes waiting to be written to it.
///
/// Bytes waiting (`pending`) exist only while the peer cannot take more: the relay reads into the
/// loop's shared buffer and writes at once; only a remainder is copied here, and the reading side
/// is not read again until it is gone (back-pressure). The buffer is freed when drained, so an
/// idle connection holds none.
final class Leg {
    var fd: Int32
    var tls: TLSSession?
    /// Edge-triggered readiness: true from an event until a read/write says EAGAIN.
    var readable = false
    var writable = false
    /// The peer sent FIN (or epoll said RDHUP/HUP): keep reading until EOF is seen.
    var peerClosing = false
    /// A non-blocking connect is in progress.
    var connecting = false
    /// EOF (or close_notify) was read.
    var readClosed = false {
        didSet { if readClosed && readClosedAtNanos == nil { readClosedAtNanos = EngineClock.monotonicNanos() } }
    }
    /// When `readClosed` first became true (monotonic ns): which side closed first.
    private(set) var readClosedAtNanos: UInt64?
    /// We shut down our sending direction (FIN, after close_notify for TLS).
    var writeClosed = false
    private var pending: UnsafeMutableRawBufferPointer?
    private var pendingStart = 0
    private var pendingEnd = 0

    init(fd: Int32) { self.fd = fd }

    deinit {
        pending?.deallocate()
    }

    var hasPending: Bool { pendingEnd > pendingStart }

    /// splice(2) path for bytes *to* this leg (pass-through only): a pipe and what sits in it.
    private(set) var pipe: (read: Int32, write: Int32)?
    private(set) var pipeBytes = 0
    /// Bytes written to this leg with read/write, before a pipe may be worth it.
    var copiedToward = 0

    /// Waiting bytes of any kind: plaintext not taken by SSL_write, records in the gathering
    /// BIO, bytes in the splice pipe.
    var hasUnsent: Bool { hasPending || pipeBytes > 0 || (tls?.unsent ?? 0) > 0 }

    /// Our FIN waits for the gathering BIO to drain (close_notify first).
    private var finPending = false

    /// Sends the records the gathering BIO holds (TLS legs).
    func flushRecords() -> FlushResult {
        guard let tls, tls.unsent > 0 else { return .drained }
        switch tls.flush() {
        case .drained:
            if finPending {
                finPending = false
                _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            }
            return .drained
        case .blocked:
            writable = false
            return .blocked
        case .failed(let err):
            return .failed(reset: err == ECONNRESET || err == EPIPE, .system(Errno(err)))
        }
    }

    /// Makes the pipe for splicing toward this leg; false when none can be had (fd limit).
    func openPipe() -> Bool {
        if pipe != nil { return true }
        var fds: [Int32] = [-1, -1]
        guard tv_pipe(&fds) == 0 else { return false }
        _ = tv_set_pipe_size(fds[1], 256 * 1024)
        pipe = (fds[0], fds[1])
        return true
    }

    enum SpliceResult {
        case moved(Int)
        case wouldBlock
        case eof
        case failed(reset: Bool, LegFailure)
    }

    /// Moves bytes from `source`'s socket into this leg's pipe.
    func spliceIn(from source: Leg, max: Int) -> SpliceResult {
        guard let pipe else { return .failed(reset: false, .noPipe) }
        let n = tv_splice(source.fd, pipe.write, max)
        if n > 0 { pipeBytes += n; return .moved(n) }
        if n == 0 { return .eof }
        let err = errno
        if err == EAGAIN || err == EINTR { source.readable = false; return .wouldBlock }
        return .failed(reset: err == ECONNRESET, .system(Errno(err)))
    }

    /// Moves what sits in the pipe to this leg's socket.
    func flushPipe() -> FlushResult {
        guard let pipe else { return .drained }
        while pipeBytes > 0 {
            let n = tv_splice(pipe.read, fd, pipeBytes)
            if n > 0 { pipeBytes -= n; continue }
            let err = errno
            if n < 0 && (err == EAGAIN || err == EINTR) { writable = false; return .blocked }
            return .failed(reset: err == ECONNRESET || err == EPIPE, n == 0 ? .pipeClosed : .system(Errno(err)))
        }
        return .drained
    }

    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        /// A TLS read that must write first (a key update answer): wait for writability.
        case blockedOnWrite
        case eof
        case failed(reset: Bool, LegFailure)
    }

    enum WriteResult: Equatable {
        case wrote(Int)
        case failed(reset: Bool, LegFailure)
    }

    /// Reads into `buffer` (plaintext for a TLS leg).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        if let tls {
            switch tls.read(into: buffer) {
            case .bytes(let n):
                // As for a short plain read below: the socket is empty and OpenSSL holds nothing
                // more, so wait for the next edge instead of a read(2) that says EAGAIN.
                if !peerClosing && tls.socketDrained { readable = false }
                return .bytes(n)
            case .wantRead:
                readable = false
                return .wouldBlock
            case .wantWrite:
                writable = false
                return .blockedOnWrite
            case .closed: return .eof
            case .failed(let failure): return .failed(reset: failure.systemError == ECONNRESET, .tls(failure))
            }
        }
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if n > 0 {
            // A short read drained the socket: a later arrival raises a new edge. Unless the peer
            // is closing, when one more read must see the EOF.
            if n < buffer.count && !peerClosing { readable = false }
            return .bytes(n)
        }
        if n == 0 { return .eof }
        let err = errno
        if err == EAGAIN || err == EWOULDBLOCK || err == EINTR {
            readable = false
            return .wouldBlock
        }
        return .failed(reset: err == ECONNRESET, .system(Errno(err)))
    }

    /// Writes as much as the socket takes now; the caller stashes the rest.
    func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
        if let tls {
            // With partial writes on, SSL_write returns after each record: go on until all is
            // written or the socket is full (only then will an EPOLLOUT edge come back).
            var done = 0
            while done < bytes.count {
                switch tls.write(UnsafeRawBufferPointer(rebasing: bytes[done...])) {
                case .bytes(let n): done += n
                case .wantWrite:
                    writable = false
                    return .wrote(done)
                case .wantRead:
                    readable = false
                    return .wrote(done)
                case .closed: return .failed(reset: false, .tlsClosed)
                case .failed(let failure): return .failed(reset: failure.systemError == ECONNRESET || failure.systemError == EPIPE, .tls(failure))
                }
            }
            return .wrote(done)
        }
        let n = tv_send(fd, bytes.baseAddress, bytes.count)
        if n >= 0 { if n < bytes.count { writable = false }; return .wrote(n) }
        let err = errno
        if err == EAGAIN || err == EWOULDBLOCK || err == EINTR {
            writable = false
            return .wrote(0)
        }
        return .failed(reset: err == ECONNRESET || err == EPIPE, .system(Errno(err)))
    }

    /// Keeps bytes the socket did not take, to write before anything else.
    func stash(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if hasPending {
            // Appending behind what is already waiting (only front-end replies do this).
            let waiting = pendingEnd - pendingStart
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: waiting + bytes.count, alignment: 16)
            grown.baseAddress!.copyMemory(from: pending!.baseAddress! + pendingStart, byteCount: waiting)
            (grown.baseAddress! + waiting).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            pending!.deallocate()
            pending = grown
            pendingStart = 0
            pendingEnd = waiting + bytes.count
            return
        }
        if let existing = pending, existing.count >= bytes.count {
            existing.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        } else {
            pending?.deallocate()
            let fresh = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
            fresh.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            pending = fresh
        }
        pendingStart = 0
        pendingEnd = bytes.count
    }

    enum FlushResult {
        case drained
        case blocked
        case failed(reset: Bool, LegFailure)
    }

    /// Writes everything tv holds for this leg: the splice pipe, then `flush`.
    func flushAll() -> FlushResult {
        let piped = flushPipe()
        guard case .drained = piped else { return piped }
        return flush()
    }

    /// Writes what is waiting: records first, then plaintext SSL_write did not take.
    func flush() -> FlushResult {
        let records = flushRecords()
        guard case .drained = records else { return records }
        while hasPending {
            let chunk = UnsafeRawBufferPointer(start: pending!.baseAddress! + pendingStart, count: pendingEnd - pendingStart)
            switch write(chunk) {
            case .wrote(let n):
                if n == 0 { return .blocked }
                pendingStart += n
            case .failed(let reset, let failure):
                return .failed(reset: reset, failure)
            }
        }
        releasePending()
        return flushRecords()
    }

    func releasePending() {
        pending?.deallocate()
        pending = nil
        pendingStart = 0
        pendingEnd = 0
    }

    /// Sends close_notify (TLS) and FIN.
    func shutdownWrite() {
        guard !writeClosed else { return }
        writeClosed = true
        if let tls {
            tls.shutdown()
            if case .blocked = flushRecords() {
                finPending = true
                return
            }
        }
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the socket, with a reset when asked (SO_LINGER 0).
    /// Before closing after an answer the client must read (an HTTP error, a 408): sends the FIN
    /// after it and reads away what the client sent and tv did not read, so that the close is not
    /// a reset that could discard the answer (RFC 9112 §9.6). Bounded: at most 256 KiB is read.
    func shutdownAfterAnswer() {
        guard fd >= 0 else { return }
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        withUnsafeTemporaryAllocation(byteCount: 16_384, alignment: 1) { scratch in
            for _ in 0..<16 where Glibc.read(fd, scratch.baseAddress, scratch.count) > 0 {}
        }
    }

    func close(reset: Bool) {
        tls = nil
        if let pipe {
            Glibc.close(pipe.read)
            Glibc.close(pipe.write)
            self.pipe = nil
            pipeBytes = 0
        }
        guard fd >= 0 else { return }
        if reset { Socket.reset(fd) } else { Glibc.close(fd) }
        fd = -1
        releasePending()
    }
}
