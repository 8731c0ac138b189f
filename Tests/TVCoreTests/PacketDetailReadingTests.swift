import Capture
import FlowStore
import FlowTerms
import Foundation
import Glibc
import Testing
import TVCore

/// `tv packet FLOW N` through `PacketDetailReading` against a live capture writer whose tail is
/// held back: the packet's row is there, its bytes are not yet in the file.
@Suite("PacketDetailReading: a packet still in the capture writer's buffer", .serialized)
struct PacketDetailReadingTests {
    /// A fresh folder (the caller removes it) with a captures folder and a writer's configuration
    /// in it, lingering 0 ms.
    static func scratch() throws -> (root: String, folder: CaptureFolder, configuration: CaptureConfiguration) {
        let root = NSTemporaryDirectory() + "tv-packet-detail-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let folder = CaptureFolder(path: root + "/captures")
        var configuration = CaptureConfiguration(folder: folder, databasePath: root + "/tunnelvision.sqlite3", snapLength: 0, rotation: CaptureRotation())
        configuration.lingerMillis = 0
        return (root, folder, configuration)
    }

    @Test("Before the tail is written: the one sentence (not a read failure); after flush: the bytes")
    func notYetWritten() throws {
        let (root, folder, made) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = made
        configuration.tailInterval = 3_600
        let writer = try CaptureWriter(configuration: configuration)
        defer { writer.stop() }
        try #require(writer.counters.writeMode == .direct, "needs a file system that takes O_DIRECT under \(NSTemporaryDirectory())")
        let packet = PacketDetailPresentationTests.nxdomain
        packet.withUnsafeBytes { writer.record(flow: 42, direction: .serverToClient, timeMicros: 1_764_620_000_000_000, packet: $0) }
        let deadline = Date().addingTimeInterval(10)
        while writer.counters.packetsWritten < 1 && Date() < deadline { usleep(2_000) }
        let database = try SQLiteDatabase(path: configuration.databasePath)
        let catalog = CaptureCatalog(database: database, folder: folder)
        defer { catalog.close() }
        let held = try PacketDetailReading.read(catalog, flow: 42, n: 1)
        #expect(held.outcome == .notYetWritten)
        #expect(held.absence == "Packet 1 of flow 42 is still in the capture writer's buffer, not yet in capture-000001.pcapng; it is written within a second (or when tv stops): try `tv packet 42 1` again.")
        writer.flush()
        let read = try PacketDetailReading.read(catalog, flow: 42, n: 1)
        #expect(read.outcome == .bytes(packet) && read.absence == nil)
    }

    @Test("A killed writer's packet whose bytes never reached the file: after the next start's repair, the row past the file's end is said as never written, not as damage")
    func neverWritten() throws {
        let (root, folder, configuration) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = try CaptureWriter(configuration: configuration)
        let packet = PacketDetailPresentationTests.nxdomain
        packet.withUnsafeBytes { writer.record(flow: 42, direction: .serverToClient, timeMicros: 1_764_620_000_000_000, packet: $0) }
        writer.flush()
        writer.stop()
        let database = try SQLiteDatabase(path: configuration.databasePath)
        let catalog = CaptureCatalog(database: database, folder: folder)
        defer { catalog.close() }
        let row = try #require(try catalog.packet(flow: 42, n: 1))
        // What a kill leaves: the row made, the file ending before the packet, the capture still
        // marked recording; the next start repairs it (`CaptureRepair.closeAbandoned`).
        #expect(truncate(folder.filePath(row.captureSeq), off_t(row.fileOffset + 5)) == 0)
        try database.execute("UPDATE captures SET recording = 1, ended_at = NULL WHERE seq = \(row.captureSeq)")
        // Before the next start's repair: the packet cut short by the kill never reached the
        // file either, and the list says the file is left open, not cut after it was closed.
        let before = try PacketDetailReading.read(catalog, flow: 42, n: 1)
        #expect(before.outcome == .neverWritten(fileBytes: row.fileOffset + 5), "\(before.outcome)")
        let listed = CapturesPresentation.lines(try catalog.files(), folder: folder.path, captureOn: true)
        #expect(listed.count == 2 && listed[1].hasSuffix("not closed  (its end was never recorded: its session was killed or crashed, or the disk was full as it closed; the next `tv run` or `tv exec` cuts it back to its whole packets and counts them)"), "\(listed)")
        #expect(truncate(folder.filePath(row.captureSeq), off_t(row.fileOffset)) == 0)
        #expect(try PacketDetailReading.read(catalog, flow: 42, n: 1).outcome == .neverWritten(fileBytes: row.fileOffset))
        try CaptureRepair.closeAbandoned(database: database, folder: folder)
        let detail = try PacketDetailReading.read(catalog, flow: 42, n: 1)
        #expect(detail.outcome == .neverWritten(fileBytes: row.fileOffset))
        #expect(detail.absence == "Packet 1 of flow 42 never reached capture-000001.pcapng: the session writing it ended (killed, or crashed) before it wrote its last packets, and the file keeps the \(Units.grouped(row.fileOffset)) bytes written before; the connection stays in your history.")
    }

    @Test("A copied data folder's captures are its own files: listed, deleted and repaired there, never the original's (a trial's delete in a copy removed the original's file)")
    func copiedFolder() throws {
        let (root, _, configuration) = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = try CaptureWriter(configuration: configuration)
        PacketDetailPresentationTests.nxdomain.withUnsafeBytes { writer.record(flow: 42, direction: .serverToClient, timeMicros: 1_764_620_000_000_000, packet: $0) }
        writer.flush()
        writer.stop()
        let copy = root + "-copy"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: root, toPath: copy)
        let original = root + "/captures/capture-000001.pcapng", copied = copy + "/captures/capture-000001.pcapng"
        func sizeOnDisk(_ path: String) -> Int64? { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil }
        let size = try #require(sizeOnDisk(original))
        let database = try SQLiteDatabase(path: copy + "/tunnelvision.sqlite3")
        let catalog = CaptureCatalog(database: database, folder: CaptureFolder(path: copy + "/captures"))
        defer { catalog.close() }
        #expect(try catalog.files().map(\.path) == [copied])
        // The next start's repair of a capture left recording cuts the copy's file, not the original's.
        try database.execute("UPDATE captures SET recording = 1, ended_at = NULL WHERE seq = 1")
        #expect(truncate(copied, off_t(size + 3)) == 0)
        try CaptureRepair.closeAbandoned(database: database, folder: CaptureFolder(path: copy + "/captures"))
        #expect(sizeOnDisk(copied) == size && sizeOnDisk(original) == size)
        #expect(try catalog.delete(1, nowMicros: 1_764_620_001_000_000) == size)
        #expect(sizeOnDisk(copied) == nil)
        #expect(sizeOnDisk(original) == size)
    }
}
