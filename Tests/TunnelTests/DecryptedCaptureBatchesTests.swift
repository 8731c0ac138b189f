import FlowTerms
import Foundation
import Testing
@testable import Tunnel

@Suite("DecryptedCapture: one batch per event")
struct DecryptedCaptureBatchesTests {
    @Test("each event written in its own batch (a flush after each), the response in two chunks that join: tshark reads the HTTP, checksums good")
    func batchPerEvent() throws {
        let dir = NSTemporaryDirectory() + "tv-decrypted-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + DecryptedCapture.fileName(startMicros: 1_764_620_000_000_000)
        let capture = DecryptedCapture(path: path, lingerMillis: 1)
        func feed(_ flow: UInt64, _ text: String, _ direction: Direction, at offset: Int64) {
            Array(text.utf8).withUnsafeBytes { capture.record(flow: flow, direction: direction, offsetMicros: offset, bytes: $0) }
            capture.flush()
        }
        let start: Int64 = 1_764_620_000_000_000
        capture.inspectedFlowBegan(flow: 1, client: .init(address: "127.0.0.1", port: 50_000), server: .init(address: "127.0.0.1", port: 45443), startMicros: start)
        capture.flush()
        feed(1, "GET /index.html HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl\r\nAccept: */*\r\n\r\n", .clientToServer, at: 1_000)
        feed(1, "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n\r\n", .serverToClient, at: 2_000)
        feed(1, "hello from nginx\n", .serverToClient, at: 2_100)
        capture.flowEnded(flow: 1, end: .closedByClient)
        capture.flush()
        capture.inspectedFlowBegan(flow: 2, client: .init(address: "127.0.0.1", port: 50_002), server: .init(address: "127.0.0.1", port: 45443), startMicros: start + 5_000)
        capture.flush()
        feed(2, "GET /two HTTP/1.1\r\nHost: localhost\r\n\r\n", .clientToServer, at: 6_000)
        feed(2, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", .serverToClient, at: 7_000)
        feed(2, "ok\n", .serverToClient, at: 7_100)
        capture.flowEnded(flow: 2, end: .closedByClient)
        capture.stop()
        let out = try PacketDissectorTests.run(["/usr/bin/tshark", "-r", path, "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-Y", "http",
                                                "-T", "fields", "-E", "separator=|", "-e", "http.request.uri", "-e", "http.response.code", "-e", "tcp.checksum.status"])
        #expect(out == "/index.html||1\n|200|1\n/two||1\n|200|1\n", "\(out)")
    }
}
