@testable import Capture
import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs a real tool; nil when it is not installed.
func runTool(_ name: String, _ arguments: [String]) -> (status: Int32, out: String, err: String)? {
    let candidates = ["/usr/bin/" + name, "/usr/sbin/" + name, "/bin/" + name]
    guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
    let finished = Child.run(path, arguments, environment: ["HOME": NSTemporaryDirectory(), "PATH": "/usr/bin:/bin", "LC_ALL": "C"], timeout: 120)
    guard finished.startFailure == nil else { return nil }
    return (finished.status, String(decoding: finished.stdout, as: UTF8.self), String(decoding: finished.stderr, as: UTF8.self))
}

let tsharkInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") && FileManager.default.isExecutableFile(atPath: "/usr/bin/capinfos")

/// A temporary data folder with a capture writer configuration in it.
final class CaptureScratch {
    let root: String
    init() {
        root = NSTemporaryDirectory() + "tv-capture-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: root) }
    var folder: CaptureFolder { CaptureFolder(path: root + "/captures") }
    var databasePath: String { root + "/tunnelvision.sqlite3" }
    func configuration(snapLength: Int = 0, rotation: CaptureRotation = CaptureRotation()) -> CaptureConfiguration {
        var c = CaptureConfiguration(folder: folder, databasePath: databasePath, snapLength: snapLength, rotation: rotation)
        c.lingerMillis = 0
        return c
    }
    /// Capture 1 with flow `flow`'s conversation, its writer stopped; its path. The packets
    /// come after the file's start (a second from now), as real ones do.
    func closedCapture(flow: UInt64) throws -> String {
        let writer = try CaptureWriter(configuration: configuration())
        Conversation.record(writer, flow: flow, startMicros: Int64(Date().timeIntervalSince1970 * 1e6) + 1_000_000)
        writer.stop()
        return folder.filePath(1)
    }
    func catalog() throws -> CaptureCatalog {
        let database = try SQLiteDatabase(path: databasePath)
        try FlowSchema.migrate(database)
        return CaptureCatalog(database: database, folder: folder)
    }
}

/// A real TCP conversation (tcpdump's capture, see PacketSummaryTests): SYN, SYN-ACK, ACK,
/// request (89 bytes of payload), ACK, FIN, RST.
enum Conversation {
    static let packets: [(Direction, [UInt8])] = [
        (.clientToServer, PacketSummaryTests.hex("4500003ccfc04000400643630acb09010acb0902e9fe1f90a143fc4900000000a002faf0c90a0000020405b40402080aa1b0139c000000000103030a")),
        (.serverToClient, PacketSummaryTests.hex("4500003c00004000400613240acb09020acb09011f90e9fe31af8c50a143fc4aa012fe8888770000020405b40402080a23215bc9a1b0139c0103030a")),
        (.clientToServer, PacketSummaryTests.hex("45000034cfc140004006436a0acb09010acb0902e9fe1f90a143fc4a31af8c518010003fb59000000101080aa1b0139c23215bc9")),
        (.clientToServer, PacketSummaryTests.hex("4500008dcfc24000400643100acb09010acb0902e9fe1f90a143fc4a31af8c518018003f14b400000101080aa1b0139d23215bc947455420"
            + "2f696e6465782e68746d6c20485454502f312e310d0a486f73743a2031302e3230332e392e323a383038300d0a557365722d4167656e743a"
            + "206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a")),
        (.serverToClient, PacketSummaryTests.hex("45000034679f40004006ab8c0acb09020acb09011f90e9fe31af8c51a143fca380100040b53400000101080a23215bcaa1b0139d")),
        (.serverToClient, PacketSummaryTests.hex("4500003467a240004006ab890acb09020acb09011f90e9fe31af8d0fa143fca380110040b46900000101080a23215bd0a1b013a3")),
        (.serverToClient, PacketSummaryTests.hex("4500002800004000400613380acb09020acb09010009e28e00000000952e78605014000098110000")),
    ]

    static func record(_ writer: CaptureWriter, flow: UInt64, startMicros: Int64 = 1_764_000_000_000_000) {
        for (i, (direction, bytes)) in packets.enumerated() {
            bytes.withUnsafeBytes { writer.record(flow: flow, direction: direction, timeMicros: startMicros + Int64(i) * 1_500, packet: $0) }
        }
    }
}

@Suite("The capture writer, read back by tshark and capinfos", .serialized)
struct CaptureWriterTests {
    @Test("Packets of a flow: one file 0600 in a 0700 folder, rows with meaning and offsets, tshark reads every packet")
    func writesRowsAndFile() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(writer, flow: 7)
        writer.flush()
        #expect(writer.counters.recordingSequence == 1)
        let catalog = try scratch.catalog()
        let live = try catalog.files()
        #expect(live.map(\.seq) == [1])
        #expect(live.first?.isRecording == true)
        writer.stop()

        let path = scratch.folder.filePath(1)
        #expect(path.hasSuffix("/captures/capture-000001.pcapng"))
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(scratch.folder.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(try catalog.packetCount(flow: 7) == 7)
        let rows = try catalog.packets(flow: 7)
        #expect(rows.map(\.meaning) == [.opened, .accepted, .deliveryConfirmed, .data, .deliveryConfirmed, .finishedSending, .cutOff])
        #expect(rows.map(\.n) == [1, 2, 3, 4, 5, 6, 7])
        #expect(rows.map(\.direction) == Conversation.packets.map(\.0))
        #expect(rows.map(\.originalLength) == Conversation.packets.map { Int64($0.1.count) })
        #expect(rows[1].timeMicros - rows[0].timeMicros == 1_500)
        // Each offset is the start of an Enhanced Packet Block whose bytes are the packet.
        let file = try #require(FileManager.default.contents(atPath: path)).map { $0 }
        for (row, (_, bytes)) in zip(rows, Conversation.packets) {
            let at = Int(row.fileOffset)
            #expect(Array(file[at..<(at + 4)]) == [6, 0, 0, 0])
            #expect(Array(file[(at + 28)..<(at + 28 + bytes.count)]) == bytes)
        }
        let closed = try #require(try catalog.files().first)
        #expect(closed.isRecording == false && closed.endedMicros != nil && closed.packets == 7 && closed.bytes == Int64(file.count))

        guard tsharkInstalled else { return }
        let info2 = try #require(runTool("capinfos", ["-c", "-M", path]))
        #expect(info2.status == 0, "\(info2.err)")
        #expect(info2.out.contains("Number of packets:   7") || info2.out.contains("Number of packets = 7"), "\(info2.out)")
        let fields = try #require(runTool("tshark", ["-r", path, "-T", "fields", "-e", "tcp.flags", "-e", "ip.src", "-e", "frame.len", "-e", "frame.time_epoch", "-e", "frame.p2p_dir"]))
        #expect(fields.status == 0, "\(fields.err)")
        let lines = fields.out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.map { $0[0] } == ["0x0002", "0x0012", "0x0010", "0x0018", "0x0010", "0x0011", "0x0014"])
        #expect(lines.map { $0[2] } == Conversation.packets.map { String($0.1.count) })
        #expect(lines.first?[3].hasPrefix("1764000000.000000") == true, "\(lines.first ?? [])")
        #expect(lines[1][3].hasPrefix("1764000000.001500"), "\(lines[1])")
    }

    @Test("The snap length cuts what is kept, not what is told: incl_len 40, orig_len intact; tshark sees the cut")
    func snapLength() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration(snapLength: 40))
        Conversation.record(writer, flow: 9)
        writer.stop()
        let rows = try scratch.catalog().packets(flow: 9)
        #expect(rows.map(\.includedLength) == Conversation.packets.map { Int64(min(40, $0.1.count)) })
        #expect(rows[3].meaning == .data && rows[3].originalLength == 141)
        guard tsharkInstalled else { return }
        let fields = try #require(runTool("tshark", ["-r", scratch.folder.filePath(1), "-T", "fields", "-e", "frame.cap_len", "-e", "frame.len"]))
        #expect(fields.out.split(separator: "\n")[3] == "40\t141")
        let interfaces = try #require(runTool("capinfos", ["-I", scratch.folder.filePath(1)]))
        #expect(interfaces.out.contains("40"), "\(interfaces.out)")
    }

    @Test("At most 500 rows per flow; every packet is still in the file and counted")
    func rowCap() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        let ack = Conversation.packets[2].1
        for i in 0..<620 {
            ack.withUnsafeBytes { writer.record(flow: 11, direction: .clientToServer, timeMicros: 1_000 + Int64(i), packet: $0) }
            if i == 300 { writer.flush() }
        }
        writer.stop()
        let catalog = try scratch.catalog()
        #expect(try catalog.packetCount(flow: 11) == 620)
        #expect(try catalog.packets(flow: 11, limit: 10_000).count == 500)
        #expect(try catalog.files().first?.packets == 620)
        guard tsharkInstalled else { return }
        let count = try #require(runTool("tshark", ["-r", scratch.folder.filePath(1), "-T", "fields", "-e", "frame.number"]))
        #expect(count.out.split(separator: "\n").count == 620)
    }

    @Test("Rotation by size: each file ends at the limit, every one readable, rows point into the right file; rotate() on demand")
    func rotation() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration(rotation: CaptureRotation(maximumBytes: 600)))
        Conversation.record(writer, flow: 3)
        writer.flush()
        Conversation.record(writer, flow: 4)
        writer.flush()
        let turned = writer.rotate()
        writer.stop()
        let catalog = try scratch.catalog()
        let files = try catalog.files()
        #expect(files.map(\.seq) == Array((1...Int64(files.count)).reversed()))
        #expect(files.count >= 3)
        #expect(turned.opened == turned.closed.map { $0 + 1 })
        #expect(files.reduce(0) { $0 + $1.packets } == 14)
        for row in try catalog.packets(flow: 4) {
            let file = try #require(FileManager.default.contents(atPath: scratch.folder.filePath(row.captureSeq))).map { $0 }
            #expect(Array(file[Int(row.fileOffset)..<(Int(row.fileOffset) + 4)]) == [6, 0, 0, 0])
        }
        guard tsharkInstalled else { return }
        for file in files {
            let info = try #require(runTool("capinfos", ["-c", "-M", file.path]))
            #expect(info.status == 0, "\(file.path): \(info.err)")
        }
    }

    @Test("A Decryption Secrets Block lands before the packets queued after it; tshark reads the file")
    func secrets() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        let line = "CLIENT_RANDOM " + String(repeating: "ab", count: 32) + " " + String(repeating: "cd", count: 48) + "\n"
        #expect(writer.appendSecrets(Array(line.utf8)))
        Conversation.record(writer, flow: 5)
        writer.stop()
        let file = try #require(FileManager.default.contents(atPath: scratch.folder.filePath(1))).map { $0 }
        // SHB and IDB (`tunnelCaptureHead`): the DSB comes next.
        let head = PcapngBlocks.tunnelCaptureHead(snapLength: 0).count
        #expect(Array(file[head..<(head + 4)]) == [0x0A, 0, 0, 0])
        #expect(try scratch.catalog().packets(flow: 5).first?.fileOffset == Int64(head + 12 + 8 + line.utf8.count + PcapngBlocks.padding(line.utf8.count)))
        guard tsharkInstalled else { return }
        let read = try #require(runTool("tshark", ["-r", scratch.folder.filePath(1), "-T", "fields", "-e", "frame.number"]))
        #expect(read.status == 0, "\(read.err)")
        #expect(read.out.split(separator: "\n").count == 7)
    }

    @Test("After a rotation each file starts with the secrets already written (its connections decrypt on their own); a later secret joins them")
    func secretsCarriedIntoNextFiles() throws {
        let scratch = CaptureScratch()
        // 1,600 bytes a file: the carried secrets may take a quarter (400: both 196-byte blocks).
        let writer = try CaptureWriter(configuration: scratch.configuration(rotation: CaptureRotation(maximumBytes: 1_600)))
        let first = "CLIENT_RANDOM " + String(repeating: "ab", count: 32) + " " + String(repeating: "cd", count: 48) + "\n"
        let second = "CLIENT_RANDOM " + String(repeating: "ef", count: 32) + " " + String(repeating: "01", count: 48) + "\n"
        #expect(writer.appendSecrets(Array(first.utf8)))
        Conversation.record(writer, flow: 5)
        writer.flush()
        #expect(writer.appendSecrets(Array(second.utf8)))
        Conversation.record(writer, flow: 6)
        writer.stop()
        let files = try scratch.catalog().files().sorted { $0.seq < $1.seq }
        #expect(files.count >= 2, "\(files.map(\.seq))")
        let block1 = PcapngBlocks.decryptionSecrets(secretsType: PcapngBlocks.tlsKeyLogSecrets, secrets: Array(first.utf8))
        let block2 = PcapngBlocks.decryptionSecrets(secretsType: PcapngBlocks.tlsKeyLogSecrets, secrets: Array(second.utf8))
        let head = PcapngBlocks.tunnelCaptureHead(snapLength: 0).count
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: file.path)).map { $0 }
            // SHB and IDB, then the carried blocks, oldest first (the first file: the secret
            // written before its packets, at the same place).
            #expect(Array(bytes[head..<(head + block1.count)]) == block1, "capture \(file.seq) does not start with the first secret")
        }
        // The last file was opened after both were written: it carries both.
        let last = try #require(FileManager.default.contents(atPath: files.last!.path)).map { $0 }
        #expect(Array(last[head..<(head + block1.count + block2.count)]) == block1 + block2)
        guard tsharkInstalled else { return }
        for file in files {
            let info = try #require(runTool("capinfos", ["-c", "-M", file.path]))
            #expect(info.status == 0, "\(file.path): \(info.err)")
        }
    }

    @Test("The carried secrets keep the newest whole chunks within their limit; one chunk over it is kept alone")
    func carriedSecretsBound() {
        var carried = CaptureCarriedSecrets(limitBytes: 10)
        #expect(carried.blocks.isEmpty)
        carried.add([1, 1, 1, 1])
        carried.add([2, 2, 2, 2])
        #expect(carried.blocks == [1, 1, 1, 1, 2, 2, 2, 2] && carried.bytes == 8)
        carried.add([3, 3, 3, 3])
        #expect(carried.blocks == [2, 2, 2, 2, 3, 3, 3, 3] && carried.bytes == 8)
        carried.add(Array(repeating: 4, count: 12))
        #expect(carried.blocks == Array(repeating: 4, count: 12) && carried.bytes == 12)
        carried.add([])
        #expect(carried.bytes == 12)
    }

    @Test("A file cut mid-block (a writer killed mid-write) is closed by the next writer: cut back to whole blocks, row closed, readable")
    func cutFileRepaired() throws {
        let scratch = CaptureScratch()
        let path = try scratch.closedCapture(flow: 21)
        let whole = try #require(FileManager.default.contents(atPath: path)).count
        // As a killed writer leaves it: marked recording, and the last block half written.
        let catalog = try scratch.catalog()
        // Its row as the dead writer left it: more packets than reached the file (rows of a batch
        // whose bytes were still held back), no end.
        try catalog.database.execute("UPDATE captures SET recording = 1, ended_at = NULL, packets = 9 WHERE seq = 1")
        let fd = open(path, O_WRONLY | O_APPEND)
        let half = [UInt8](repeating: 0, count: 20)
        let torn = [UInt8]([6, 0, 0, 0, 0x40, 0, 0, 0]) + half
        _ = torn.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(CaptureRepair.wholeBlocksEnd(path) == Int64(whole))
        let next = try CaptureWriter(configuration: scratch.configuration())
        // Its own file, empty, is not kept at its stop (CaptureEmptyFileTests).
        next.stop()
        let files = try catalog.files()
        #expect(files.map(\.seq) == [1])
        let repaired = try #require(files.last)
        #expect(repaired.isRecording == false && repaired.bytes == Int64(whole))
        // What the file holds once cut back: its 7 packets, ending at the last one's time (not at
        // the repair's, which is when the truncate touched the file).
        #expect(repaired.packets == 7)
        #expect(repaired.endedMicros == (try catalog.packets(flow: 21)).map(\.timeMicros).max())
        #expect(CaptureRepair.wholeBlocks(path)?.packets == 7)
        #expect(try #require(FileManager.default.contents(atPath: path)).count == whole)
        guard tsharkInstalled else { return }
        let info = try #require(runTool("capinfos", ["-c", "-M", path]))
        #expect(info.status == 0, "\(info.err)")
    }

    @Test("A file left recording whose first block is overwritten, or damaged part way, is left as it is (a trial's was cut to 0 bytes, its packets gone); a zero-padded tail is cut; each outcome is returned")
    func damagedFileLeftAsItIs() throws {
        let scratch = CaptureScratch()
        let path = try scratch.closedCapture(flow: 21)
        let original = try #require(FileManager.default.contents(atPath: path))
        let catalog = try scratch.catalog()
        func leftRecording(_ bytes: Data) throws -> [CaptureRepair.Outcome] {
            #expect(FileManager.default.createFile(atPath: path, contents: bytes))
            try catalog.database.execute("UPDATE captures SET recording = 1, ended_at = NULL WHERE seq = 1")
            return try CaptureRepair.closeAbandoned(database: catalog.database, folder: scratch.folder)
        }
        // The first 21 bytes overwritten: damaged at byte 0, kept whole.
        var garbage = original
        garbage.replaceSubrange(0 ..< 21, with: Data("GARBAGEGARBAGEGARBAGE".utf8))
        #expect(try leftRecording(garbage) == [.damaged(sequence: 1, offset: 0)])
        #expect(FileManager.default.contents(atPath: path) == garbage)
        #expect(try catalog.files().first { $0.seq == 1 }?.bytes == Int64(garbage.count))
        // The second block, whose length fits in the file, with a wrong trailing length: damage
        // part way, not a write cut short (cutting there would lose every packet after it).
        let second = Int(original[4]) | Int(original[5]) << 8  // the section header's length: where block 2 starts
        var trailerBroken = original
        let blockTwoLength = Int(original[second + 4]) | Int(original[second + 5]) << 8
        trailerBroken[second + blockTwoLength - 4] ^= 0xFF
        #expect(try leftRecording(trailerBroken) == [.damaged(sequence: 1, offset: Int64(second))])
        #expect(FileManager.default.contents(atPath: path) == trailerBroken)
        // A block part way through claiming a length no block tv writes has, running past the end:
        // damage, left as it is (its 7 MB of packets after it were cut: a re-check).
        var huge = original + original[Int(second)...]
        huge.replaceSubrange(second + 4 ..< second + 8, with: [0xF0, 0xFF, 0xFF, 0x07])
        #expect(try leftRecording(huge) == [.damaged(sequence: 1, offset: Int64(second))])
        #expect(FileManager.default.contents(atPath: path) == huge)
        // Zeros after the last whole block (an aligned write's padding): cut.
        #expect(try leftRecording(original + Data(count: 28)) == [.cut(sequence: 1, bytes: 28)])
        #expect(FileManager.default.contents(atPath: path) == original)
        // Whole: nothing to say.
        #expect(try leftRecording(original) == [])
    }

    @Test("Capture files others may read are made 0600 when the folder is made ready (bits only taken away); links are left alone")
    func modesTightened() throws {
        let scratch = CaptureScratch()
        let folder = scratch.folder
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        for (name, mode) in [("capture-000001.pcapng", 0o644), ("decrypted-1.pcapng", 0o640), ("capture-000002.pcapng", 0o400)] {
            #expect(FileManager.default.createFile(atPath: folder.path + "/" + name, contents: Data([1])))
            chmod(folder.path + "/" + name, mode_t(mode))
        }
        let outside = scratch.root + "/outside"
        #expect(FileManager.default.createFile(atPath: outside, contents: Data([1])))
        chmod(outside, 0o644)
        #expect(symlink(outside, folder.path + "/link.pcapng") == 0)
        try folder.ensureExists()
        func mode(_ path: String) -> mode_t { var st = stat(); lstat(path, &st); return st.st_mode & 0o7777 }
        #expect(mode(folder.path + "/capture-000001.pcapng") == 0o600)
        #expect(mode(folder.path + "/decrypted-1.pcapng") == 0o600)
        #expect(mode(folder.path + "/capture-000002.pcapng") == 0o400)
        #expect(mode(outside) == 0o644)
    }

    @Test("Rows the database cannot take (another connection holds it, as a full disk would) wait and go in with the next write: every packet in the file keeps its row, numbered once (they were dropped: a trial's full disk)")
    func rowsWaitForTheDatabase() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        let blocker = try SQLiteDatabase(path: scratch.databasePath)
        defer { blocker.close() }
        try blocker.execute("BEGIN EXCLUSIVE")
        Conversation.record(writer, flow: 21)
        // The commit waits out its 5 s busy timeout, fails, and its rows wait.
        _ = writer.flush(waitingUntil: .now() + 6)
        try blocker.execute("COMMIT")
        Conversation.record(writer, flow: 22, startMicros: 1_764_000_001_000_000)
        writer.flush()
        writer.stop()
        #expect(writer.counters.packetsFailed == 0)
        let catalog = try scratch.catalog()
        defer { catalog.close() }
        #expect(try catalog.packets(flow: 21).map(\.n) == Array(1 ... 7))
        #expect(try catalog.packets(flow: 22).map(\.n) == Array(1 ... 7))
        let file = try #require(try catalog.files().first { $0.seq == 1 })
        #expect(file.packets == 14)
        #expect(CaptureRepair.wholeBlocks(scratch.folder.filePath(1))?.packets == 14)
    }

    @Test("The backlog keeps writes in order within its bound, gives the newest count of a flow, and lets the oldest go")
    func backlogBound() {
        func write(_ seq: Int64, flow: UInt64, packets: Int) -> CaptureRowBacklog.Write {
            var rows = CapturePacketRows(rowsPerFlow: 500)
            for i in 0 ..< packets {
                let packet = QueuedPacket(flow: flow, direction: .clientToServer, timeMicros: Int64(i), originalLength: 60, includedLength: 60,
                                          block: 0 ..< 92)
                Conversation.packets[0].1.withUnsafeBytes { bytes in
                    _ = rows.add(packet, bytes: bytes, offset: Int64(i), known: { _ in 0 })
                }
            }
            _ = rows.finish()
            return .init(seq: seq, bytes: 0, packets: 0, rows: rows, packetCount: packets)
        }
        var backlog = CaptureRowBacklog(maxRows: 10)
        #expect(backlog.append(write(1, flow: 7, packets: 4)) == 0)
        #expect(backlog.append(write(1, flow: 8, packets: 4)) == 0)
        #expect(backlog.latestCount(of: 7) == 4 && backlog.latestCount(of: 9) == nil)
        #expect(backlog.append(write(2, flow: 7, packets: 4)) == 4)
        #expect(backlog.writes.map(\.seq) == [1, 2] && backlog.rowCount == 8)
        #expect(backlog.drop() == 8 && backlog.isEmpty)
    }

    @Test("Delete: the file goes, the row stays marked (its number is never given again), packet rows stay; the recording one is refused")
    func delete() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(writer, flow: 8)
        writer.flush()
        let catalog = try scratch.catalog()
        #expect(throws: CaptureError.recording(seq: 1)) { try catalog.delete(1, nowMicros: 5) }
        _ = writer.rotate()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: scratch.folder.filePath(1))[.size] as? Int)
        #expect(try catalog.delete(1, nowMicros: 5) == Int64(size))
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        // A file already gone (moved away by hand): the row is marked, nothing was freed.
        _ = writer.rotate()
        try FileManager.default.removeItem(atPath: scratch.folder.filePath(2))
        #expect(try catalog.delete(2, nowMicros: 5) == 0)
        #expect(throws: CaptureError.noSuchCapture(seq: 1)) { try catalog.delete(1, nowMicros: 6) }
        #expect(throws: CaptureError.noSuchCapture(seq: 99)) { try catalog.delete(99, nowMicros: 6) }
        // Put back under a deleted capture's name: not the history's, said so, and left.
        #expect(FileManager.default.createFile(atPath: scratch.folder.filePath(1), contents: Data([1])))
        #expect(throws: CaptureError.notInHistory(seq: 1, path: scratch.folder.filePath(1))) { try catalog.delete(1, nowMicros: 6) }
        #expect(FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        try FileManager.default.removeItem(atPath: scratch.folder.filePath(1))
        #expect(try catalog.files().map(\.seq) == [3])
        #expect(try catalog.packets(flow: 8).count == 7)
        #expect(try catalog.file(1)?.deletedMicros == 5)
        // Each with a packet: a last file with none is not kept at the stop (CaptureEmptyFileTests).
        Conversation.record(writer, flow: 9)
        writer.stop()
        let again = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(again, flow: 10)
        again.stop()
        #expect(try catalog.files().map(\.seq) == [4, 3])
    }

    @Test("A full queue drops and counts, never waits")
    func drops() throws {
        let scratch = CaptureScratch()
        var configuration = scratch.configuration()
        configuration.batchItems = 4
        let writer = try CaptureWriter(configuration: configuration)
        let ack = Conversation.packets[2].1
        for _ in 0..<2_000 {
            ack.withUnsafeBytes { writer.record(flow: 2, direction: .clientToServer, timeMicros: 1, packet: $0) }
        }
        writer.stop()
        let counters = writer.queueCounters
        #expect(counters.packetsQueued + counters.packetsDropped == 2_000)
        #expect(counters.packetsDropped > 0)
        #expect(try scratch.catalog().packetCount(flow: 2) == Int64(counters.packetsQueued))
    }
}

@Suite("The capture writer: rotation by age, comments", .serialized)
struct CaptureWriterAgeTests {
    @Test("A file older than capture.rotateAge is closed while the writer idles; the next packet goes to the next file; a packet's comment is in tshark's frame.comment")
    func rotatesByAge() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration(rotation: CaptureRotation(maximumAgeMicros: 200_000)))
        Conversation.record(writer, flow: 1)
        writer.flush()
        usleep(600_000)
        #expect(writer.counters.recordingSequence == 2)
        Conversation.packets[0].1.withUnsafeBytes {
            _ = writer.record(flow: 1, direction: .clientToServer, timeMicros: 5, packet: $0, comment: "tv flow 1")
        }
        writer.stop()
        let catalog = try scratch.catalog()
        #expect(try catalog.files().map(\.packets) == [1, 7])
        #expect(try catalog.packets(flow: 1).last?.captureSeq == 2)
        #expect(try catalog.packetCount(flow: 1) == 8)
        guard tsharkInstalled else { return }
        let comment = try #require(runTool("tshark", ["-r", scratch.folder.filePath(2), "-T", "fields", "-e", "frame.comment"]))
        #expect(comment.out == "tv flow 1\n", "\(comment)")
    }
}
