@testable import Proxy
import Testing
import Wire
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// The plain-HTTP machine's two halves on their own: where responses end (RFC 9112 §6.3) and the
/// upstream leg's attempts, with exact values.
@Suite("PlainHTTPResponses and PlainHTTPUpstream")
struct PlainHTTPResponsesTests {
    typealias Reading = PlainHTTPResponses.Reading

    static func read(_ r: inout PlainHTTPResponses, _ text: String) -> Reading {
        Array(text.utf8).withUnsafeBytes { r.read($0) }
    }

    @Test("two pipelined responses in one chunk, the second's head cut: the first passes whole, the cut head is held, then given first")
    func pipelinedWithHeldHead() {
        var r = PlainHTTPResponses()
        r.expect("GET")
        r.expect("GET")
        #expect(r.awaitingHead)
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        #expect(Self.read(&r, first + "HTTP/1.1 204 No") == Reading(passing: first.utf8.count))
        #expect(r.outstanding.map(\.method) == ["GET"])
        #expect(r.awaitingHead)
        #expect(Self.read(&r, " Content\r\n\r\n") == Reading(heldHeadFirst: Array("HTTP/1.1 204 No".utf8), passing: 12))
        #expect(r.isIdle)
    }

    @Test("a HEAD response's Content-Length announces no body; Connection: close is said")
    func headResponseAndClose() {
        var r = PlainHTTPResponses()
        r.expect("HEAD")
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 500\r\nConnection: close\r\n\r\n"
        #expect(Self.read(&r, head) == Reading(passing: head.utf8.count, serverCloses: true))
        #expect(r.isIdle)
    }

    @Test("a 103 then a 200: the informational response does not answer the request")
    func informational() {
        var r = PlainHTTPResponses()
        r.expect("GET")
        let text = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"
        #expect(Self.read(&r, text) == Reading(passing: text.utf8.count))
        #expect(r.outstanding.map(\.method) == ["GET"] && r.body != nil && !r.awaitingHead && r.isUnderWay)
        #expect(Self.read(&r, "0\r\n\r\n") == Reading(passing: 5))
        #expect(r.isIdle && !r.isUnderWay)
    }

    @Test("an unreadable head: the bytes before it pass, reading stops with the reason")
    func unreadableHead() {
        var r = PlainHTTPResponses()
        r.expect("GET")
        r.expect("GET")
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let reading = Self.read(&r, first + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(reading == Reading(passing: first.utf8.count, stop: .headUnreadable(HTTPResponseHeadScanner.lengthAndCoding)))
    }

    @Test("a chunked body that cannot be read on stops reading with its kind: none of its response passes when its head came in the same chunk (held heads too), so tv's 502 can take its place after the response before it; one whose head went on earlier is cut")
    func malformedChunkedBody() {
        var r = PlainHTTPResponses()
        r.expect("GET")
        #expect(Self.read(&r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") == Reading(stop: .bodyRefused(.sizeNotHex(0x7A), headPassed: false)))
        #expect(r.body == nil)
        // After the end of a response in the same chunk: that one passes.
        var two = PlainHTTPResponses()
        two.expect("GET")
        two.expect("GET")
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        #expect(Self.read(&two, first + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000002\r\nab\r\n0\r\n\r\n")
                == Reading(passing: first.utf8.count, stop: .bodyRefused(.sizeTooLarge, headPassed: false)))
        // A head held from an earlier chunk: not passed, not given first.
        var held = PlainHTTPResponses()
        held.expect("GET")
        #expect(Self.read(&held, "HTTP/1.1 200 OK\r\nTransfer-") == Reading())
        #expect(Self.read(&held, "Encoding: chunked\r\n\r\n2g\r\n") == Reading(stop: .bodyRefused(.sizeFollowedBy(0x67), headPassed: false)))
        // The head went on in an earlier chunk: cut.
        var late = PlainHTTPResponses()
        late.expect("GET")
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n"
        #expect(Self.read(&late, head) == Reading(passing: head.utf8.count))
        #expect(Self.read(&late, "-2\r\n") == Reading(stop: .bodyRefused(.sizeNotHex(0x2D), headPassed: true)))
    }

    @Test("valid chunked responses the trial's server sent (a 2 KB extension, a 16-digit size, 50,000 trailer lines) pass whole")
    func validChunkedBodies() {
        for body in ["2;x=" + String(repeating: "e", count: 2_000) + "\r\nok\r\n0\r\n\r\n", "0000000000000002\r\nok\r\n0\r\n\r\n",
                     "2\r\nok\r\n0\r\n" + (0 ..< 50_000).map { "X-T\($0): v\r\n" }.joined() + "\r\n"] {
            var r = PlainHTTPResponses()
            r.expect("GET")
            let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
            #expect(Self.read(&r, text) == Reading(passing: text.utf8.count))
            #expect(r.isIdle)
        }
    }

    @Test("101 to a request that asked for it: the whole chunk passes, nothing more is awaited, and the connection is a tunnel")
    func upgrade() {
        var r = PlainHTTPResponses()
        r.expect("GET", upgrade: "websocket")
        let text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{01}x"
        #expect(Self.read(&r, text) == Reading(passing: text.utf8.count, stop: .upgraded))
        #expect(r.upgraded && r.outstanding.isEmpty && !r.isIdle && !r.awaitingHead)
        #expect(Self.read(&r, "raw") == Reading(passing: 3))
    }

    @Test("a 101 nobody asked for, or with a wrong WebSocket accept, does not pass (the response before it does): tv's 502 in its place; held from an earlier chunk, none of it passes")
    func switchRefused() {
        var r = PlainHTTPResponses()
        r.expect("GET")
        r.expect("GET")
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        #expect(Self.read(&r, ok + "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nGET /smuggled")
                == Reading(passing: ok.utf8.count, stop: .switchRefused(.notAsked)))
        #expect(!r.upgraded)
        var ws = PlainHTTPResponses()
        ws.expect("GET", upgrade: "websocket", webSocketKey: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(Self.read(&ws, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n") == Reading(passing: 0))
        #expect(Self.read(&ws, "Sec-WebSocket-Accept: wrong\r\n\r\n")
                == Reading(passing: 0, stop: .switchRefused(.wrongWebSocketAccept(sent: "wrong", expected: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))))
        #expect(!ws.upgraded)
    }

    @Test("a body delimited by the close ends with the server's FIN; bytes nobody asked for stop reading and none pass, empty lines are let go")
    func untilCloseAndUnasked() {
        var r = PlainHTTPResponses()
        #expect(Self.read(&r, "stray") == Reading(passing: 0, stop: .unasked(bytes: 5)))
        #expect(Self.read(&r, "\r\n") == Reading(passing: 0, dropped: 2))
        r.expect("GET")
        #expect(Self.read(&r, "HTTP/1.0 200 OK\r\n\r\nbody").passing == 23)
        #expect(!r.awaitingHead && r.isUnderWay)
        let ended = r.serverEnded()
        #expect(ended && r.isIdle)
        let again = r.serverEnded()
        #expect(!again)
    }

    @Test("the upstream leg: a stale resolver answer is ignored, addresses are tried in order, the last refusal is kept, a new leg forgets it")
    func upstreamAttempts() {
        let a = SocketAddress(numericHost: "127.0.0.1", port: 1)!
        let b = SocketAddress(numericHost: "::1", port: 1)!
        var u = PlainHTTPUpstream()
        let none = u.nextToTry()
        let closedNothing = u.close()
        #expect(none == nil && !closedNothing)
        u.open(HostPort(host: "example.test", port: 80), numeric: nil, deadline: 5)
        #expect(u.attempt == 1 && u.isOpen && u.connecting && u.connectDeadline == 5 && u.isCurrent(1))
        let stale = u.resolved([a], attempt: 0)
        let beforeAnswer = u.nextToTry()
        #expect(!stale && beforeAnswer == nil)
        let fresh = u.resolved([a, b], attempt: 1)
        let tried1 = u.nextToTry()
        #expect(fresh && tried1 == a)
        u.refused(Errno(ECONNREFUSED))
        let tried2 = u.nextToTry()
        #expect(tried2 == b && u.address == b)
        u.connected()
        #expect(!u.connecting && u.connectDeadline == 0 && u.lastError == Errno(ECONNREFUSED))
        let closed = u.close()
        #expect(closed && !u.isOpen && u.target == nil && !u.isCurrent(1))
        u.open(HostPort(host: "127.0.0.1", port: 8080), numeric: a, deadline: 9)
        #expect(u.attempt == 2 && u.lastError == nil && u.address == nil)
        let only = u.nextToTry()
        let after = u.nextToTry()
        #expect(only == a && after == nil)
    }
}
