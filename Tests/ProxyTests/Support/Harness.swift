import Foundation
import Proxy

/// A running ProxyServer on 127.0.0.1:<free port> with a collecting sink.
final class Harness: @unchecked Sendable {
    // `@unchecked Sendable`: fields set in init, never reassigned; the server and sink are Sendable.
    let server: ProxyServer
    let sink = CollectingSink()
    let pinning = InMemoryPinningMemory()
    let address: Endpoint
    let pki: TestPKI

    init(mode: ProxyMode = .regular, pki: TestPKI = .shared, _ configure: (inout ProxyConfiguration) -> Void = { _ in }) throws {
        self.pki = pki
        var configuration = ProxyConfiguration()
        configuration.mode = mode
        configuration.listenHost = "127.0.0.1"
        configuration.listenPort = 0
        configuration.workers = 2
        configuration.authority = pki.authority
        configuration.upstreamCAFile = pki.upstreamCA
        configuration.flowSink = sink
        configuration.pinningMemory = pinning
        configure(&configuration)
        server = ProxyServer(configuration: configuration)
        address = try server.start()
    }

    var port: UInt16 { address.port }
    var proxyURL: String { "http://127.0.0.1:\(address.port)" }

    /// Waits until no connection is open (flows are reported just after clients see their end).
    func waitIdle(timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if server.counters.openConnections == 0 { return true }
            usleep(10_000)
        }
        return server.counters.openConnections == 0
    }

    deinit { server.stop() }
}
