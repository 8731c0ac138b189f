import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 17, the decrypted capture's data path (i24-deccap): a large transfer through `tv run
/// --inspect`, spread over several of the writer's batches, reads back in tshark as the exact
/// plaintext curl got, byte for byte (`tshark -qz follow,tcp,raw`).
@Suite("tv run: a large transfer's decrypted capture reassembles in tshark to the exact bytes curl got (issue 17)", .serialized)
struct DecryptedCaptureFollowRunTests {
    /// `tshark -r FILE -qz follow,tcp,raw,STREAM`: the bytes each side sent, in order (the first
    /// sender's lines start at the margin, the other side's with a tab).
    static func follow(_ box: Sandbox, _ file: String, stream: Int) throws -> (first: [UInt8], second: [UInt8]) {
        let out = try box.tool("tshark", ["-r", file, "-qz", "follow,tcp,raw,\(stream)"], timeout: 60).out
        var first: [UInt8] = [], second: [UInt8] = []
        var inBody = false
        for line in out.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("Node 1:") { inBody = true; continue }
            guard inBody, !line.hasPrefix("====") else { continue }
            let toSecond = line.hasPrefix("\t")
            let hex = Array(line.drop { $0 == "\t" }.utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(hex.count / 2)
            var index = 0
            while index + 1 < hex.count {
                guard let high = Self.nibble(hex[index]), let low = Self.nibble(hex[index + 1]) else { break }
                bytes.append(high << 4 | low)
                index += 2
            }
            if toSecond { second += bytes } else { first += bytes }
        }
        return (first, second)
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    @Test("6 MiB over h1 (more than one writer batch): follow,tcp,raw gives the request and the response head and body exactly as curl got them")
    func largeTransferFollowsExactly() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        let world = try RunWorld()
        let box = world.sandbox
        // Bytes that repeat nowhere within a segment, so a misplaced run would show.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let body = Data((0..<6 << 20).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
        try body.write(to: URL(fileURLWithPath: world.www + "/6m.bin"))
        let set = try box.tv("settings", "set", "capture.decrypted", "on")
        #expect(set.status == 0, "\(set)")
        let tv = try world.run("--inspect")
        // -D without the proxy's own CONNECT reply: the origin's head only, as the flow carried it.
        let got = try world.curlThrough(tv, ["--http1.1", "-s", "--suppress-connect-headers", "-D", box.work + "/head.txt", "-o", box.work + "/body.bin",
                                             "-w", "%{size_download}", world.url("/6m.bin")])
        #expect(got.out == "\(6 << 20)", "\(got)")
        _ = try box.closedFlows(1)
        let log = try tv.stop()
        let folder = box.dataDir + "/captures"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("decrypted-") }
        try #require(names.count == 1, "\(names) \(log)")
        let file = folder + "/" + names[0]

        let (request, response) = try Self.follow(box, file, stream: 0)
        let head = try Data(contentsOf: URL(fileURLWithPath: box.work + "/head.txt"))
        let received = try Data(contentsOf: URL(fileURLWithPath: box.work + "/body.bin"))
        #expect(received == body)
        let expected = [UInt8](head) + [UInt8](body)
        // Compared apart so that a failure names the first differing byte, not 6 MiB of both.
        let firstDifference = (0..<min(response.count, expected.count)).first { response[$0] != expected[$0] }
            ?? min(response.count, expected.count)
        let same = response.count == expected.count && firstDifference == expected.count
        #expect(same, "response \(response.count) bytes, curl got \(head.count) + \(body.count); first difference at \(firstDifference)")
        let requestText = String(decoding: request, as: UTF8.self)
        #expect(requestText.hasPrefix("GET /6m.bin HTTP/1.1\r\n") && requestText.hasSuffix("\r\n\r\n"), "\(requestText)")
    }
}
