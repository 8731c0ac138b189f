import Foundation
import Testing
@testable import Capture

/// `CaptureRecord.read`: one packet's bytes from a pcapng file at its block's offset, on files
/// made by real tools (text2pcap writes the pcapng, editcap -s cuts it to a snap length).
@Suite("CaptureRecord: a packet's bytes at its offset, and each reason there are none")
struct CaptureRecordTests {
    /// curl's HTTP/1.1 request to python3's http.server, captured by tcpdump (the TunnelTests
    /// fixture `CapturedPackets`, "Flags [P.] … seq 1:90"): 141 bytes.
    static let request: [UInt8] = hexBytes(
        "4500008dcfc24000400643100acb09010acb0902e9fe1f90a143fc4a31af8c518018003f14b400000101080aa1b0139d23215bc947455420"
        + "2f696e6465782e68746d6c20485454502f312e310d0a486f73743a2031302e3230332e392e323a383038300d0a557365722d4167656e743a"
        + "206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a")

    static func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = hex.utf8.makeIterator()
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
        while let hi = it.next(), let lo = it.next() { out.append(nibble(hi) << 4 | nibble(lo)) }
        return out
    }

    /// A pcapng of `packets` written by text2pcap (LINKTYPE_RAW), optionally cut by editcap -s.
    struct ToolFile {
        let dir: String
        let path: String
        /// Offsets of the Enhanced Packet Blocks, found by walking the blocks' lengths.
        let offsets: [Int64]

        init(_ packets: [[UInt8]], snapLength: Int? = nil) throws {
            dir = NSTemporaryDirectory() + "tv-record-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            var text = ""
            for bytes in packets {
                for start in stride(from: 0, to: bytes.count, by: 16) {
                    text += String(format: "%06x ", start)
                        + bytes[start..<min(start + 16, bytes.count)].map { String(format: "%02x", $0) }.joined(separator: " ") + "\n"
                }
            }
            try text.write(toFile: dir + "/in.txt", atomically: true, encoding: .utf8)
            try Self.run("/usr/bin/text2pcap", ["-q", "-l", "101", dir + "/in.txt", dir + "/whole.pcapng"])
            if let snapLength {
                try Self.run("/usr/bin/editcap", ["-s", "\(snapLength)", dir + "/whole.pcapng", dir + "/cut.pcapng"])
                path = dir + "/cut.pcapng"
            } else {
                path = dir + "/whole.pcapng"
            }
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            var offsets: [Int64] = []
            var at = 0
            while at + 8 <= file.count {
                let type = file[at..<(at + 4)].reversed().reduce(0) { $0 << 8 | Int($1) }
                let length = file[(at + 4)..<(at + 8)].reversed().reduce(0) { $0 << 8 | Int($1) }
                if type == 6 { offsets.append(Int64(at)) }
                guard length > 0 else { break }
                at += length
            }
            self.offsets = offsets
        }

        func remove() { try? FileManager.default.removeItem(atPath: dir) }

        static func run(_ tool: String, _ arguments: [String]) throws {
            let finished = Child.run(tool, arguments, environment: ProcessInfo.processInfo.environment, timeout: 60)
            guard finished.status == 0, finished.startFailure == nil else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    var toolsPresent: Bool {
        let present = ["/usr/bin/text2pcap", "/usr/bin/editcap"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
        if !present { Issue.record("text2pcap and editcap are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)") }
        return present
    }

    @Test("the record at the row's offset: the packet's bytes exactly, the second packet's too")
    func readsTheRecord() throws {
        guard toolsPresent else { return }
        let second = Array(Self.request.prefix(52))
        let file = try ToolFile([Self.request, second])
        defer { file.remove() }
        #expect(file.offsets.count == 2)
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 65_535, rowOriginalLength: 141) == .bytes(Self.request))
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[1], snapLength: 65_535, rowOriginalLength: 52) == .bytes(second))
    }

    @Test("a record of another length is not this packet: not drawn")
    func otherPacket() throws {
        guard toolsPresent else { return }
        let file = try ToolFile([Self.request])
        defer { file.remove() }
        let record = CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 65_535, rowOriginalLength: 1_500)
        guard case let .notThisPacket(length, micros) = record else { Issue.record("\(record)"); return }
        #expect(length == 141)
        // Of the same length and another time (a file copied over another): not this packet
        // either; at its own time, drawn.
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 65_535, rowOriginalLength: 141, rowTimeMicros: micros + 1)
                == .notThisPacket(recordLength: 141, recordTimeMicros: micros))
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 65_535, rowOriginalLength: 141, rowTimeMicros: micros)
                == .bytes(Self.request))
    }

    @Test("editcap -s 40: the 40 bytes the snap length kept; incl_len past the file's snap length is refused before allocating")
    func snapLength() throws {
        guard toolsPresent else { return }
        let file = try ToolFile([Self.request], snapLength: 40)
        defer { file.remove() }
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 40, rowOriginalLength: 141)
                == .bytes(Array(Self.request.prefix(40))))
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 32, rowOriginalLength: 141)
                == .damaged("the record says it holds 40 bytes, more than the file keeps of a packet (32)"))
    }

    @Test("a record claiming more bytes than its packet had is refused as that, not as past the snap length (a trial's edited file)")
    func includedPastOriginal() {
        var header = [UInt8](repeating: 0, count: CaptureRecord.headerSize)
        func put(_ value: UInt32, at offset: Int) { for i in 0..<4 { header[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) } }
        put(6, at: 0)
        put(UInt32(CaptureRecord.headerSize + 60_000 + 4), at: 4)
        put(60_000, at: 20)
        put(128, at: 24)
        #expect(CaptureRecord.check(header, snapLength: 65_535, rowOriginalLength: 128)
                == .refused(.damaged("the record says it holds 60000 bytes of a packet of 128 (pcapng §4.3: never more than the packet had)")))
        put(70_000, at: 20)
        put(80_000, at: 24)
        #expect(CaptureRecord.check(header, snapLength: 65_535, rowOriginalLength: 80_000)
                == .refused(.damaged("the record says it holds 70000 bytes, more than the file keeps of a packet (65535)")))
    }

    @Test("an offset that is not an EPB, a file cut short, a file that is gone, a folder or a named pipe in its place")
    func failures() throws {
        guard toolsPresent else { return }
        let file = try ToolFile([Self.request])
        defer { file.remove() }
        #expect(CaptureRecord.read(path: file.path, offset: 0, snapLength: 65_535, rowOriginalLength: 141)
                == .damaged("the block at that offset is not an Enhanced Packet Block (pcapng §4.3), type 168627466"))
        #expect(truncate(file.path, off_t(file.offsets[0] + 60)) == 0)
        #expect(CaptureRecord.read(path: file.path, offset: file.offsets[0], snapLength: 65_535, rowOriginalLength: 141)
                == .damaged("the file ends before the record does"))
        #expect(CaptureRecord.read(path: file.dir + "/gone.pcapng", offset: 0, snapLength: 0, rowOriginalLength: 141) == .deleted)
        // Not a regular file in the capture's place: said, never waited on (a named pipe held
        // `tv packet` and `tv captures delete` in open(2) forever: a trial).
        let notAFile = CaptureRecord.Outcome.damaged("it is no longer a regular file (a named pipe, a device or a folder is in its place)")
        #expect(CaptureRecord.read(path: file.dir, offset: 0, snapLength: 0, rowOriginalLength: 141) == notAFile)
        let fifo = file.dir + "/capture-000009.pcapng"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(CaptureRecord.read(path: fifo, offset: 0, snapLength: 0, rowOriginalLength: 141) == notAFile)
        #expect(!CaptureFolder.isRecording(fifo))
        #expect(CaptureRepair.wholeBlocks(fifo) == nil)
    }

    @Test("the header check: the block's length must hold its bytes")
    func blockLength() {
        var header = [UInt8](repeating: 0, count: 28)
        header[0] = 6
        header[4] = 40  // 28 + 40 bytes + 4 would need 72
        header[20] = 40; header[24] = 40
        #expect(CaptureRecord.check(header, snapLength: 0, rowOriginalLength: 40)
                == .refused(.damaged("the block's length 40 cannot hold its 40 bytes (pcapng §3.1)")))
        header[4] = 72
        #expect(CaptureRecord.check(header, snapLength: 0, rowOriginalLength: 40) == .header(.init(includedLength: 40, originalLength: 40)))
        #expect(CaptureRecord.check(Array(header.prefix(20)), snapLength: 0, rowOriginalLength: 40) == .refused(.damaged("the record ends early")))
    }
}
