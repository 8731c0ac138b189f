import Capture
import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The capture writer with the appender's tail held back: rows may point past the file's end
/// until the tail is written (its timer, `flush`, rotation, stop); a reader then says the packet
/// is not yet written, never that the file is damaged.
@Suite("The capture writer's held-back tail: rows past the file's end, the timer, flush, stop", .serialized)
struct CaptureHeldTailTests {
    /// Waits (no flush: that writes the tail) until the writer wrote `count` packets.
    static func waitWritten(_ writer: CaptureWriter, _ count: UInt64) {
        let deadline = Date().addingTimeInterval(10)
        while writer.counters.packetsWritten < count && Date() < deadline { usleep(2_000) }
    }

    static func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }

    /// The conversation's SYN and SYN-ACK: with the file's head, under 512 bytes (the smallest
    /// direct I/O block), so they stay in the held tail.
    static func recordTwo(_ writer: CaptureWriter, flow: UInt64) {
        for (i, (direction, bytes)) in Conversation.packets.prefix(2).enumerated() {
            bytes.withUnsafeBytes { writer.record(flow: flow, direction: direction, timeMicros: 1_764_000_000_000_000 + Int64(i) * 1_500, packet: $0) }
        }
    }

    @Test("Two small packets stay in the held tail: rows committed, the file ends at its head, each read is .notYetWritten; flush writes them; stop leaves what tshark reads")
    func heldUntilFlush() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.tailInterval = 3_600
        let writer = try CaptureWriter(configuration: configuration)
        var stopped = false
        defer { if !stopped { writer.stop() } }
        try #require(writer.counters.writeMode == .direct, "needs a file system that takes O_DIRECT under \(NSTemporaryDirectory())")
        Self.recordTwo(writer, flow: 7)
        Self.waitWritten(writer, 2)
        #expect(writer.counters.packetsWritten == 2)
        let catalog = try scratch.catalog()
        defer { catalog.close() }
        let rows = try catalog.packets(flow: 7)
        #expect(rows.count == 2)
        let (file, _) = try #require(try catalog.file(1))
        #expect(file.isRecording)
        // The head (Section Header and Interface Description) is written when the file opens;
        // the packets, under one block, wait in the buffer.
        #expect(Self.size(file.path) == Int(rows[0].fileOffset))
        for row in rows {
            let outcome = CaptureRecord.read(path: file.path, offset: row.fileOffset, snapLength: 0,
                                             rowOriginalLength: Int(row.originalLength), isRecording: file.isRecording)
            #expect(outcome == .notYetWritten, "packet \(row.n)")
        }
        // Without a live writer the same short file is a read failure (what a killed writer left).
        #expect(CaptureRecord.read(path: file.path, offset: rows[0].fileOffset, snapLength: 0, rowOriginalLength: Int(rows[0].originalLength))
                == .damaged("the file ends before the record does"))
        writer.flush()
        for (row, (_, bytes)) in zip(rows, Conversation.packets) {
            #expect(CaptureRecord.read(path: file.path, offset: row.fileOffset, snapLength: 0, rowOriginalLength: Int(row.originalLength),
                                       isRecording: true) == .bytes(bytes), "packet \(row.n)")
        }
        // More packets after the flush: held again until stop, which writes them.
        Self.recordTwo(writer, flow: 8)
        Self.waitWritten(writer, 4)
        let eight = try catalog.packets(flow: 8)
        #expect(eight.count == 2)
        #expect(CaptureRecord.read(path: file.path, offset: eight[1].fileOffset, snapLength: 0, rowOriginalLength: Int(eight[1].originalLength),
                                   isRecording: true) == .notYetWritten)
        writer.stop()
        stopped = true
        let closed = try #require(try catalog.file(1)).file
        #expect(!closed.isRecording && Self.size(file.path) == Int(closed.bytes))
        guard tsharkInstalled else { return }
        let read = try #require(runTool("tshark", ["-r", file.path, "-T", "fields", "-e", "frame.len"]))
        #expect(read.status == 0 && !read.err.contains("cut short"), "\(read)")
        let lengths = Conversation.packets.prefix(2).map { String($0.1.count) }
        #expect(read.out.split(separator: "\n").map(String.init) == lengths + lengths)
        #expect(runTool("capinfos", ["-c", "-M", file.path])?.status == 0)
    }

    @Test("A quiet capture reaches the file on the timer: the tail is written within its interval without a flush")
    func timerWritesTail() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.tailInterval = 0.2
        let writer = try CaptureWriter(configuration: configuration)
        defer { writer.stop() }
        try #require(writer.counters.writeMode == .direct, "needs a file system that takes O_DIRECT under \(NSTemporaryDirectory())")
        let start = Date()
        Conversation.record(writer, flow: 3)
        Self.waitWritten(writer, 7)
        let path = scratch.folder.filePath(1)
        let catalog = try scratch.catalog()
        defer { catalog.close() }
        let whole = Int(try #require(try catalog.file(1)).file.bytes)
        while Self.size(path) < whole && Date().timeIntervalSince(start) < 10 { usleep(5_000) }
        #expect(Self.size(path) == whole, "the tail was not written within 10 s")
        #expect(Date().timeIntervalSince(start) < 5)
    }
}
