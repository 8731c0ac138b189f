@testable import Proxy
import Testing
import FlowTerms

/// An open flow's totals told while bytes move (`FlowProgressReport`): at most every 2 s, never
/// while nothing moves; through both machines, with the exact commands.
@Suite("FlowProgressReport")
struct FlowProgressReportTests {
    @Test("due 2 s after the start, then 2 s after each report; never earlier, never for a clock that went back")
    func due() {
        var p = FlowProgressReport(startMicros: 1_000_000)
        let answers = [2_999_999, 3_000_000, 4_500_000, 500_000, 5_000_001].map { p.isDue(atMicros: $0) }
        #expect(answers == [false, true, false, false, true])
        #expect(p.lastMicros == 5_000_001)
    }

    @Test("bytes moved after a report and then quiet are told once by trailing, and never when nothing moved since")
    func trailing() {
        var p = FlowProgressReport(startMicros: 1_000_000)
        let none = p.trailing(atMicros: 9_000_000)            // nothing moved yet
        let first = p.isDue(atMicros: 3_000_000)
        #expect(!none && first && !p.unreported)
        let early = p.isDue(atMicros: 3_500_000)
        #expect(!early && p.unreported)
        let tail = p.trailing(atMicros: 5_500_000)
        #expect(tail && !p.unreported && p.lastMicros == 5_500_000)
        let again = p.trailing(atMicros: 8_000_000)
        #expect(!again)
    }

    @Test("ConnectionMachine: the tail of a burst that stopped before its report was due is told on .progressQuiet, once")
    func connectionMachineTrailing() throws {
        typealias T = ConnectionMachineTests
        var m = T.machine()
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(T.upstreamDone))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        _ = T.moved(&m, 500, .clientToServer, at: 2_000)
        #expect(T.moved(&m, 16_384, .serverToClient, at: 2_001_000) == .updateFlow)
        #expect(T.moved(&m, 5_000_000, .serverToClient, at: 2_100_000) == nil)
        #expect(m.hasUnreportedProgress)
        #expect(m.handle(.progressQuiet(atMicros: 4_100_000)) == [.updateFlow])
        #expect(m.facts.bytesFromServer == 5_016_384 && !m.hasUnreportedProgress)
        #expect(m.handle(.progressQuiet(atMicros: 6_100_000)) == [])
    }

    @Test("ConnectionMachine: an inspected relay's bursts say .updateFlow once 2 s have passed since the flow began, then every 2 s; spliced bytes too")
    func connectionMachine() throws {
        typealias T = ConnectionMachineTests
        var m = T.machine()   // the flow began at 1,000 µs
        T.connected(&m)
        _ = T.bytes(&m, ProxyFixtures.clientHelloSNIAndALPN)
        _ = m.handle(.upstreamHandshakeDone(T.upstreamDone))
        _ = m.handle(.clientHandshakeDone(.init(version: .tls13, resumed: false)))
        #expect(T.moved(&m, 500, .clientToServer, at: 2_000) == .clientAccepted(T.fixtureKey()))
        #expect(T.moved(&m, 16_384, .serverToClient, at: 1_500_000) == nil)
        #expect(T.moved(&m, 16_384, .serverToClient, at: 2_001_000) == .updateFlow)
        #expect(m.facts.bytesFromServer == 32_768 && m.facts.lastActivityMicros == 2_001_000)
        #expect(T.moved(&m, 16_384, .serverToClient, at: 4_000_999) == nil)
        #expect(T.moved(&m, 100, .clientToServer, at: 4_001_000) == .updateFlow)
        let spliced = [m.spliced(1_000, .serverToClient, atMicros: 5_000_000), m.spliced(1_000, .serverToClient, atMicros: 6_001_000)]
        #expect(spliced == [nil, .updateFlow])
        #expect(m.facts.bytesFromServer == 51_152 && m.facts.bytesFromClient == 600)
    }

    @Test("PlainHTTPMachine: a long response's chunks add .updateFlow with the flow's totals once 2 s have passed since its leg began, then every 2 s")
    func plainHTTPMachine() {
        typealias T = PlainHTTPMachineTests
        var m = T.started()
        T.requested(&m)   // the leg began at 3,000 µs (`at: 2`: µs = seconds × 1000 + 1000)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 3000000\r\n\r\n"
        #expect(T.server(&m, head, at: 1_000) == [.tallyFromServer(head.utf8.count, record: nil), .writeClient(0..<head.utf8.count, record: nil),
                                                  .armTimer(at: 1_002_000_000_000)])
        let chunk = String(repeating: "a", count: 1_000)
        // 2,002,000 µs: 1,999,000 after the leg began, not yet.
        #expect(T.server(&m, chunk, at: 2_001) == [.tallyFromServer(1_000, record: nil), .writeClient(0..<1_000, record: nil)])
        var told = T.flow(server: Endpoint(address: "127.0.0.1", port: 8080))
        told.bytesFromClient = UInt64(T.forwarded.count)
        told.bytesFromServer = UInt64(head.utf8.count + 2_000)
        told.lastActivityMicros = 2_003_000
        #expect(T.server(&m, chunk, at: 2_002) == [.tallyFromServer(1_000, record: nil), .writeClient(0..<1_000, record: nil), .updateFlow(told)])
        #expect(T.server(&m, chunk, at: 4_001) == [.tallyFromServer(1_000, record: nil), .writeClient(0..<1_000, record: nil), .armTimer(at: 4_003_000_000_000)])
    }

    @Test("PlainHTTPMachine: bytes after the last report are told once the flow has been quiet 2 s (the timer the first of them armed), once")
    func plainHTTPMachineTrailing() {
        typealias T = PlainHTTPMachineTests
        var m = T.started()
        T.requested(&m)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 3000000\r\n\r\n"
        _ = T.server(&m, head, at: 2_002)   // past 2 s: told at once, nothing waiting
        #expect(T.server(&m, String(repeating: "a", count: 1_000), at: 2_003) == [.tallyFromServer(1_000, record: nil), .writeClient(0..<1_000, record: nil),
                                                                                .armTimer(at: 2_005_000_000_000)])
        // More bytes at 2,004 s: the flow is quiet only from then.
        _ = T.server(&m, String(repeating: "a", count: 500), at: 2_004)
        #expect(T.run(&m, .timer, at: 2_005) == [.armTimer(at: 2_006_000_000_000)])
        var told = T.flow(server: Endpoint(address: "127.0.0.1", port: 8080))
        told.bytesFromClient = UInt64(T.forwarded.count)
        told.bytesFromServer = UInt64(head.utf8.count + 1_500)
        told.lastActivityMicros = 2_005_000
        #expect(T.run(&m, .timer, at: 2_006) == [.updateFlow(told), .armTimer(at: 2_304_000_000_000)])
        #expect(T.run(&m, .timer, at: 2_007) == [.armTimer(at: 2_304_000_000_000)])
    }
}
