import Recording
import Testing
@testable import HTTPReading

/// Recorded heads are read by Wire's HTTP/1 codec in its lenient mode: what can be read
/// unambiguously is read, the rest is said.
@Suite struct HTTP1ReaderLeniencyTests {
    @Test func anEmptyLineAfterABodyIsSkippedAsRFC9112Says() throws {
        let c = try #require(conversation(turns([
            (up, b("POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nok\r\nGET /b HTTP/1.1\r\n\r\n")),
            (down, b("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")),
        ])))
        #expect(c.problems == [])
        #expect(c.exchanges.map { $0.request?.startLine } == ["POST /a HTTP/1.1", "GET /b HTTP/1.1"])
        #expect(c.exchanges[1].request?.headSize == 2 + 19)
    }

    @Test func foldedFieldsAreUnfoldedAndValuesShownAsUTF8() throws {
        let c = try #require(conversation(turns([
            (up, b("GET /caf\u{E9} HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            (down, b("HTTP/1.1 200 OK\r\nX-A: one\r\n\t two\r\nX-Name: caf\u{E9}\r\nContent-Length: 0\r\n\r\n")),
        ])))
        #expect(c.problems == [])
        #expect(c.exchanges[0].request?.startLine == "GET /caf\u{E9} HTTP/1.1")
        #expect(c.exchanges[0].response?.headers == [HTTPHeader("X-A", "one two"), HTTPHeader("X-Name", "caf\u{E9}"),
                                                      HTTPHeader("Content-Length", "0")])
    }

    @Test func aStatusLineWithoutReasonIsShownAsSent() throws {
        let c = try #require(conversation(turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, b("HTTP/1.1 204\r\n\r\n"))])))
        #expect(c.exchanges[0].response?.startLine == "HTTP/1.1 204")
        #expect(c.problems == [])
    }

    @Test func framingThatCannotBeDelimitedIsSaid() throws {
        let c = try #require(conversation(turns([
            (up, b("GET / HTTP/1.1\r\n\r\n")), (down, b("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello")),
        ])))
        #expect(c.exchanges.count == 1 && c.exchanges[0].response == nil)
        #expect(c.problems == [HTTPConversation.ReadingProblem(direction: down, turn: 2,
            reason: "The response has Content-Length values that disagree (5, 6), so its body cannot be delimited (RFC 9112 §6.3).")])
    }

    @Test func aBrokenStatusLineIsSaid() throws {
        let c = try #require(conversation(turns([(up, b("GET / HTTP/1.1\r\n\r\n")), (down, b("HTTP/1.1 OK\r\n\r\n"))])))
        #expect(c.problems.map(\.reason) == [
            "The bytes here are not an HTTP/1 response: the status line is not an HTTP version, a space and a three-digit status code (RFC 9112 §4).",
        ])
    }

    @Test func brokenTrailersAreSaid() throws {
        let c = try #require(conversation(turns([
            (up, b("GET / HTTP/1.1\r\n\r\n")),
            (down, b("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Bad : 1\r\n\r\n")),
        ])))
        #expect(c.exchanges[0].response?.body.transferred == b("ok"))
        #expect(c.problems.map(\.reason) == [
            "The chunked body cannot be read on: a header name is followed by whitespace before its colon, which RFC 9112 §5.1 forbids; reading this side stops here.",
        ])
    }
}
