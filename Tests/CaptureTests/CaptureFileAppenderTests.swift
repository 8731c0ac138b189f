import Capture
import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A folder for files written with O_DIRECT: under /var/tmp (the root file system on Debian, ext4
/// on CI; /tmp may be a tmpfs elsewhere), removed at the end.
final class DiskScratch {
    let path: String
    init() throws {
        path = "/var/tmp/tv-direct-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A small file system the test mounts (root only) on a folder of its own, unmounted and
/// removed at the end: `ramfs` refuses O_DIRECT (EINVAL at open), a `tmpfs` of `size` fills up.
final class ScratchMount {
    let path: String
    init?(type: String, options: String? = nil) {
        guard getuid() == 0 else { return nil }
        path = NSTemporaryDirectory() + "tv-mount-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let r = runTool("mount", ["-t", type] + (options.map { ["-o", $0] } ?? []) + ["none", path])
        guard r?.status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            return nil
        }
    }
    deinit {
        _ = runTool("umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Bytes no two appends share by accident: a counter's low byte mixed with a step.
func patternBytes(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) }
}

func fileBytes(_ path: String) -> [UInt8] { (FileManager.default.contents(atPath: path) ?? Data()).map { $0 } }

@Suite("CaptureFileAppender: O_DIRECT with a held-back tail, the buffered fallback, a failed append cut back", .serialized)
struct CaptureFileAppenderTests {
    /// Sizes that start and end inside blocks, fill the buffer exactly, cross it several times.
    static let sizes = [28, 4_068, 1, 5_000, 16_384, 3, 100_000, 12_288, 7]

    /// Appends `sizes` and checks after each that the file is exactly what was appended.
    func appendAndCheck(_ output: CaptureFileAppender) {
        var expected: [UInt8] = []
        for (i, size) in Self.sizes.enumerated() {
            let part = patternBytes(size, seed: i)
            // Two parts per append, as the capture writer hands secrets and packets.
            let head = Array(part.prefix(size / 3))
            let rest = Array(part.dropFirst(size / 3))
            let failure = head.withUnsafeBytes { h in rest.withUnsafeBytes { r in output.append([h, r]) } }
            #expect(failure == nil)
            expected += part
            #expect(output.end == Int64(expected.count))
            let onDisk = fileBytes(output.path)
            #expect(onDisk.count == expected.count, "after append \(i): \(onDisk.count) bytes on disk, \(expected.count) appended")
            #expect(onDisk == expected, "after append \(i)")
        }
    }

    @Test("O_DIRECT on a disk file system: after every append the file is exactly the bytes appended (never padded), 0600")
    func direct() throws {
        let scratch = try DiskScratch()
        let output = try CaptureFileAppender(creating: scratch.path + "/a.pcapng", bufferBytes: 16_384)
        #expect(output.mode == .direct)
        #expect(output.blockBytes >= 512 && output.blockBytes.nonzeroBitCount == 1)
        appendAndCheck(output)
        #expect(output.mode == .direct)
        var info = stat()
        #expect(stat(output.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(throws: Errno(EEXIST)) { try CaptureFileAppender(creating: scratch.path + "/a.pcapng") }
        let fd = output.handOver()
        #expect(fd >= 0 && fdatasync(fd) == 0)
        close(fd)
        #expect(output.handOver() == -1)
        var one: UInt8 = 1
        #expect(withUnsafeBytes(of: &one) { output.append($0) } == Errno(EBADF))
    }

    @Test("Asked for buffered writes: the same bytes, through the page cache")
    func bufferedOnRequest() throws {
        let scratch = try DiskScratch()
        let output = try CaptureFileAppender(creating: scratch.path + "/b.pcapng", direct: false)
        #expect(output.mode == .buffered)
        appendAndCheck(output)
    }

    @Test("A file system that refuses O_DIRECT (ramfs): buffered, the same bytes", .enabled(if: getuid() == 0, "mounts a ramfs: needs root"))
    func fallback() throws {
        let mount = try #require(ScratchMount(type: "ramfs"))
        let output = try CaptureFileAppender(creating: mount.path + "/c.pcapng", bufferBytes: 16_384)
        #expect(output.mode == .buffered)
        appendAndCheck(output)
    }

    @Test("A full disk: the failed append leaves the file as it was; a later one that fits continues it", .enabled(if: getuid() == 0, "mounts a tmpfs: needs root"))
    func fullDiskCutBack() throws {
        let mount = try #require(ScratchMount(type: "tmpfs", options: "size=64k"))
        let output = try CaptureFileAppender(creating: mount.path + "/d.pcapng", bufferBytes: 16_384)
        let first = patternBytes(40_003, seed: 1)
        #expect(first.withUnsafeBytes { output.append($0) } == nil)
        let tooMuch = patternBytes(40_000, seed: 2)
        #expect(tooMuch.withUnsafeBytes { output.append($0) } == Errno(ENOSPC))
        #expect(output.end == 40_003)
        #expect(fileBytes(output.path) == first)
        let more = patternBytes(5_000, seed: 3)
        #expect(more.withUnsafeBytes { output.append($0) } == nil)
        #expect(fileBytes(output.path) == first + more)
    }
}

/// The capture writer's files in both modes: 300 flows of the real Conversation (2,100 packets,
/// ~250 KB) through a 16 KiB direct buffer, so appends cross blocks and fill the buffer.
@Suite("The capture writer with O_DIRECT and without, read back by tshark and capinfos", .serialized)
struct CaptureWriteModeTests {
    /// Writes 300 flows × 7 packets with a 16 KiB direct buffer, then checks the mode, every
    /// offset of flow 150 and the file through capinfos and tshark.
    func writeAndRead(folder: String, expecting mode: CaptureWriteMode) throws {
        let databasePath = folder + "/tunnelvision.sqlite3"
        var configuration = CaptureConfiguration(folder: CaptureFolder(path: folder + "/captures"), databasePath: databasePath,
                                                 snapLength: 0, rotation: CaptureRotation())
        configuration.lingerMillis = 0
        configuration.directBufferBytes = 16_384
        let writer = try CaptureWriter(configuration: configuration)
        for flow in 1...300 {
            Conversation.record(writer, flow: UInt64(flow))
            if flow % 50 == 0 { writer.flush() }
        }
        writer.flush()
        #expect(writer.counters.writeMode == mode)
        writer.stop()
        #expect(writer.counters.packetsWritten == 2_100 && writer.queueCounters.packetsDropped == 0)
        let database = try SQLiteDatabase(path: databasePath)
        let catalog = CaptureCatalog(database: database, folder: configuration.folder)
        let path = configuration.folder.filePath(1)
        let file = fileBytes(path)
        let closed = try #require(try catalog.files().first)
        #expect(closed.bytes == Int64(file.count) && closed.packets == 2_100)
        for flow: UInt64 in [1, 150, 300] {
            let rows = try catalog.packets(flow: flow)
            #expect(rows.count == 7)
            for (row, (_, bytes)) in zip(rows, Conversation.packets) {
                let at = Int(row.fileOffset)
                #expect(Array(file[at..<(at + 4)]) == [6, 0, 0, 0])
                #expect(Array(file[(at + 28)..<(at + 28 + bytes.count)]) == bytes)
            }
        }
        guard tsharkInstalled else { return }
        let info = try #require(runTool("capinfos", ["-c", "-M", path]))
        #expect(info.status == 0 && (info.out.contains("Number of packets:   2100") || info.out.contains("Number of packets = 2100")), "\(info)")
        let flags = try #require(runTool("tshark", ["-r", path, "-T", "fields", "-e", "tcp.flags"]))
        #expect(flags.status == 0, "\(flags.err)")
        let expected = Array(repeating: ["0x0002", "0x0012", "0x0010", "0x0018", "0x0010", "0x0011", "0x0014"], count: 300).flatMap { $0 }
        #expect(flags.out.split(separator: "\n").map(String.init) == expected)
    }

    @Test("O_DIRECT (a disk file system): 2,100 packets, rows at their blocks, capinfos and tshark read them all; `direct` said")
    func direct() throws {
        let scratch = try DiskScratch()
        try writeAndRead(folder: scratch.path, expecting: .direct)
    }

    @Test("ramfs refuses O_DIRECT: the same file, buffered, and `buffered` said", .enabled(if: getuid() == 0, "mounts a ramfs: needs root"))
    func fallback() throws {
        let mount = try #require(ScratchMount(type: "ramfs"))
        try writeAndRead(folder: mount.path, expecting: .buffered)
    }
}
