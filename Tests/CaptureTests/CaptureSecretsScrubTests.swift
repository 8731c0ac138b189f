import Capture
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `CaptureSecretsScrub` on files laid out as the writer lays them out (SHB, IDB, then DSBs and
/// EPBs): each DSB's secrets become newlines, every other byte and the file's length stay, a
/// cut last block is left alone, a file that is not pcapng is not touched, and one a writer
/// holds locked is refused. tshark reads the result (a real reader, not only ours).
@Suite("capture secrets blanked in place (tv content delete)")
struct CaptureSecretsScrubTests {
    static let line = Array("CLIENT_TRAFFIC_SECRET_0 \(String(repeating: "ab", count: 32)) \(String(repeating: "cd", count: 32))\n".utf8)

    func file(_ bytes: [UInt8]) -> String {
        let path = NSTemporaryDirectory() + "/tv-scrub-\(UUID().uuidString).pcapng"
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    func layout() -> (bytes: [UInt8], packet: [UInt8]) {
        let ip: [UInt8] = [0x45, 0, 0, 20, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]
        let packet = ip.withUnsafeBytes { PcapngBlocks.enhancedPacket(timestampMicros: 1_764_000_000_000_000, packet: $0, originalLength: ip.count) }
        let bytes = PcapngBlocks.sectionHeader() + PcapngBlocks.interfaceDescription(snapLength: 65_535)
            + PcapngBlocks.decryptionSecrets(secrets: Self.line) + packet + PcapngBlocks.decryptionSecrets(secrets: Self.line + Self.line) + packet
        return (bytes, packet)
    }

    @Test("two DSBs blanked, the packets and the length kept; tshark reads two packets and no secrets; a second scrub blanks none")
    func blanksEverySecretKeepingOffsets() throws {
        let (bytes, packet) = layout()
        let path = file(bytes)
        defer { unlink(path) }
        #expect(CaptureSecretsScrub.secretsHeld(path: path) == 2)
        #expect(try CaptureSecretsScrub.scrub(path: path) == 2)
        let after = try #require(FileManager.default.contents(atPath: path).map { Array($0) })
        #expect(after.count == bytes.count)
        // Only the secrets' bytes changed, each to a newline.
        let changed = zip(bytes, after).enumerated().filter { $0.element.0 != $0.element.1 }
        #expect(changed.allSatisfy { $0.element.1 == 0x0A } && changed.count == (Self.line.count * 3 - 3), "\(changed.count)")
        #expect(after.suffix(packet.count).elementsEqual(packet))
        #expect(CaptureSecretsScrub.secretsHeld(path: path) == 0)
        #expect(try CaptureSecretsScrub.scrub(path: path) == 0)
        let read = Child.run("/usr/bin/tshark", ["-r", path, "-T", "fields", "-e", "frame.len"], environment: ProcessInfo.processInfo.environment, timeout: 30)
        #expect(read.status == 0 && String(decoding: read.stdout, as: UTF8.self) == "20\n20\n", "\(read)")
    }

    @Test("a cut last DSB, a file that is not pcapng, and a file a writer holds locked are left alone")
    func leavesWhatItCannotRead() throws {
        let (bytes, _) = layout()
        let headLength = PcapngBlocks.sectionHeader().count + PcapngBlocks.interfaceDescription(snapLength: 65_535).count
        // Cut inside the first DSB: no whole DSB to blank.
        let cut = file(Array(bytes.prefix(headLength + 20)))
        defer { unlink(cut) }
        #expect(CaptureSecretsScrub.secretsHeld(path: cut) == 0)
        #expect(try CaptureSecretsScrub.scrub(path: cut) == 0)
        let other = file(Array("not a capture at all, but CLIENT_TRAFFIC_SECRET_0 lines".utf8))
        defer { unlink(other) }
        #expect(try CaptureSecretsScrub.scrub(path: other) == 0)
        let locked = file(bytes)
        defer { unlink(locked) }
        let fd = open(locked, O_RDONLY)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        #expect(try CaptureSecretsScrub.scrub(path: locked) == nil)
        #expect(CaptureSecretsScrub.secretsHeld(path: locked) == 2)
    }
}
