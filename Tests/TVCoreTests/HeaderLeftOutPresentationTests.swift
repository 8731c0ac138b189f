import FlowStore
import FlowTerms
import HTTPReading
import Recording
import Testing
@testable import TVCore

/// HTTP/2 header fields a reading left out past its limits (`HeaderListLimits`) are said where
/// the fields are shown: `tv turns --http` (and `tv request`, which draws messages alike), its
/// JSON (and so `tv web`), and `tv request --curl`'s note.
@Suite("Header fields left out, said in every view")
struct HeaderLeftOutPresentationTests {
    /// One frame on stream 1 (SETTINGS on stream 0), RFC 9113 §4.1.
    static func frame(_ type: UInt8, _ flags: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xff), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags, 0, 0, 0,
         type == 4 ? 0 : 1] + payload
    }

    /// x-big: 4,000 bytes, literal with incremental indexing (index 62 after), then 69 references
    /// to it: the block keeps 64 of the 70 (262,144 by RFC 9113 §6.5.2's measure).
    static let bigFields: [UInt8] = [0x40, 0x05] + Array("x-big".utf8) + [0x7f, 0xa1, 0x1e] + [UInt8](repeating: 0x42, count: 4_000)
        + [UInt8](repeating: 0xbe, count: 69)

    /// A POST whose head carries the bomb, answered 200 with 70 trailer references to the
    /// server's own x-big.
    static var exchange: HTTPExchange? {
        let request: [UInt8] = [0x83, 0x84, 0x87, 0x41, 0x06] + Array("a.test".utf8) + bigFields
        let client = HTTPReader.http2Preface + frame(4, 0, []) + frame(1, 0x5, request)
        let server = frame(4, 0, []) + frame(1, 0x4, [0x88, 0x40, 0x05] + Array("x-big".utf8) + [0x7f, 0xa1, 0x1e] + [UInt8](repeating: 0x42, count: 4_000))
            + frame(1, 0x5, [UInt8](repeating: 0xbe, count: 70))
        let turns = TurnRecorder.turns(from: [Chunk(.clientToServer, at: 0, client), Chunk(.serverToClient, at: 1_000, server)])
        guard case let .conversation(c) = HTTPReader.read(turns) else { return nil }
        return c.exchanges.first
    }

    static let headersSentence = "6 header fields (23.7 KiB) were left out: tv keeps at most 256 KiB of one header block, the most Chrome accepts"
        + " (name and value bytes and 32 a field: SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2)."
    static let trailersSentence = "6 trailer fields (23.7 KiB) were left out: tv keeps at most 256 KiB of one header block, the most Chrome accepts"
        + " (name and value bytes and 32 a field: SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2)."

    @Test("tv turns --http: the sentence under the head's fields, and under the trailers")
    func textView() throws {
        let exchange = try #require(Self.exchange)
        let c = HTTPConversation(version: "HTTP/2", exchanges: [exchange])
        let lines = HTTPPresentation(flowID: 7, flow: nil, result: .conversation(c)).lines()
        let head = try #require(lines.firstIndex(of: "    " + Self.headersSentence))
        #expect(lines[head - 1].hasPrefix("    x-big: BBBB"))
        #expect(lines.filter { $0.hasPrefix("    x-big: ") }.count == 64 + 1)     // the request's, and the response head's one
        #expect(lines.filter { $0.hasPrefix("    trailer x-big: ") }.count == 64)
        #expect(lines.last == "    " + Self.trailersSentence)
    }

    @Test("--http --json: headersLeftOut and trailersLeftOut, the sentence or null")
    func jsonView() throws {
        let exchange = try #require(Self.exchange)
        let http = HTTPPresentation(flowID: 7, flow: nil, result: .conversation(HTTPConversation(version: "HTTP/2", exchanges: [exchange])), full: true)
        var text = ""
        http.writeJSON(reader: BoundedBodyReader()) { text += $0 }
        #expect(text.contains("\"headersLeftOut\": \"\(Self.headersSentence)\""), "\(text.suffix(2_000))")
        #expect(text.contains("\"trailersLeftOut\": null"))
        #expect(text.contains("\"trailersLeftOut\": \"\(Self.trailersSentence)\""))
        #expect(text.contains("\"headersLeftOut\": null"))
    }

    @Test("tv request --curl: the command sends the fields kept, and its note says the rest were left out")
    func curlNote() throws {
        let exchange = try #require(Self.exchange)
        let row = ExchangeRecord(id: 5, flowID: 7, sequence: 1, streamID: 1, httpVersion: "HTTP/2", method: "POST", scheme: "https",
                                 authority: "a.test", path: "/", requestTime: 1)
        let curl = CurlCommand(row, request: exchange.request)
        #expect(curl.note == String(Self.headersSentence.dropLast()) + "; this command sends the ones kept.")
        #expect(curl.command.components(separatedBy: "'x-big: ").count - 1 == 64)
    }
}
