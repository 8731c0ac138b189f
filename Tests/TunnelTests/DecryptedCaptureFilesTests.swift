import Capture
import FlowStore
import FlowTerms
import Foundation
import Synchronization
import Testing
@testable import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture's files as its writer makes them: rotated by size and on request, each
/// whole on its own (its streams reopened with their comments), and on a full disk (a tmpfs the
/// test mounts): the failure said once and counted, the file closed whole, a new file when there
/// is room again ("resumed"), and a stop on the full disk leaving every file whole. capinfos and
/// tshark read every file.
@Suite("DecryptedCapture: rotation, a full disk and the retry, every file whole", .serialized)
struct DecryptedCaptureFilesTests {
    static let start: Int64 = 1_764_620_000_000_000
    static var tools: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") && FileManager.default.isExecutableFile(atPath: "/usr/bin/capinfos") }

    /// What `onHealthChange` heard, in order.
    final class Heard: Sendable {
        let changes = Mutex<[(WriteHealth.Change, DecryptedCaptureCounters)]>([])
        let closed = Atomic<Int>(0)
        var kinds: [WriteHealth.Change] { changes.withLock { $0.map(\.0) } }
    }

    func folder(_ label: String) throws -> String {
        let dir = "/var/tmp/tv-dcap-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func files(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter(DecryptedCapture.isFileName).sorted().map { dir + "/" + $0 }
    }

    /// capinfos' verdict on `path`: nil when it reads the file whole, else what it said.
    func unreadable(_ path: String) -> String? {
        let r = Child.run("/usr/bin/capinfos", ["-c", path], environment: ProcessInfo.processInfo.environment, timeout: 60)
        let said = String(decoding: r.stdout + r.stderr, as: UTF8.self)
        return r.status == 0 && !said.contains("cut short") ? nil : said
    }

    /// `tshark -r path -T fields -e …` rows.
    func fields(_ path: String, _ filter: String, _ names: [String]) throws -> [[String]] {
        let out = try PacketDissectorTests.run(["/usr/bin/tshark", "-r", path, "-Y", filter, "-T", "fields", "-E", "separator=|"] + names.flatMap { ["-e", $0] })
        return out.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    func feed(_ capture: DecryptedCapture, _ flow: UInt64, bytes: Int, _ direction: Direction = .serverToClient, at offset: Int64 = 2_000) {
        let chunk = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var left = bytes
        while left > 0 {
            let n = min(left, chunk.count)
            chunk[0..<n].withUnsafeBytes { capture.record(flow: flow, direction: direction, offsetMicros: offset, bytes: $0) }
            left -= n
        }
    }

    func begin(_ capture: DecryptedCapture, _ flow: UInt64, port: UInt16) {
        capture.inspectedFlowBegan(flow: flow, client: .init(address: "127.0.0.1", port: port), server: .init(address: "127.0.0.1", port: 8443),
                                   startMicros: Self.start)
        Array("GET /big HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8).withUnsafeBytes {
            capture.record(flow: flow, direction: .clientToServer, offsetMicros: 1_000, bytes: $0)
        }
    }

    @Test("rotation by size: files near the limit, each whole and each stream reopened with its comment, every byte in one of them; rotate() closes the file being written; the closed handler hears each")
    func rotationBySizeAndOnRequest() throws {
        let dir = try folder("rotate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let heard = Heard()
        let capture = DecryptedCapture(path: dir + "/" + DecryptedCapture.fileName(startMicros: Self.start),
                                       rotation: CaptureRotation(maximumBytes: 100_000), lingerMillis: 1, directBufferBytes: 16_384)
        capture.setClosedHandler { heard.closed.add(1, ordering: .relaxed) }
        begin(capture, 1, port: 50_001)
        feed(capture, 1, bytes: 350_000)
        capture.flush()
        // A file past the limit closes at once (its next item, or the writer's next turn); the
        // next packet opens one, well under the limit.
        feed(capture, 1, bytes: 1_000)
        capture.flush()
        // On request: the file being written closes, the next opens with the next packet.
        let before = capture.counters.recording
        let (closed, running) = capture.rotate()
        #expect(running && closed != nil && closed == before)
        #expect(capture.counters.recording == nil)
        #expect(capture.rotate().closed == nil)
        feed(capture, 1, bytes: 5_000)
        capture.flowEnded(flow: 1, end: .closedByClient)
        capture.stop()
        let made = files(in: dir)
        let counters = capture.counters
        #expect(counters.filesOpened == made.count && counters.packetsNotSaved == 0 && counters.failedWrites == 0)
        // 356 KB of data in files of at most the limit and one item past it (10 KB chunks of a
        // flow join into segments of up to the MSS, 65,495 bytes).
        #expect(made.count >= 3, "\(made)")
        #expect(heard.closed.load(ordering: .relaxed) == made.count - 1)
        guard Self.tools else {
            Issue.record("tshark and capinfos are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        var server = 0
        for (index, path) in made.enumerated() {
            #expect(unreadable(path) == nil, "\(path): \(unreadable(path) ?? "")")
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size < 100_000 + 70_000, "\(path) is \(size) bytes")
            // Each file's first packet opens flow 1's stream, with its comment (the first file's
            // is its opening; the others' a reopening at the stream's sequence numbers).
            let first = try fields(path, "frame.number == 1", ["frame.comment", "tcp.flags.syn", "tcp.flags.ack"])
            #expect(first == [["tv flow 1", "1", "0"]], "file \(index): \(first)")
            // No gap inside a file: tshark finds no lost segment.
            #expect(try fields(path, "tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment", ["frame.number"]).isEmpty, "file \(index)")
            server += try fields(path, "tcp.srcport == 8443 && tcp.len > 0", ["tcp.len"]).reduce(0) { $0 + (Int($1[0]) ?? 0) }
        }
        #expect(server == 356_000)
    }

    /// A tmpfs of `kilobytes` KiB on `path` (needs root), unmounted at `unmount`.
    struct SmallDisk {
        let path: String
        var filler: String { path + "/filler" }
        init(_ path: String, kilobytes: Int) throws {
            self.path = path
            let r = Child.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0700", "tmpfs", path],
                              environment: ProcessInfo.processInfo.environment, timeout: 30)
            guard r.status == 0 else { throw CancellationError() }
        }
        /// Zeros until the disk is full.
        func fill() {
            _ = Child.run("/bin/dd", ["if=/dev/zero", "of=" + filler, "bs=4096"], environment: ProcessInfo.processInfo.environment, timeout: 30)
        }
        func free() { unlink(filler) }
        func unmount() { _ = Child.run("/bin/umount", ["-l", path], environment: ProcessInfo.processInfo.environment, timeout: 30) }
    }

    @Test("a full disk: said once, counted (packets, bytes, flows), the file closed whole; room again: resumed in a new file that reopens the stream; full at the stop: every file whole",
          .enabled(if: getuid() == 0, "mounts a tmpfs: needs root"))
    func fullDiskRetryAndStop() throws {
        let dir = try folder("full")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let disk = try SmallDisk(dir, kilobytes: 1_024)
        defer { disk.unmount() }
        let heard = Heard()
        // Retried at once (1 ms): the test waits on flushes, never on time.
        let capture = DecryptedCapture(path: dir + "/" + DecryptedCapture.fileName(startMicros: Self.start), lingerMillis: 1,
                                       directBufferBytes: 16_384, retryMillis: (1, 1)) { change, counters in
            heard.changes.withLock { $0.append((change, counters)) }
        }
        begin(capture, 1, port: 50_001)
        capture.flush()
        let first = try #require(files(in: dir).first)
        #expect(capture.counters.recording == (first as NSString).lastPathComponent && heard.kinds.isEmpty)

        disk.fill()
        feed(capture, 1, bytes: 200_000)
        capture.flush()
        var counters = capture.counters
        #expect(heard.kinds == [.startedFailing])
        #expect(counters.failing && counters.recording == nil && counters.failedWrites > 0)
        #expect(counters.packetsNotSaved > 0 && counters.bytesNotSaved > 0 && counters.bytesNotSaved <= 200_000 && counters.flowsNotSaved == 1)
        if case .diskFull(let path)? = counters.lastFailure { #expect(path.hasPrefix(dir + "/decrypted-")) } else {
            Issue.record("not a full disk: \(String(describing: counters.lastFailure))")
        }
        #expect(!CaptureFolder.isRecording(first))
        // More while full: counted, not said again.
        feed(capture, 1, bytes: 50_000)
        capture.flush()
        #expect(heard.kinds == [.startedFailing])
        #expect(capture.counters.bytesNotSaved >= counters.bytesNotSaved + 50_000)

        disk.free()
        feed(capture, 1, bytes: 30_000)
        capture.flush()
        counters = capture.counters
        #expect(heard.kinds == [.startedFailing, .resumed])
        let resumed = try #require(heard.changes.withLock { $0.last?.1 })
        #expect(!resumed.failing && resumed.recording != nil && resumed.flowsNotSaved == 1)
        let made = files(in: dir)
        #expect(made.count == 2, "\(made)")
        let second = try #require(made.first { $0 != first })
        #expect(counters.recording == (second as NSString).lastPathComponent && CaptureFolder.isRecording(second))

        // Full again, and stopped so: the file being written keeps its whole blocks only.
        disk.fill()
        feed(capture, 1, bytes: 3_000)
        capture.stop()
        counters = capture.counters
        #expect(counters.packetsWritten > 0)
        guard Self.tools else {
            Issue.record("tshark and capinfos are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        for path in files(in: dir) { #expect(unreadable(path) == nil, "\(path): \(unreadable(path) ?? "")") }
        // The new file begins with the stream reopened, its comment on the SYN, then its data.
        let opening = try fields(second, "frame.number <= 3", ["frame.comment", "tcp.flags.syn", "tcp.flags.ack"])
        #expect(opening == [["tv flow 1", "1", "0"], ["", "1", "1"], ["", "0", "1"]], "\(opening)")
        #expect(try fields(second, "tcp.len > 0", ["tcp.len"]).count > 0)
    }

    @Test("a stop whose tail cannot be written (the disk filled under the held tail): the file is cut back to its last whole packet, never mid-packet, and what went is counted",
          .enabled(if: getuid() == 0, "mounts a tmpfs: needs root"))
    func stopOnAFullDiskLeavesTheFileWhole() throws {
        let dir = try folder("stop")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let disk = try SmallDisk(dir, kilobytes: 512)
        defer { disk.unmount() }
        // The tail is never due on its own: only the stop would write it.
        let capture = DecryptedCapture(path: dir + "/" + DecryptedCapture.fileName(startMicros: Self.start), lingerMillis: 1,
                                       directBufferBytes: 16_384, tailInterval: 3_600)
        begin(capture, 1, port: 50_001)
        feed(capture, 1, bytes: 30_001)
        capture.queue.flush()  // every batch written; the held tail not (it is never due)
        // Every packet so far is written as whole disk blocks and a held tail (O_DIRECT) or whole
        // (buffered); then the disk fills, and the stop's ends and tail cannot go in.
        disk.fill()
        capture.stop()
        let counters = capture.counters
        let file = try #require(files(in: dir).first)
        guard Self.tools else {
            Issue.record("tshark and capinfos are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        #expect(unreadable(file) == nil, "\(unreadable(file) ?? "")")
        if counters.writeMode == .direct {
            // The held tail (under a disk block) and the ends were lost, and counted.
            #expect(counters.packetsNotSaved > 0 && counters.failedWrites > 0, "\(counters)")
        }
        #expect(CaptureRepair.wholeBlocksEnd(file) == (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int).map(Int64.init))
    }
}
