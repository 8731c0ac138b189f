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
        // Lazy: a file still open on it (an appender not yet released) made a plain umount
        // fail, and a ramfs stayed mounted under /tmp after the suite.
        _ = runTool("umount", ["-l", path])
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

    /// Appends `sizes` and checks after each what the file holds: in direct mode every whole
    /// block appended (the tail under one block held back; a tail written before stays) and,
    /// after `writeTail`, exactly the bytes appended; in buffered mode exactly the bytes
    /// appended at once.
    func appendAndCheck(_ output: CaptureFileAppender) {
        var expected: [UInt8] = []
        // What the file held after the last `writeTail` (a written tail stays in it).
        var inFile = 0
        for (i, size) in Self.sizes.enumerated() {
            let part = patternBytes(size, seed: i)
            // Two parts per append, as the capture writer hands secrets and packets.
            let head = Array(part.prefix(size / 3))
            let rest = Array(part.dropFirst(size / 3))
            let failure = head.withUnsafeBytes { h in rest.withUnsafeBytes { r in output.append([h, r]) } }
            #expect(failure == nil)
            expected += part
            #expect(output.end == Int64(expected.count))
            let wholeBlocks = output.mode == .direct ? max(inFile, expected.count / output.blockBytes * output.blockBytes) : expected.count
            #expect(output.written == Int64(wholeBlocks), "after append \(i)")
            #expect(output.pending == expected.count - wholeBlocks)
            #expect(fileBytes(output.path) == Array(expected.prefix(wholeBlocks)), "after append \(i): the whole blocks only")
            #expect(output.writeTail() == nil)
            #expect(output.written == output.end && output.pending == 0)
            let onDisk = fileBytes(output.path)
            #expect(onDisk.count == expected.count, "after append \(i) and its tail: \(onDisk.count) bytes on disk, \(expected.count) appended")
            #expect(onDisk == expected, "after append \(i) and its tail")
            inFile = expected.count
        }
    }

    @Test("O_DIRECT, the tail held back: a written tail stays while appends stay inside its block, whole blocks replace it, handOver writes the rest")
    func heldTail() throws {
        let scratch = try DiskScratch()
        let output = try CaptureFileAppender(creating: scratch.path + "/t.pcapng", bufferBytes: 16_384)
        try #require(output.mode == .direct)
        let block = output.blockBytes
        let a = patternBytes(block + 100, seed: 1)
        #expect(a.withUnsafeBytes { output.append($0) } == nil)
        #expect(fileBytes(output.path) == Array(a.prefix(block)))
        #expect((output.end, output.written, output.pending) == (Int64(block + 100), Int64(block), 100))
        #expect(output.writeTail() == nil)
        #expect(fileBytes(output.path) == a)
        #expect(output.writeTail() == nil, "nothing pending: nothing written")
        // 50 more bytes inside the same block: the tail written before stays, the 50 wait.
        let b = patternBytes(50, seed: 2)
        #expect(b.withUnsafeBytes { output.append($0) } == nil)
        #expect((output.written, output.pending) == (Int64(block + 100), 50))
        #expect(fileBytes(output.path) == a)
        // Enough to finish the block and start the next: the block goes direct, over the tail.
        let c = patternBytes(block, seed: 3)
        #expect(c.withUnsafeBytes { output.append($0) } == nil)
        let all = a + b + c
        #expect((output.written, output.pending) == (Int64(2 * block), all.count - 2 * block))
        #expect(fileBytes(output.path) == Array(all.prefix(2 * block)))
        let (fd, tailFailure) = output.handOver()
        #expect(fd >= 0 && tailFailure == nil)
        close(fd)
        #expect(fileBytes(output.path) == all)
        #expect(output.pending == 0)
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
        let (fd, tailFailure) = output.handOver()
        #expect(fd >= 0 && tailFailure == nil && fdatasync(fd) == 0)
        close(fd)
        #expect(output.handOver() == (-1, nil))
        var one: UInt8 = 1
        #expect(withUnsafeBytes(of: &one) { output.append($0) } == Errno(EBADF))
    }

    @Test("Appended in place from 2 MiB-aligned memory at the offset asked (the held tail put in front): the same bytes after every append; another offset or alignment is copied, the same bytes")
    func inPlace() throws {
        let scratch = try DiskScratch()
        let output = try CaptureFileAppender(creating: scratch.path + "/p.pcapng", bufferBytes: 16_384)
        try #require(output.mode == .direct)
        let room = 65_536
        let memory = UnsafeMutableRawPointer.allocate(byteCount: room + 200_000, alignment: 2 << 20)
        defer { memory.deallocate() }
        var expected: [UInt8] = []
        // What the file held after the last `writeTail` (a written tail stays in it).
        var inFile = 0
        for (i, size) in Self.sizes.enumerated() {
            let part = patternBytes(size, seed: i)
            // Every third append misses: one byte further on, or memory off the alignment.
            let wanted = try #require(output.inPlaceOffset)
            #expect(wanted == expected.count % output.blockBytes)
            let base = i % 3 == 2 ? memory + 16 : memory
            let leading = i % 3 == 1 ? wanted + 1 : wanted
            part.withUnsafeBytes { (base + leading).copyMemory(from: $0.baseAddress!, byteCount: size) }
            #expect(output.append(inPlace: base, leading: leading, count: size) == nil)
            #expect(Array(UnsafeRawBufferPointer(start: base + leading, count: size)) == part, "the bytes appended are left as they were")
            expected += part
            let whole = max(inFile, expected.count / output.blockBytes * output.blockBytes)
            #expect(output.end == Int64(expected.count) && output.pending == expected.count - whole, "after append \(i)")
            #expect(fileBytes(output.path) == Array(expected.prefix(whole)), "after append \(i): the whole blocks only")
            if i % 2 == 1 {
                #expect(output.writeTail() == nil)
                #expect(fileBytes(output.path) == expected, "after append \(i) and its tail")
                inFile = expected.count
            }
        }
        #expect(output.mode == .direct)
        let (fd, tailFailure) = output.handOver()
        #expect(fd >= 0 && tailFailure == nil)
        close(fd)
        #expect(fileBytes(output.path) == expected)
        #expect(output.inPlaceOffset == nil, "handed over: nothing in place")
    }

    @Test("Created locked: Recording from the moment its name exists (made unnamed with O_TMPFILE, locked, then linked; on ext4 and on ramfs), 0600, never over a file that exists; unlocked when the appender goes")
    func createdLocked() throws {
        let scratch = try DiskScratch()
        var folders = [scratch.path]
        let mount = ScratchMount(type: "ramfs")
        if let mount { folders.append(mount.path) }
        for folder in folders {
            let path = folder + "/locked.pcapng"
            var output: CaptureFileAppender? = try CaptureFileAppender(creating: path, direct: false)
            #expect(CaptureFolder.isRecording(path), "\(folder)")
            #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o600)
            #expect(throws: Errno(EEXIST)) { try CaptureFileAppender(creating: path, direct: false) }
            #expect(output?.mode == .buffered)
            output = nil
            #expect(!CaptureFolder.isRecording(path), "\(folder)")
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(folders.count == 2 || getuid() != 0)
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
        #expect(output.writeTail() == nil)
        let tooMuch = patternBytes(40_000, seed: 2)
        #expect(tooMuch.withUnsafeBytes { output.append($0) } == Errno(ENOSPC))
        #expect(output.end == 40_003 && output.written == 40_003)
        #expect(fileBytes(output.path) == first)
        let more = patternBytes(5_000, seed: 3)
        #expect(more.withUnsafeBytes { output.append($0) } == nil)
        #expect(output.writeTail() == nil)
        #expect(fileBytes(output.path) == first + more)
        // Held back, not yet written: a failure cuts the file back to what was on disk (whole
        // blocks), and the held tail still reaches it once there is room.
        // (short of the block's end, so no whole block is written: 52 bytes for 512 or 4,096)
        let held = patternBytes(output.blockBytes - 45_003 % output.blockBytes - 1, seed: 4)
        #expect(held.withUnsafeBytes { output.append($0) } == nil)
        #expect(tooMuch.withUnsafeBytes { output.append($0) } == Errno(ENOSPC))
        #expect(output.end == Int64(45_003 + held.count) && output.written == 45_003)
        #expect(fileBytes(output.path) == first + more)
        #expect(output.writeTail() == nil)
        #expect(fileBytes(output.path) == first + more + held)
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
