import Capture
import FlowTerms
import Foundation
import Testing
@testable import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture's file written with O_DIRECT (a disk file system) and buffered (ramfs,
/// which refuses O_DIRECT): tshark reads the same HTTP exchange from both, and the mode is said.
@Suite("DecryptedCapture: O_DIRECT and the buffered fallback, read by tshark", .serialized)
struct DecryptedCaptureWriteModeTests {
    func writeAndRead(folder: String, expecting mode: CaptureWriteMode) throws {
        let path = folder + "/" + DecryptedCapture.fileName(startMicros: 1_764_620_000_000_000)
        let capture = DecryptedCapture(path: path, lingerMillis: 1, directBufferBytes: 16_384)
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let request = Array("GET /big HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)
        let response = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        capture.inspectedFlowBegan(flow: 9, client: .init(address: "127.0.0.1", port: 50_009), server: .init(address: "127.0.0.1", port: 8443),
                                   startMicros: 1_764_620_000_000_000)
        request.withUnsafeBytes { capture.record(flow: 9, direction: .clientToServer, offsetMicros: 1_000, bytes: $0) }
        // In 10 KB chunks, as a relay's reads hand them over.
        var at = 0
        while at < response.count {
            let end = min(at + 10_000, response.count)
            response[at..<end].withUnsafeBytes { capture.record(flow: 9, direction: .serverToClient, offsetMicros: 2_000, bytes: $0) }
            at = end
        }
        capture.flowEnded(flow: 9, end: .closedByClient)
        capture.stop()
        #expect(capture.counters.bytesDropped == 0 && capture.failure == nil)
        #expect(capture.counters.writeMode == mode)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let out = try PacketDissectorTests.run(["/usr/bin/tshark", "-r", path, "-Y", "http", "-T", "fields", "-E", "separator=|",
                                                "-e", "http.request.uri", "-e", "http.response.code", "-e", "http.content_length"])
        #expect(out.split(separator: "\n").map(String.init) == ["/big||", "|200|300000"], "\(out)")
    }

    @Test("flush while the capture runs writes the tail held in the O_DIRECT buffer: tshark reads the request before stop")
    func flushWritesHeldTail() throws {
        let folder = "/var/tmp/tv-decrypted-flush-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/" + DecryptedCapture.fileName(startMicros: 1_764_620_000_000_000)
        // The tail timer never fires in the test: only flush can write the packets (under one block).
        let capture = DecryptedCapture(path: path, lingerMillis: 1, directBufferBytes: 16_384, tailInterval: 3_600)
        defer { capture.stop() }
        capture.inspectedFlowBegan(flow: 5, client: .init(address: "127.0.0.1", port: 50_005), server: .init(address: "127.0.0.1", port: 8443),
                                   startMicros: 1_764_620_000_000_000)
        Array("GET /held HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8).withUnsafeBytes {
            capture.record(flow: 5, direction: .clientToServer, offsetMicros: 1_000, bytes: $0)
        }
        capture.flush()
        try #require(capture.writeMode == .direct, "needs a file system that takes O_DIRECT under /var/tmp")
        #expect(capture.failure == nil)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        // SYN, SYN-ACK, ACK, the request and the server's ACK of it: five packets. Without the
        // tail the file would end at its last whole block, short of the request.
        let out = try PacketDissectorTests.run(["/usr/bin/tshark", "-r", path, "-T", "fields", "-e", "frame.number", "-e", "http.request.uri"])
        #expect(out.split(separator: "\n").map(String.init) == ["1\t", "2\t", "3\t", "4\t/held", "5\t"], "\(out)")
    }

    @Test("O_DIRECT on a disk file system: tshark reads the request and the 300 KB response; `direct` said")
    func direct() throws {
        let folder = "/var/tmp/tv-decrypted-direct-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try writeAndRead(folder: folder, expecting: .direct)
    }

    @Test("ramfs refuses O_DIRECT: the same file, buffered, and `buffered` said", .enabled(if: getuid() == 0, "mounts a ramfs: needs root"))
    func fallback() throws {
        let folder = NSTemporaryDirectory() + "tv-decrypted-ramfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let mounted = Child.run("/bin/mount", ["-t", "ramfs", "none", folder], environment: ProcessInfo.processInfo.environment, timeout: 30)
        try #require(mounted.status == 0, "\(String(decoding: mounted.stderr, as: UTF8.self))")
        defer { _ = Child.run("/bin/umount", [folder], environment: ProcessInfo.processInfo.environment, timeout: 30) }
        try writeAndRead(folder: folder, expecting: .buffered)
    }
}
