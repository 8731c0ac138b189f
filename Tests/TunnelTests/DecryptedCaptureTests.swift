import Capture
import FlowTerms
import Foundation
import Testing
@testable import Tunnel

/// `DecryptedCapture` as the proxy's loops feed it (`ChunkRecorder`): the file it writes opens in
/// tshark, each stream carries its flow's ends and comment, plain relays (no `inspectedFlowBegan`)
/// are not written, and a flow cut off ends in a RST.
@Suite("DecryptedCapture: the recorder's file, read by tshark")
struct DecryptedCaptureTests {
    @Test("two inspected flows (IPv4 and IPv4 → IPv6) and a plain one: tshark reads the HTTP of the two, commented with their flow ids; 0600")
    func fileReadByTshark() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let dir = NSTemporaryDirectory() + "tv-decrypted-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + DecryptedCapture.fileName(startMicros: 1_764_620_000_000_000)
        #expect(path.hasSuffix("/decrypted-20251201-201320.pcapng"))
        // No file until the first inspected flow: a session that inspects nothing, or whose start
        // failed, leaves none (failed starts left 256-byte files listed as closed: a trial).
        let capture = DecryptedCapture(path: path, lingerMillis: 1)
        #expect(capture.path == path && !FileManager.default.fileExists(atPath: path))
        let idle = DecryptedCapture(path: path)
        idle.stop()
        #expect(!FileManager.default.fileExists(atPath: path) && idle.counters.filesOpened == 0)
        // Never over an existing file: a name taken when the capture is made is said as `-2`.
        let taken = dir + "/" + DecryptedCapture.fileName(startMicros: 1_764_620_001_000_000)
        #expect(FileManager.default.createFile(atPath: taken, contents: Data()))
        let second = DecryptedCapture(path: taken)
        #expect(second.path == dir + "/decrypted-20251201-201321-2.pcapng")
        second.stop()
        #expect(DecryptedCapture.isFileName("decrypted-20251201-201320-2.pcapng") && !DecryptedCapture.isFileName("capture-000001.pcapng"))
        let request = Array("GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)
        let response = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        func feed(_ flow: UInt64, _ bytes: [UInt8], _ direction: Direction, at offset: Int64) {
            bytes.withUnsafeBytes { capture.record(flow: flow, direction: direction, offsetMicros: offset, bytes: $0) }
        }
        let start: Int64 = 1_764_620_000_000_000
        capture.inspectedFlowBegan(flow: 41, client: .init(address: "127.0.0.1", port: 50_000), server: .init(address: "127.0.0.1", port: 8443),
                                   startMicros: start)
        capture.inspectedFlowBegan(flow: 42, client: .init(address: "127.0.0.1", port: 50_001), server: .init(address: "::1", port: 8443),
                                   startMicros: start + 10)
        feed(41, request, .clientToServer, at: 1_000)
        feed(42, Array("GET /two HTTP/1.1\r\nHost: b.test\r\n\r\n".utf8), .clientToServer, at: 1_500)
        feed(43, Array("GET /plain HTTP/1.1\r\n\r\n".utf8), .clientToServer, at: 1_600)  // never began: not written
        feed(41, response, .serverToClient, at: 2_000)
        feed(42, response, .serverToClient, at: 2_500)
        capture.flowEnded(flow: 41, end: .closedByClient)
        capture.flowEnded(flow: 42, end: .reset(from: .serverToClient))
        capture.flush()
        #expect(CaptureFolder.isRecording(path) && capture.counters.recording == "decrypted-20251201-201320.pcapng")
        capture.stop()
        #expect(!CaptureFolder.isRecording(path))
        #expect(capture.counters.bytesDropped == 0 && capture.failure == nil)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let out = try PacketDissectorTests.run(["/usr/bin/tshark", "-r", path, "-o", "tcp.check_checksum:TRUE", "-Y", "http || frame.comment || tcp.flags.reset == 1",
                                                "-T", "fields", "-E", "separator=|", "-e", "frame.comment", "-e", "ipv6.src", "-e", "ip.src",
                                                "-e", "tcp.srcport", "-e", "http.request.uri", "-e", "http.response.code", "-e", "tcp.flags.reset",
                                                "-e", "tcp.checksum.status"])
        let rows = out.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows == [
            ["tv flow 41", "", "127.0.0.1", "50000", "", "", "0", "1"],
            ["tv flow 42", "::ffff:127.0.0.1", "", "50001", "", "", "0", "1"],
            ["", "", "127.0.0.1", "50000", "/one", "", "0", "1"],
            ["", "::ffff:127.0.0.1", "", "50001", "/two", "", "0", "1"],
            ["", "", "127.0.0.1", "8443", "", "204", "0", "1"],
            ["", "::1", "", "8443", "", "204", "0", "1"],
            ["", "::1", "", "8443", "", "", "1", "1"],
        ], "\(out)")
    }
}
