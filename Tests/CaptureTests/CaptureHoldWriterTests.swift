import Capture
import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The capture writer holding a connection's packets until its client secret is in the file
/// (`CaptureHoldPolicy`), read back block by block.
@Suite("The capture writer holds a TLS flow's packets behind its client secret", .serialized)
struct CaptureHoldWriterTests {
    let hex = (0..<32).map { String(format: "%02x", $0) }.joined()

    /// Waits (bounded, 20 s) until `condition` holds; the test's expectations follow it.
    func wait(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(20)
        while !condition(), Date() < deadline { usleep(2_000) }
    }

    /// The file's blocks: (type, the EPB's first captured byte offset into the block is 28).
    func blocks(_ path: String) throws -> [(type: UInt32, bytes: [UInt8])] {
        let file = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        var out: [(UInt32, [UInt8])] = []
        var at = 0
        func le32(_ o: Int) -> Int { (0..<4).reduce(0) { $0 | Int(file[o + $1]) << (8 * $1) } }
        while at + 12 <= file.count {
            let total = le32(at + 4)
            out.append((UInt32(le32(at)), Array(file[at..<at + total])))
            at += total
        }
        return out
    }

    func record(_ writer: CaptureWriter, _ packet: [UInt8], flow: UInt64, _ direction: Direction = .clientToServer) {
        packet.withUnsafeBytes { writer.record(flow: flow, direction: direction, timeMicros: EngineClock.wallMicros(), packet: $0) }
    }

    /// The EPBs' payload tags (the byte after the TCP header), DSBs as "S", in file order.
    func order(_ path: String) throws -> [String] {
        try blocks(path).compactMap { block in
            switch block.type {
            case PcapngBlocks.decryptionSecretsType: "S"
            case PcapngBlocks.enhancedPacketType: String(block.bytes[28 + 40])
            default: nil
            }
        }
    }

    @Test("ClientHello written, then the flow's later packets held (counted in packetsHeld), other flows written; the secret goes in front of them, rows numbered in file order")
    func secretGoesFirst() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.holdLimits.maximumAgeMicros = 600_000_000
        let writer = try CaptureWriter(configuration: configuration)
        record(writer, tcpPacket(clientHelloStart()), flow: 7)
        wait { writer.counters.packetsWritten == 1 }
        record(writer, tcpPacket([20, 3, 3, 0, 1, 1]), flow: 7, .serverToClient)
        record(writer, tcpPacket([23, 3, 3, 0, 1, 2]), flow: 7)
        record(writer, tcpPacket([99]), flow: 8)
        wait { writer.counters.packetsHeld == 2 && writer.counters.packetsWritten == 2 }
        #expect(writer.counters.packetsHeld == 2)
        #expect(writer.counters.packetsWritten == 2)
        #expect(writer.appendSecrets(Array("CLIENT_TRAFFIC_SECRET_0 \(hex) 00\n".utf8)))
        record(writer, tcpPacket([23, 3, 3, 0, 1, 3]), flow: 7)
        writer.stop()
        #expect(writer.counters.packetsHeld == 0)
        #expect(try order(scratch.folder.filePath(1)) == ["22", "99", "S", "20", "23", "23"])
        let rows = try scratch.catalog().packets(flow: 7)
        #expect(rows.map(\.n) == [1, 2, 3, 4])
        #expect(rows.map(\.fileOffset) == rows.map(\.fileOffset).sorted())
        let file = try #require(FileManager.default.contents(atPath: scratch.folder.filePath(1))).map { $0 }
        #expect(rows.map { file[Int($0.fileOffset) + 28 + 40 + 5] } == [1, 1, 2, 3])
    }

    @Test("No secret comes: the wait ends by age while the writer idles, the packets written in order")
    func ageLetsGo() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.holdLimits.maximumAgeMicros = 50_000
        let writer = try CaptureWriter(configuration: configuration)
        record(writer, tcpPacket(clientHelloStart()), flow: 7)
        record(writer, tcpPacket([23, 3, 3, 0, 1, 2]), flow: 7)
        wait { writer.counters.packetsWritten == 2 }
        #expect(writer.counters.packetsWritten == 2 && writer.counters.packetsHeld == 0)
        writer.stop()
        #expect(try order(scratch.folder.filePath(1)) == ["22", "23"])
    }

    @Test("A passed-through connection (no secret will come): its held packets go at once, in order, with no secrets block, and its later ones are not held")
    func noSecretWillComeLetsGo() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.holdLimits.maximumAgeMicros = 600_000_000
        let writer = try CaptureWriter(configuration: configuration)
        record(writer, tcpPacket(clientHelloStart()), flow: 7)
        record(writer, tcpPacket([22, 3, 3, 0, 1, 2]), flow: 7, .serverToClient)
        wait { writer.counters.packetsHeld == 1 }
        #expect(writer.counters.packetsHeld == 1)
        let random = try #require((0..<32).map(UInt8.init).withUnsafeBytes { TLSClientRandom($0) })
        #expect(writer.noSecretWillCome(random))
        record(writer, tcpPacket([23, 3, 3, 0, 1, 3]), flow: 7)
        record(writer, tcpPacket([99]), flow: 8)
        wait { writer.counters.packetsWritten == 4 }
        #expect(writer.counters.packetsWritten == 4 && writer.counters.packetsHeld == 0)
        writer.stop()
        #expect(try order(scratch.folder.filePath(1)) == ["22", "22", "23", "99"])
    }

    @Test("flush lets held packets go (everything queued is in the file); rotate puts them in the file it closes")
    func flushAndRotate() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.holdLimits.maximumAgeMicros = 600_000_000
        let writer = try CaptureWriter(configuration: configuration)
        record(writer, tcpPacket(clientHelloStart()), flow: 7)
        record(writer, tcpPacket([23, 3, 3, 0, 1, 2]), flow: 7)
        writer.flush()
        #expect(writer.counters.packetsWritten == 2 && writer.counters.packetsHeld == 0)
        var hello = clientHelloStart()
        hello[11] = 0x42
        record(writer, tcpPacket(hello), flow: 9)
        record(writer, tcpPacket([23, 3, 3, 0, 1, 5]), flow: 9)
        wait { writer.counters.packetsHeld == 1 }
        #expect(writer.rotate() == (closed: 1, opened: 2))
        writer.stop()
        #expect(try order(scratch.folder.filePath(1)) == ["22", "23", "22", "23"])
        // The file opened by the rotation took nothing: not kept at the stop.
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(2)))
        #expect(try scratch.catalog().packets(flow: 9).map(\.captureSeq) == [1, 1])
    }
}
