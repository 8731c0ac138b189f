import FlowStore
import Foundation
import HTTPReading
import Recording
import Testing
@testable import TVCore

/// The streamed views of a body (issue 12 §1) give exactly the lines the whole-body views give,
/// wherever the pieces break; and a bomb's HTTP view says its cut.
@Suite struct BytePreviewTests {
    /// `bytes` through a LineWriter in pieces of `size`.
    func written(_ bytes: [UInt8], pieces size: Int, printable: Bool) -> [String] {
        var out: [String] = []
        var writer = BytePreview.LineWriter(printable: printable, indent: "  ")
        var start = 0
        while start < bytes.count {
            writer.take(Array(bytes[start..<min(start + size, bytes.count)])) { out.append($0) }
            start += size
        }
        writer.finish { out.append($0) }
        return out
    }

    static let samples: [[UInt8]] = [
        Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\nbody with a lone \r in it\nand é, €, 𝄞 split anywhere\n".utf8),
        Array("no line end at all, and a cut €".utf8).dropLast(1).map { $0 },
        Array("\n".utf8),
        Array("two\n\n".utf8),
        (0..<100).map { UInt8($0) },
        [0x89, 0x50, 0x4e, 0x47] + [UInt8](repeating: 0, count: 33),
    ]

    @Test(arguments: [1, 3, 7, 16, 17, 4_096])
    func piecesGiveTheLinesOfTheWhole(size: Int) {
        for bytes in Self.samples {
            let printable = PrintableText.text(bytes) != nil
            #expect(written(bytes, pieces: size, printable: printable) == BytePreview.lines(bytes, full: true), "\(bytes.prefix(20))")
        }
    }

    @Test func theWriterSplitsTextAndDumpsBinaryAsBefore() {
        #expect(written(Array("a\r\nb\rc\n".utf8), pieces: 2, printable: true) == ["  a", "  b␍c"])
        #expect(written(Array(repeating: 0x41, count: 17), pieces: 5, printable: false) == [
            "  00000000  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|",
            "  00000010  41                                                |A|",
        ])
    }

    @Test func aPreviewFromTheHeadIsThePreviewOfTheWhole() {
        let text = Array(String(repeating: "abcdefghi €\n", count: 200).utf8)
        let binary = (0..<1_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        for bytes in [text, binary, Array(text.prefix(10))] {
            let printable = PrintableText.text(bytes) != nil
            #expect(BytePreview.preview(head: Array(bytes.prefix(BytePreview.textCap)), size: bytes.count, printable: printable, indent: "      ")
                == BytePreview.lines(bytes, full: false, indent: "      "))
        }
    }

    /// `Expect: 100-continue`: the request's head in turn 1, the 100 in turn 2, its body in turn
    /// 3; the request names the turns its bytes are in (it said "turn 1": a trial looked there
    /// for the body).
    @Test func aMessageOverSeveralTurnsNamesThemAll() throws {
        let turns = TurnRecorder.turns(from: [
            Chunk(.clientToServer, at: 0, Array("POST /up HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n".utf8)),
            Chunk(.serverToClient, at: 1_000, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)),
            Chunk(.clientToServer, at: 2_000, Array("hello".utf8)),
            Chunk(.serverToClient, at: 3_000, Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)),
        ])
        let lines = HTTPPresentation(flowID: 7, flow: nil, result: HTTPReader.read(turns)).lines()
        #expect(lines.contains("  → client to server  turns 1–3  at 0.000 s"), "\(lines)")
    }

    @Test func aBrotliBombsHTTPViewSaysWhereDecodingStopped() throws {
        let bomb = try #require(RealTools.bomb("br", zeros: 16 * 1_048_576), "brotli is not installed")
        let turns = TurnRecorder.turns(from: [
            Chunk(.clientToServer, at: 0, Array("GET /bomb HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)),
            Chunk(.serverToClient, at: 1_000, Array("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: \(bomb.count)\r\n\r\n".utf8) + bomb),
        ])
        let view = HTTPPresentation(flowID: 7, flow: nil, result: HTTPReader.read(turns))
        let zeros = "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|"
        let sentence = "    Decoded 64.0 KiB from \(bomb.count) bytes of br and stopped: tv decodes a body to at most 1,000 times its kept size (at least 64.0 KiB); the decoded body ends there."
        #expect(Array(view.lines().suffix(19)) == [
            "    body: 65,536 bytes, decoded from br (\(bomb.count) bytes as sent), content-length",
        ] + (0..<16).map { "      000000\(String($0, radix: 16))0  " + zeros } + [
            "      … showing 256 of 65,536 bytes; --full prints all that was kept.",
            sentence,
        ])
        let full = HTTPPresentation(flowID: 7, flow: nil, result: HTTPReader.read(turns), full: true).lines()
        #expect(full.count == 11 + 4_096 + 1)   // title, blank, #1, two heads of 3 and 4 lines, body line; rows; sentence
        #expect(full[full.count - 2] == "      0000fff0  " + zeros)
        #expect(full.last == sentence)
    }
}
