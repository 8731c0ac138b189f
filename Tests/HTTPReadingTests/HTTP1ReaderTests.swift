import Recording
import Testing
@testable import HTTPReading

@Suite struct HTTP1ReaderTests {
    @Test func keepAliveRequestsPairWithTheirResponses() throws {
        let c = try #require(conversation(turns([
            (up, b("GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            (down, b("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")),
            (up, b("POST /form HTTP/1.1\r\nHost: a.test\r\nContent-Length: 7\r\n\r\nx=1&y=2HEAD /h HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            (down, b("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n")),
            (up, b("DELETE /x HTTP/1.1\r\n\r\n")),
            (down, b("HTTP/1.1 204 No Content\r\n\r\n")),
        ])))
        #expect(c.version == "HTTP/1.1")
        #expect(c.problems == [])
        #expect(c.exchanges.map { $0.request?.startLine } == ["GET /a HTTP/1.1", "POST /form HTTP/1.1", "HEAD /h HTTP/1.1", "DELETE /x HTTP/1.1"])
        #expect(c.exchanges.map { $0.response?.startLine } == ["HTTP/1.1 200 OK", "HTTP/1.1 201 Created", "HTTP/1.1 200 OK", "HTTP/1.1 204 No Content"])
        #expect(c.exchanges[0].response?.body.content == b("hello"))
        #expect(c.exchanges[0].request?.headers == [HTTPHeader("Host", "a.test")])
        #expect(c.exchanges[0].request?.headSize == 33)
        #expect(c.exchanges[1].request?.body.content == b("x=1&y=2"))
        #expect(c.exchanges[1].interim.map(\.startLine) == ["HTTP/1.1 100 Continue"])
        // HEAD: no body although Content-Length says 999 (RFC 9112 §6.3).
        #expect(c.exchanges[2].response?.body == HTTPBody.none)
        #expect(c.exchanges[2].request?.turn == 3)
        #expect(c.exchanges[3].response?.turn == 6)
        #expect(c.exchanges[3].response?.offset == 5_000)
    }

    @Test func chunkedGzipIsDecodedWithTrailers() throws {
        let body = EncodedBodies.gzip
        var chunked = b(String(30, radix: 16) + ";ext=1\r\n") + body.prefix(30) + b("\r\n")
        chunked += b(String(body.count - 30, radix: 16) + "\r\n") + body.dropFirst(30) + b("\r\n0\r\nX-Check: ok\r\n\r\n")
        let head = b("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\nContent-Type: text/plain\r\n\r\n")
        let c = try #require(conversation(turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, head + chunked)])))
        let response = try #require(c.exchanges.first?.response)
        #expect(response.body.framing == "chunked")
        #expect(response.body.transferred == body)
        #expect(response.body.encodings == ["gzip"])
        #expect(response.body.decoded == EncodedBodies.plain)
        #expect(response.body.completeness == .complete)
        #expect(response.trailers == [HTTPHeader("X-Check", "ok")])
    }

    @Test func brotliZstdAndDeflateBodiesAreDecoded() throws {
        for (coding, body) in [("br", EncodedBodies.br), ("zstd", EncodedBodies.zstd), ("deflate", EncodedBodies.deflate)] {
            let head = b("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n\r\n")
            let c = try #require(conversation(turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, head + body)])))
            #expect(c.exchanges.first?.response?.body.content == EncodedBodies.plain, "\(coding)")
        }
    }

    @Test func aBinaryBodyKeepsItsBytes() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x01]
        let c = try #require(conversation(turns([
            (up, b("GET /i.png HTTP/1.1\r\n\r\n")),
            (down, b("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 18\r\n\r\n") + png),
        ])))
        #expect(c.exchanges[0].response?.body.content == png)
    }

    @Test func aResponseWithoutLengthRunsToTheEndOfTheRecording() throws {
        let c = try #require(conversation(turns([(up, b("GET / HTTP/1.0\r\n\r\n")), (down, b("HTTP/1.0 200 OK\r\n\r\nall ")), (down, b("of it"))])))
        #expect(c.version == "HTTP/1.0")
        #expect(c.exchanges[0].response?.body.framing == "until close")
        #expect(c.exchanges[0].response?.body.content == b("all of it"))
        #expect(c.exchanges[0].response?.body.completeness == .complete)
    }

    @Test func aBodyCutByTheBudgetSaysBothFigures() throws {
        let head = b("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")   // 41 bytes: 59 of the body fit in 100
        let read = turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, head + [UInt8](repeating: 0x41, count: 1_000))],
                         budget: RecordingBudget(turnLimit: 100, flowBudget: 1_000))
        let c = try #require(conversation(read))
        let response = try #require(c.exchanges[0].response)
        #expect(response.body.completeness == .cutByBudget(kept: 59, expected: 1_000))
        #expect(response.body.transferred.count == 59)
        #expect(c.problems == [])
    }

    /// The turn limit cuts a turn, not its side: reading resumes at the side's next turn, the
    /// next message (a keep-alive connection's responses after one past 64 KiB were all lost:
    /// trial 42). Chunked, length and until-close bodies each end at the cut.
    @Test func readingResumesAtTheTurnAfterATurnLimitCut() throws {
        let budget = RecordingBudget(turnLimit: 60, flowBudget: 10_000)
        let chunked = b("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")   // 47 bytes
        let read = turns([(up, b("GET /a HTTP/1.1\r\n\r\n")), (down, chunked + b("20\r\n" + String(repeating: "c", count: 32) + "\r\n0\r\n\r\n")),
                          (up, b("POST /b HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + String(repeating: "p", count: 100))),
                          (down, b("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")),
                          (up, b("GET /c HTTP/1.0\r\n\r\n")), (down, b("HTTP/1.0 200 OK\r\n\r\n" + String(repeating: "u", count: 80)))],
                         budget: budget)
        #expect(read.map(\.turn.cutBy) == [nil, .turnLimit, .turnLimit, nil, nil, .turnLimit])
        let c = try #require(conversation(read))
        #expect(c.problems == [])
        #expect(c.exchanges.map { $0.request?.startLine } == ["GET /a HTTP/1.1", "POST /b HTTP/1.1", "GET /c HTTP/1.0"])
        #expect(c.exchanges.map { $0.response?.startLine } == ["HTTP/1.1 200 OK", "HTTP/1.1 201 Created", "HTTP/1.0 200 OK"])
        // 47 head bytes, then "20\r\n" and 9 of the 32 data bytes fit in 60; the POST's head is 41.
        #expect(c.exchanges[0].response?.body.completeness == .cutByBudget(kept: 9, expected: nil))
        #expect(c.exchanges[1].request?.body.completeness == .cutByBudget(kept: 19, expected: 100))
        #expect(c.exchanges[1].response?.body.content == b("ok") && c.exchanges[1].response?.body.completeness == .complete)
        #expect(c.exchanges[2].response?.body.completeness == .cutByBudget(kept: 41, expected: nil))
    }

    @Test func aGzipBodyCutByTheBudgetDecodesItsRecordedPart() throws {
        let body = EncodedBodies.gzip
        let head = b("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n")
        let read = turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, head + body)],
                         budget: RecordingBudget(turnLimit: head.count + 40, flowBudget: 10_000))
        let response = try #require(conversation(read)?.exchanges[0].response)
        #expect(response.body.completeness == .cutByBudget(kept: 40, expected: body.count))
        let decoded = try #require(response.body.decoded)
        #expect(!decoded.isEmpty && EncodedBodies.plain.starts(with: decoded))
        #expect(response.body.decodingNote == "Decoded from gzip as far as it was recorded (\(decoded.count) bytes).")
    }

    @Test func aBadChunkSizeStopsThatSideWithTheReason() throws {
        let c = try #require(conversation(turns([
            (up, b("GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n")),
            (down, b("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\nzz\r\nrest")),
        ])))
        #expect(c.exchanges.count == 2)
        #expect(c.exchanges[0].response?.body.content == b("ok"))
        #expect(c.exchanges[1].response?.body.content == b("abcd"))
        #expect(c.exchanges[1].response?.body.completeness == .endedEarly(kept: 4, expected: nil))
        #expect(c.problems == [HTTPConversation.ReadingProblem(direction: down, turn: 2,
            reason: "The chunked body cannot be read on: a chunk size line starts with byte 0x7a, which is not a hexadecimal digit (RFC 9112 §7.1); reading this side stops here.")])
    }

    @Test func garbageAfterAMessageIsSaid() throws {
        let c = try #require(conversation(turns([(up, b("GET / HTTP/1.1\r\n\r\n\u{1}\u{2}binary\r\n\r\n"))])))
        #expect(c.exchanges.count == 1)
        #expect(c.problems.map(\.reason) == ["The bytes here are not an HTTP/1 request: the stream starts with byte 0x1, which cannot begin an HTTP method (RFC 9112 §3)."])
    }

    @Test func aLostTurnStopsThatSide() throws {
        var read = turns([(up, b("GET /1 HTTP/1.1\r\n\r\n")), (down, b("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")),
                          (up, b("GET /2 HTTP/1.1\r\n\r\n"))])
        read[2].turn.incomplete = true
        let c = try #require(conversation(read))
        #expect(c.exchanges.count == 1)
        #expect(c.problems == [HTTPConversation.ReadingProblem(direction: up, turn: 3,
            reason: "Reading stops here: turn 3 lost bytes while recording (the recording queue was full).")])
    }

    /// A hostile-input trial: the proxy forwarded and recorded these requests, and `tv request`
    /// read their turns as "another protocol".
    @Test("empty lines before the request line (RFC 9112 §2.2) and a method in lower case are read as the live reader reads them")
    func leadingEmptyLinesAndLowerCaseMethods() throws {
        let ok = b("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        for (request, line) in [("\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n", "GET /a HTTP/1.1"),
                                ("\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", "GET /b HTTP/1.1"),
                                ("get /c HTTP/1.1\r\nHost: x\r\n\r\n", "get /c HTTP/1.1")] {
            let c = try #require(conversation(turns([(up, b(request)), (down, ok)])), "\(request)")
            #expect(c.exchanges.count == 1, "\(request)")
            #expect(c.exchanges.first?.request?.startLine == line, "\(request)")
            #expect(c.exchanges.first?.response?.startLine == "HTTP/1.1 200 OK", "\(request)")
        }
        #expect(HTTPReader.looksLikeRequestLine(b("M-SEARCH * HTTP/1.1\r\n")))
        #expect(!HTTPReader.looksLikeRequestLine(b("G\u{1}T / HTTP/1.1\r\n")))
        #expect(!HTTPReader.looksLikeRequestLine(b("\r\n\r\n")))
        #expect(!HTTPReader.looksLikeRequestLine(b(" GET / HTTP/1.1\r\n")))
    }

    @Test func otherProtocolsAreNotHTTP() {
        #expect(HTTPReader.read([]) == .notHTTP(reason: "Nothing was kept of this flow, so there is nothing to read as HTTP."))
        #expect(HTTPReader.read(turns([(down, b("SSH-2.0-OpenSSH_9.2\r\n")), (up, b("SSH-2.0-x\r\n"))]))
                == .notHTTP(reason: "The server spoke first ('SSH-2.0-OpenSSH_…'), which HTTP/1 servers do not do; this is another protocol."))
        #expect(HTTPReader.read(turns([(up, [0x16, 0x03, 0x01, 0x02, 0x00])]))
                == .notHTTP(reason: "The client's first turn starts with the bytes 16 03 01 02 00, which is neither an HTTP/1 request line nor the HTTP/2 preface; this is another protocol."))
    }
}
