import Recording
import Testing
@testable import HTTPReading

/// One HTTP/2 frame's bytes (RFC 9113 §4.1).
func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
    let n = payload.count
    return [UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff), type, flags,
            UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
}

/// The client preface and an empty SETTINGS frame.
let clientStart = HTTPReader.http2Preface + frame(4)

@Suite struct HTTP2ReaderTests {
    @Test func threeConcurrentStreamsFromNghttp() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: HTTP2Captures.nghttpThreeStreams)))
        #expect(c.version == "HTTP/2")
        #expect(c.problems == [])
        #expect(c.exchanges.map(\.streamID) == [13, 15, 17])
        #expect(c.exchanges.map { $0.request?.startLine } == ["GET /index.html HTTP/2", "GET /a.txt HTTP/2", "GET /b.json HTTP/2"])
        #expect(c.exchanges.map { $0.response?.startLine } == ["HTTP/2 200", "HTTP/2 200", "HTTP/2 200"])
        #expect(c.exchanges[0].request?.headers.first(":authority") == "127.0.0.1:18444")
        #expect(c.exchanges[0].request?.headers.first("user-agent") == "nghttp2/1.52.0")
        #expect(c.exchanges[0].response?.body.content == b("Hello over HTTP/2.\n"))
        let lines = (0..<40).map { "line " + String(repeating: "0", count: $0 < 10 ? 2 : 1) + "\($0) of a plain text file\n" }
        #expect(c.exchanges[1].response?.body.content == b(lines.joined()))
        #expect(c.exchanges[1].response?.headers.first("content-length") == "1200")
        #expect(c.exchanges[2].response?.body.content == b("{\"stream\":\"json\",\"ok\":true}\n"))
        #expect(c.exchanges.allSatisfy { $0.response?.body.completeness == .complete && $0.request?.body == HTTPBody.none })
        #expect(c.connectionLines.map { "\($0.direction == up ? "→" : "←") \($0.turn) \($0.text)" } == [
            "← 1 SETTINGS max_concurrent_streams=100",
            "→ 2 SETTINGS max_concurrent_streams=100 initial_window_size=65535",
            "→ 2 PRIORITY stream 3", "→ 2 PRIORITY stream 5", "→ 2 PRIORITY stream 7", "→ 2 PRIORITY stream 9",
            "→ 2 PRIORITY stream 11",
            "← 3 SETTINGS ack",
            "→ 4 GOAWAY last stream 0, NO_ERROR",
        ])
    }

    @Test func twoPostsMultiplexedByCurl() throws {
        let c = try #require(conversation(TurnRecorder.turns(from: HTTP2Captures.curlTwoPosts)))
        #expect(c.problems == [])
        #expect(c.exchanges.map(\.streamID) == [1, 3])
        #expect(c.exchanges.map { $0.request?.startLine } == ["POST /b.json HTTP/2", "POST /index.html HTTP/2"])
        #expect(c.exchanges.map { $0.request?.body.content } == [b("name=tv&mode=inspect"), b("name=tv&mode=inspect")])
        #expect(c.exchanges.map { $0.response?.body.content } == [b("{\"stream\":\"json\",\"ok\":true}\n"), b("Hello over HTTP/2.\n")])
        #expect(c.connectionLines.map(\.text) == [
            "SETTINGS max_concurrent_streams=100 initial_window_size=33554432 enable_push=0",
            "WINDOW_UPDATE connection +33488897",
            "SETTINGS max_concurrent_streams=100",
            "SETTINGS ack",
            "SETTINGS ack",
        ])
    }

    @Test func aBudgetCutInsideAFrameSaysWhere() throws {
        // The server's first turn is its 15-byte SETTINGS: the flow budget leaves 300 for turn 3.
        let read = TurnRecorder.turns(from: HTTP2Captures.nghttpThreeStreams, budget: RecordingBudget(flowBudget: 315))
        #expect(read[2].turn.keptBytes == 300 && read[2].turn.cutBy == .flowBudget)
        let c = try #require(conversation(read))
        #expect(c.problems == [HTTPConversation.ReadingProblem(direction: down, turn: 3,
            reason: "The recording budget stopped this side in turn 3, inside a DATA frame on stream 15 (92 of 1200 payload bytes kept).")])
        #expect(c.exchanges.map { $0.response?.body.completeness } == [
            .complete, .cutByBudget(kept: 92, expected: 1_200), .cutByBudget(kept: 0, expected: 28)])
        // The 92 bytes the cut frame kept are the start of a.txt.
        let aTxt = (0..<4).map { "line 00\($0) of a plain text file\n" }.joined()
        #expect(c.exchanges[1].response?.body.content == Array(b(aTxt).prefix(92)))
    }

    /// The body limit (`HTTP2BodyLimit`, here 300 bytes) shortens a.txt's 1,200-byte body, and
    /// the stream after it in the same turn (b.json) is read whole: no side stops.
    @Test func aBodyPastTheLimitIsCutAndTheStreamsAfterItAreRead() throws {
        let read = TurnRecorder.turns(from: HTTP2Captures.nghttpThreeStreams, budget: RecordingBudget(turnLimit: 300))
        #expect(read.allSatisfy { !$0.turn.truncated })
        #expect(read[2].turn.bodiesShortened && read[2].turn.seenBytes - read[2].turn.keptBytes == 900)
        let c = try #require(conversation(read))
        #expect(c.problems == [])
        #expect(c.exchanges.map { $0.response?.body.completeness } == [.complete, .cutByBudget(kept: 300, expected: 1_200), .complete])
        let lines = (0..<40).map { "line " + String(repeating: "0", count: $0 < 10 ? 2 : 1) + "\($0) of a plain text file\n" }
        #expect(c.exchanges[1].response?.body.content == Array(b(lines.joined()).prefix(300)))
        #expect(c.exchanges[2].response?.body.content == b("{\"stream\":\"json\",\"ok\":true}\n"))
    }

    @Test func aTruncatedFrameFallsBackWithTheReason() throws {
        var read = TurnRecorder.turns(from: HTTP2Captures.curlTwoPosts)
        read[1].bytes.removeLast(5)
        let c = try #require(conversation(read))
        #expect(c.problems.map(\.direction) == [down])
        #expect(c.problems[0].reason.hasPrefix("The recording of this side ends inside a DATA frame on stream 3 ("))
        #expect(c.problems[0].reason.hasSuffix(" payload bytes): the frame is truncated."))
        #expect(c.exchanges[1].response?.body.completeness == .endedEarly(kept: 14, expected: 19))
        #expect(c.exchanges[1].response?.body.content == b("Hello over HTT"))
    }

    @Test func badHPACKStopsThatSideAndSaysWhy() throws {
        let client = clientStart + frame(1, flags: 0x5, stream: 1, [0x80]) + frame(1, flags: 0x5, stream: 3, [0x82, 0x86, 0x84])
        let c = try #require(conversation(turns([(up, client)])))
        #expect(c.exchanges.isEmpty)
        #expect(c.problems == [HTTPConversation.ReadingProblem(direction: up, turn: 1,
            reason: "The header block on stream 1 cannot be decoded (HPACK: Header compression/decompression error); this side cannot be read on, because each block depends on the ones before it.")])
    }

    @Test func headerBlocksSpanContinuationFramesAndTurns() throws {
        let c = try #require(conversation(turns([
            (up, clientStart + frame(1, flags: 0x1, stream: 1, [0x82, 0x86])),
            (down, frame(4)),
            (up, frame(9, flags: 0x4, stream: 1, [0x84])),
            (down, frame(1, flags: 0x4, stream: 1, [0x88]) + frame(0, flags: 0x9, stream: 1, [2, 0x68, 0x69, 0, 0])),
        ])))
        #expect(c.problems == [])
        #expect(c.exchanges.first?.request?.headers == [HTTPHeader(":method", "GET"), HTTPHeader(":scheme", "http"), HTTPHeader(":path", "/")])
        #expect(c.exchanges.first?.request?.startLine == "GET / HTTP/2")
        #expect(c.exchanges.first?.request?.turn == 1)
        #expect(c.exchanges.first?.response?.startLine == "HTTP/2 200")
        #expect(c.exchanges.first?.response?.body.content == b("hi"))   // padding removed
    }

    @Test func connectionFramesAreOneLineEachAndResetsEndStreams() throws {
        let c = try #require(conversation(turns([
            (up, clientStart + frame(1, flags: 0x4, stream: 1, [0x82, 0x86, 0x84]) + frame(6, [1, 2, 3, 4, 5, 6, 7, 8])),
            (down, frame(6, flags: 1, [1, 2, 3, 4, 5, 6, 7, 8]) + frame(8, stream: 1, [0, 0, 0x10, 0]) + frame(3, stream: 1, [0, 0, 0, 8])
                + frame(7, [0, 0, 0, 1, 0, 0, 0, 0xb] + b("slow down")) + frame(0xa, stream: 0, [1, 2])),
        ])))
        #expect(c.connectionLines.map(\.text) == [
            "SETTINGS (no parameters)", "PING 0102030405060708", "PING ack 0102030405060708", "WINDOW_UPDATE stream 1 +4096",
            "RST_STREAM stream 1 CANCEL", "GOAWAY last stream 1, ENHANCE_YOUR_CALM, debug 'slow down'",
            "unknown frame type 0xa on stream 0, 2 bytes (ignored, RFC 9113 §5.5)",
        ])
        #expect(c.exchanges.first?.resetBy == "CANCEL")
        #expect(c.exchanges.first?.request?.body == HTTPBody(framing: "DATA frames", completeness: .reset(errorCode: "CANCEL")))
    }

    @Test func malformedFramesStopTheirSideWithAReason() throws {
        let cases: [([UInt8], String)] = [
            (frame(4, [0, 1, 0, 0, 0]), "A SETTINGS frame of 5 bytes on stream 0 is malformed (RFC 9113 §6.5: stream 0, a multiple of 6 bytes); this side cannot be read on."),
            (frame(1, stream: 1, [0x82]) + frame(0, stream: 1, [1]), "A header block on stream 1 is followed by DATA instead of CONTINUATION (RFC 9113 §6.10); this side cannot be read on."),
            (frame(0, flags: 0x8, stream: 1, [9, 1]), "A padded DATA frame on stream 1 has more padding than payload (RFC 9113 §6.1); this side cannot be read on."),
            (frame(8, [0, 1]), "A WINDOW_UPDATE frame of 2 bytes is malformed (RFC 9113 §6.9: 4 bytes); this side cannot be read on."),
            (frame(9, flags: 0x4, stream: 1, [0x82]), "A CONTINUATION frame on stream 1 follows no header block (RFC 9113 §6.10); this side cannot be read on."),
        ]
        for (bytes, reason) in cases {
            let c = try #require(conversation(turns([(up, clientStart + bytes)])))
            #expect(c.problems.map(\.reason) == [reason])
        }
        // A preface that starts right in one turn and goes wrong in the next.
        let c = try #require(conversation(turns([(up, Array(HTTPReader.http2Preface.prefix(10))), (down, frame(4)),
                                                 (up, b("garbage that is long enough"))])))
        #expect(c.problems.map(\.reason) == ["The client side does not start with the HTTP/2 connection preface (RFC 9113 §3.4)."])
    }
}

extension HTTP2ReaderTests {
    /// A 103 Early Hints before the 200 (RFC 8297; RFC 9113 §8.1: HEADERS alone, no END_STREAM):
    /// complete, with no body (it read "body: 0 bytes, DATA frames" and "the recording ends before
    /// the body does": a trial).
    @Test func earlyHintsHaveNoBody() throws {
        let request: [UInt8] = [0x82, 0x84, 0x87, 0x41, 0x06] + b("a.test")
        let hints: [UInt8] = [0x08, 0x03] + b("103") + [0x00, 0x04] + b("link") + [0x08] + b("</a.css>")
        let c = try #require(conversation(TurnRecorder.turns(from: [
            Chunk(up, at: 0, clientStart + frame(1, flags: 0x5, stream: 1, request)),
            Chunk(down, at: 10, frame(4) + frame(1, flags: 0x4, stream: 1, hints) + frame(1, flags: 0x4, stream: 1, [0x88])
                  + frame(0, flags: 0x1, stream: 1, b("ok"))),
        ])))
        let exchange = try #require(c.exchanges.first)
        #expect(exchange.interim.map(\.startLine) == ["HTTP/2 103"])
        #expect(exchange.interim.first?.headers.first("link") == "</a.css>")
        #expect(exchange.interim.first?.body == HTTPBody.none)
        #expect(exchange.response?.startLine == "HTTP/2 200" && exchange.response?.body.content == b("ok"))
        #expect(exchange.response?.body.completeness == .complete)
    }
}
