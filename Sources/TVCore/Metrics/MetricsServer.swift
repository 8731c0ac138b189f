import CTVShims
import Foundation
import Proxy

/// The HTTP listener of `tv run --metrics`: one thread, one connection at a time (a scraper asks
/// every few seconds), each read and answered within `MetricsServer.deadlineMillis` and closed;
/// the answer is `MetricsHTTP`'s. Its own small loop rather than the proxy's engine (whose
/// connections are proxied, not served) or libmicrohttpd (a dependency for a few lines).
public final class MetricsServer: Sendable {
    /// The time one connection may take, request and answer (ms).
    public static let deadlineMillis: Int32 = 2_000

    /// Where it listens (the port the kernel chose when asked for 0).
    public let address: Endpoint
    private let listenFD: Int32
    /// Written once to stop the thread (an eventfd).
    private let wakeFD: Int32
    private let done = DispatchSemaphore(value: 0)

    /// Binds and listens now (so a taken port fails the session's start); serves once `start`.
    /// - Throws: `ProxyError` (the port is taken, permission denied, …).
    public init(address: Endpoint) throws {
        let fd: Int32
        do { fd = try ProxyServer.listen(host: address.address, port: address.port) } catch let error as ProxyError { throw error.naming("--metrics") }
        listenFD = fd
        var actual = address
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        if withUnsafeMutablePointer(to: &storage, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0 {
            actual.port = storage.ss_family == sa_family_t(AF_INET6)
                ? withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
                : withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        }
        self.address = actual
        wakeFD = tv_eventfd()
    }

    /// Serves on a thread of its own; `exposition` is called once per scrape.
    public func start(exposition: @escaping @Sendable () -> String) {
        let thread = Thread { [self] in
            serve(exposition)
            done.signal()
        }
        thread.name = "tv-metrics"
        thread.start()
    }

    /// Stops serving and closes the listener (waits for the connection being answered).
    public func stop(started: Bool) {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        if started { done.wait() }
        close(listenFD)
        close(wakeFD)
    }

    private func serve(_ exposition: @Sendable () -> String) {
        while true {
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, -1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 || fds[1].revents != 0 { return }
            let client = tv_accept(listenFD, nil, nil)
            guard client >= 0 else { continue }
            answer(client, exposition)
            close(client)
        }
    }

    /// Reads one request head and sends the answer, within the deadline; gives up silently.
    private func answer(_ fd: Int32, _ exposition: @Sendable () -> String) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(Self.deadlineMillis) * 1_000_000
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var response: [UInt8]?
        while response == nil {
            guard wait(fd, for: POLLIN, until: deadline) else { return }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard n > 0 else { return }
            received += buffer[0..<n]
            response = MetricsHTTP.response(to: received, exposition: exposition)
        }
        var sent = 0
        let bytes = response!
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { tv_send(fd, $0.baseAddress! + sent, bytes.count - sent) }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EINTR || errno == EAGAIN) {
                guard wait(fd, for: POLLOUT, until: deadline) else { return }
                continue
            }
            return
        }
    }

    /// Waits until `fd` is ready for `event` or the deadline passes (false).
    private func wait(_ fd: Int32, for event: Int32, until deadline: UInt64) -> Bool {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return false }
            var p = pollfd(fd: fd, events: Int16(event), revents: 0)
            let n = poll(&p, 1, Int32((deadline - now) / 1_000_000) + 1)
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }
}
