import CTVShims
@testable import Proxy
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Listener")
struct ListenerTests {
    @Test("accepts every waiting client across bursts, each with its peer address, in arrival order; stopListening frees its token")
    func acceptsInBursts() throws {
        let loop = try EpollLoop()
        let fd = try ProxyServer.listen(host: "127.0.0.1", port: 0)
        defer { close(fd) }
        let port = try #require(Socket.localAddress(fd)).port
        var clients: [Int32] = []
        defer { for c in clients { close(c) } }
        for _ in 0..<3 {
            guard case .success(let (client, _)) = Socket.connect(to: SocketAddress(numericHost: "127.0.0.1", port: port)!) else {
                Issue.record("connect failed")
                return
            }
            clients.append(client)
        }
        let expected = clients.map { Socket.localAddress($0)! }
        var accepted: [SocketAddress] = []
        var failures: [Int32] = []
        let listener = Listener(loop: loop, fd: fd, exclusive: false, burst: 2, accepted: { client, peer in
            accepted.append(SocketAddress(storage: peer)!)
            close(client)
            if accepted.count == 3 { loop.stop() }
        }, acceptFailed: { failures.append($0) })
        listener.start()
        #expect(loop.liveHandlers == 1)
        let watchdog = LoopWatchdog(loop)
        #expect(loop.run() == nil)
        #expect(!watchdog.fired)
        #expect(accepted == expected)
        #expect(failures == [])
        listener.stopListening()
        listener.stopListening()
        #expect(loop.liveHandlers == 1)  // the watchdog
    }
}
