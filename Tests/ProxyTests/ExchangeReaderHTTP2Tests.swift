@testable import Proxy
import FlowTerms
import Testing

/// HTTP/2 through `ExchangeReader`, with header blocks from RFC 7541 Appendix C (C.3: requests
/// without Huffman coding, one connection; C.5.1: a response) and static-table indexes
/// (Appendix A); frames laid out as RFC 9113 §4.1 says.
@Suite("Exchange rows read from HTTP/2 on the data path")
struct ExchangeReaderHTTP2Tests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// One frame: length (24 bits), type, flags, stream (RFC 9113 §4.1).
    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xff), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags,
         UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
    }

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    // RFC 7541 C.3.1, C.3.2, C.3.3.
    static let c31 = hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d")
    static let c32 = hex("8286 84be 5808 6e6f 2d63 6163 6865")
    static let c33 = hex("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65")
    // RFC 7541 C.5.1: :status 302, cache-control private, date, location.
    static let c51 = hex("""
        4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e
        1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
        """)
    /// :status 200 (static index 8), then content-type (static name 31) `text/plain`, literal without indexing.
    static let ok200TextPlain: [UInt8] = [0x88, 0x0f, 0x10, 0x0a] + Array("text/plain".utf8)

    static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8

    static var clientStream: [UInt8] {
        preface + frame(0x4, 0, 0, [])
            + frame(0x1, endHeaders | endStream, 1, c31)
            + frame(0x1, endHeaders | endStream, 3, c32)
            // C.3.3 split across HEADERS and CONTINUATION, then a padded DATA of 4 bytes (pad 3).
            + frame(0x1, 0, 5, Array(c33.prefix(5))) + frame(0x9, endHeaders, 5, Array(c33.dropFirst(5)))
            + frame(0x0, padded | endStream, 5, [3] + Array("abcd".utf8) + [0, 0, 0])
    }

    static var serverStream: [UInt8] {
        frame(0x4, 0, 0, [0x00, 0x03, 0x00, 0x00, 0x00, 0x64])
            + frame(0x1, endHeaders, 1, c51) + frame(0x0, endStream, 1, Array("0123456789".utf8))
            + frame(0x1, endHeaders, 3, ok200TextPlain) + frame(0x0, 0, 3, Array("ab".utf8)) + frame(0x0, endStream, 3, Array("c".utf8))
            + frame(0x3, 0, 5, [0, 0, 0, 8])
    }

    /// A request as its HEADERS open it; with END_STREAM there it ends at once (`requestEndTime`).
    func request(_ sequence: Int, stream: Int64, scheme: String, path: String, at time: Int64, ended: Bool = true) -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: sequence, streamID: stream, httpVersion: "HTTP/2", method: "GET", scheme: scheme,
                       authority: "www.example.com", path: path, requestTime: time, requestEndTime: ended ? time : nil)
    }

    @Test("three streams: headers decoded with one inflater per direction, DATA counted without padding, a reset")
    func threeStreams() {
        let p = ExchangePlaybook(http2: true)
        let opened = p.feed(Self.clientStream, .clientToServer, at: 10)
        var third = request(3, stream: 5, scheme: "https", path: "/index.html", at: 10, ended: false)
        #expect(opened == [request(1, stream: 1, scheme: "http", path: "/", at: 10), request(2, stream: 3, scheme: "http", path: "/", at: 10), third])
        let ended = p.feed(Self.serverStream, .serverToClient, at: 20)
        var first = request(1, stream: 1, scheme: "http", path: "/", at: 10)
        first.status = 302
        first.responseBodyBytes = 10
        first.responseWireBytes = 10
        first.responseTime = 20
        first.endTime = 20
        first.state = .complete
        var second = request(2, stream: 3, scheme: "http", path: "/", at: 10)
        second.status = 200
        second.contentType = "text/plain"
        second.responseBodyBytes = 3
        second.responseWireBytes = 3
        second.responseTime = 20
        second.endTime = 20
        second.state = .complete
        third.requestBodyBytes = 4
        third.requestWireBytes = 4
        // Its DATA carried END_STREAM in the client's burst at 10.
        third.requestEndTime = 10
        third.endTime = 20
        third.state = .incomplete
        #expect(ended == [first, second, third])
        #expect(p.end(at: 30) == [])
        #expect(p.reader.stop == .ended)
    }

    @Test("a whole response, then the server's RST_STREAM NO_ERROR while the request body is still coming (RFC 9113 §8.1, nginx after answering a POST): complete; NO_ERROR before the response ends, or CANCEL after it, is incomplete; the client's CANCEL before it ends, or another code, is cancelled")
    func earlyAnswerThenNoError() {
        // POST (static index 3) on stream 1, its body not yet sent.
        let post = Self.preface + Self.frame(0x4, 0, 0, []) + Self.frame(0x1, Self.endHeaders, 1, [0x83, 0x87, 0x84, 0x41, 0x01, 0x61])
        func rows(_ server: [UInt8]) -> ExchangeRecord? {
            let p = ExchangePlaybook(http2: true)
            p.feed(post, .clientToServer, at: 1)
            p.feed(Self.frame(0x0, 0, 1, Array("field".utf8)), .clientToServer, at: 2)
            return p.feed(server, .serverToClient, at: 3).last
        }
        let answered = Self.frame(0x1, Self.endHeaders, 1, Self.ok200TextPlain) + Self.frame(0x0, Self.endStream, 1, Array("ok".utf8))
        let early = rows(answered + Self.frame(0x3, 0, 1, [0, 0, 0, 0]))
        #expect(early?.state == .complete && early?.status == 200 && early?.requestBodyBytes == 5 && early?.responseBodyBytes == 2, "\(String(describing: early))")
        #expect(rows(Self.frame(0x1, Self.endHeaders, 1, Self.ok200TextPlain) + Self.frame(0x3, 0, 1, [0, 0, 0, 0]))?.state == .incomplete)
        #expect(rows(answered + Self.frame(0x3, 0, 1, [0, 0, 0, 8]))?.state == .incomplete)
        // The client's CANCEL of a stream whose whole response it has (curl stopping its upload
        // once nginx's early 413 is in): complete, with the body it sent (a full suite read one
        // "cut"); before the response ended, incomplete.
        func clientReset(_ code: UInt8, after server: [UInt8]) -> ExchangeRecord? {
            let p = ExchangePlaybook(http2: true)
            p.feed(post, .clientToServer, at: 1)
            p.feed(Self.frame(0x0, 0, 1, Array("field".utf8)), .clientToServer, at: 2)
            p.feed(server, .serverToClient, at: 3)
            return p.feed(Self.frame(0x3, 0, 1, [0, 0, 0, code]), .clientToServer, at: 4).last
        }
        let cancelled = clientReset(8, after: answered)
        #expect(cancelled?.state == .complete && cancelled?.status == 200 && cancelled?.requestBodyBytes == 5 && cancelled?.endTime == 4, "\(String(describing: cancelled))")
        // Before it ended, or with another code: the client gave the request up (cancelled).
        #expect(clientReset(8, after: Self.frame(0x1, Self.endHeaders, 1, Self.ok200TextPlain))?.state == .cancelled)
        #expect(clientReset(2, after: answered)?.state == .cancelled)
        // The connection ends after the whole response, the upload unfinished: complete.
        let closed = ExchangePlaybook(http2: true)
        closed.feed(post, .clientToServer, at: 1)
        closed.feed(Self.frame(0x0, 0, 1, Array("field".utf8)), .clientToServer, at: 2)
        closed.feed(answered, .serverToClient, at: 3)
        let atEnd = closed.end(at: 4)
        #expect(atEnd.map(\.state) == [.complete] && atEnd.first?.requestBodyBytes == 5 && atEnd.first?.endTime == 4, "\(atEnd)")
        // The relay writes such a reset apart from the response before it (once), where the
        // burst holds both; one begun in an earlier burst, or another code, is not split at.
        func split(_ bursts: [[UInt8]]) -> [Int?] {
            let p = ExchangePlaybook(http2: true)
            p.feed(post, .clientToServer, at: 1)
            return bursts.map { burst in
                p.feed(burst, .serverToClient, at: 3)
                return p.reader.takeResponseSplit()
            }
        }
        let reset = Self.frame(0x3, 0, 1, [0, 0, 0, 0])
        #expect(split([answered + reset]) == [answered.count])
        #expect(split([answered, reset]) == [nil, nil])
        #expect(split([answered + Array(reset.prefix(4)), Array(reset.dropFirst(4))]) == [nil, nil])
        #expect(split([answered + Self.frame(0x3, 0, 1, [0, 0, 0, 8])]) == [nil])
        let p = ExchangePlaybook(http2: true)
        p.feed(post, .clientToServer, at: 1)
        p.feed(answered + reset, .serverToClient, at: 3)
        #expect(p.reader.takeResponseSplit() == answered.count && p.reader.takeResponseSplit() == nil)
    }

    @Test("a stream the server pushes (PUSH_PROMISE, RFC 9113 §8.4) is an exchange of its own: its request the promise's fields, its response on the promised stream (pushed responses had no row while tv turns --http showed them: a trial)")
    func serverPush() {
        let p = ExchangePlaybook(http2: true)
        p.feed(Self.preface + Self.frame(0x4, 0, 0, []) + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, Self.c31), .clientToServer, at: 10)
        // The promise of stream 2 on stream 1 (C.3.1's fields, in the server's own table), its
        // response, then stream 1's.
        let server = Self.frame(0x4, 0, 0, [])
            + Self.frame(0x5, Self.endHeaders, 1, [0, 0, 0, 2] + Self.c31)
            + Self.frame(0x1, Self.endHeaders, 2, Self.ok200TextPlain) + Self.frame(0x0, Self.endStream, 2, Array("pushed".utf8))
            + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, [0x88])
        let rows = p.feed(server, .serverToClient, at: 20)
        var promised = request(2, stream: 2, scheme: "http", path: "/", at: 20)
        #expect(rows.first == promised)
        promised.status = 200
        promised.contentType = "text/plain"
        promised.responseBodyBytes = 6
        promised.responseWireBytes = 6
        promised.responseTime = 20
        promised.endTime = 20
        promised.state = .complete
        var first = request(1, stream: 1, scheme: "http", path: "/", at: 10)
        first.status = 200
        first.responseBodyBytes = 0
        first.responseWireBytes = 0
        first.responseTime = 20
        first.endTime = 20
        first.state = .complete
        #expect(Array(rows.dropFirst()) == [promised, first])
        // A push the client refuses (RST_STREAM CANCEL) ends cancelled, once the head a server
        // may have sent before it read the reset had its second to come.
        let refused = ExchangePlaybook(http2: true)
        refused.feed(Self.preface + Self.frame(0x4, 0, 0, []) + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, Self.c31), .clientToServer, at: 10)
        refused.feed(Self.frame(0x4, 0, 0, []) + Self.frame(0x5, Self.endHeaders, 1, [0, 0, 0, 2] + Self.c31), .serverToClient, at: 20)
        #expect(refused.feed(Self.frame(0x3, 0, 2, [0, 0, 0, 8]), .clientToServer, at: 30) == [])
        var settled: [ExchangeRecord] = []
        refused.reader.settle(at: 1_000_030) { settled.append($0) }
        #expect(settled.map(\.state) == [.cancelled] && settled.map(\.endTime) == [30])
    }

    /// What was emitted but the open rows told when a response head came before its end (a
    /// split burst tells them; the same stream read whole does not).
    static func finalRows(_ p: ExchangePlaybook) -> [ExchangeRecord] {
        p.emitted.filter { !($0.state == .open && $0.status != nil) }
    }

    @Test("byte by byte: the same rows as whole bursts (besides the open rows told while a response streams)")
    func byteByByte() {
        let whole = ExchangePlaybook(http2: true)
        whole.feed(Self.clientStream, .clientToServer, at: 1)
        whole.feed(Self.serverStream, .serverToClient, at: 1)
        let p = ExchangePlaybook(http2: true)
        for byte in Self.clientStream { p.feed([byte], .clientToServer, at: 1) }
        for byte in Self.serverStream { p.feed([byte], .serverToClient, at: 1) }
        #expect(Self.finalRows(p) == whole.emitted)
        #expect(Self.finalRows(p).count == 6)
        // Each response whose head came before its end was told once while it streamed, with its status.
        #expect(!p.emitted.filter { $0.state == .open && $0.status != nil }.isEmpty)
    }

    @Test("cut in two at every byte: frames read in place and frames gathered give the same rows")
    func everySplit() {
        let whole = ExchangePlaybook(http2: true)
        whole.feed(Self.clientStream, .clientToServer, at: 1)
        whole.feed(Self.serverStream, .serverToClient, at: 1)
        for (stream, direction) in [(Self.clientStream, Direction.clientToServer), (Self.serverStream, .serverToClient)] {
            for cut in 1 ..< stream.count {
                let p = ExchangePlaybook(http2: true)
                if direction == .serverToClient { p.feed(Self.clientStream, .clientToServer, at: 1) }
                p.feed(Array(stream[..<cut]), direction, at: 1)
                p.feed(Array(stream[cut...]), direction, at: 1)
                if direction == .clientToServer { p.feed(Self.serverStream, .serverToClient, at: 1) }
                #expect(Self.finalRows(p) == whole.emitted, "cut at \(cut) of the \(direction == .clientToServer ? "client" : "server")'s bytes")
            }
        }
    }

    @Test("prior knowledge: a client starting with the preface is read as HTTP/2 without ALPN")
    func priorKnowledge() {
        let p = ExchangePlaybook(http2: false, scheme: "http")
        let opened = p.feed(Self.preface + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, Self.c31), .clientToServer, at: 1)
        #expect(opened.map(\.httpVersion) == ["HTTP/2"])
        #expect(opened.map(\.authority) == ["www.example.com"])
    }

    @Test("the query string is content: left out of :path unless kept")
    func queryLeftOut() {
        // :method GET (2), :scheme https (7), :path literal without indexing (name 4) "/s?q=secret".
        let block: [UInt8] = [0x82, 0x87, 0x04, 0x0b] + Array("/s?q=secret".utf8) + [0x01, 0x01, 0x61]
        for keeps in [false, true] {
            let p = ExchangePlaybook(keepsQuery: keeps, http2: true)
            let opened = p.feed(Self.preface + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, block), .clientToServer, at: 1)
            #expect(opened.map(\.path) == [keeps ? "/s?q=secret" : "/s"])
            #expect(opened.map(\.queryRemoved) == [!keeps])
            #expect(opened.map(\.authority) == ["a"])
        }
    }

    @Test("a header block HPACK cannot decode is the client's COMPRESSION_ERROR: refused from its frame on, open streams end incomplete")
    func brokenBlock() {
        let p = ExchangePlaybook(http2: true)
        p.feed(Self.preface + Self.frame(0x1, Self.endHeaders, 1, Self.c31), .clientToServer, at: 1)
        // Index 0 is never valid (RFC 7541 §6.1); the block's frame begins after a PING.
        let ended = p.feed(Self.frame(0x6, 0, 0, [UInt8](repeating: 0, count: 8)) + Self.frame(0x1, Self.endHeaders, 3, [0x80]), .clientToServer, at: 2)
        #expect(ended.map(\.state) == [.incomplete])
        guard case let .refused(refusal) = p.reader.stop, case let .http2ConnectionError(error) = refusal.failure,
              case let .malformed(reason) = error.kind else {
            Issue.record("expected an HTTP/2 connection error, got \(String(describing: p.reader.stop))")
            return
        }
        #expect(reason.hasPrefix("A header block HPACK cannot decode (RFC 7541: "))
        #expect(reason.hasSuffix("; RFC 9113 §4.3)."))
        #expect(refusal.passing == 17)
        #expect(refusal.answer == .goaway(error))
        #expect(error == HTTP2ConnectionError(sentBy: .client, kind: error.kind, errorCode: 0x9, lastClientStream: 1, lastServerStream: 0,
                                              otherSideFramed: true))
    }

    @Test("a frame inside a header block breaks the framing (RFC 9113 §6.10)")
    func interleavedBlock() {
        let p = ExchangePlaybook(http2: true)
        p.feed(Self.preface + Self.frame(0x1, Self.endHeaders, 1, Self.c31), .clientToServer, at: 1)
        p.feed(Self.frame(0x1, 0, 3, Array(Self.c32.prefix(2))) + Self.frame(0x0, 0, 1, [1]), .clientToServer, at: 2)
        // Refused from the header block's first frame: the server never sees half a block.
        let error = HTTP2ConnectionError(sentBy: .client, kind: .malformed("A frame of type 0 came in the middle of a header block, where only CONTINUATION may (RFC 9113 §6.10)."),
                                         errorCode: 0x1, lastClientStream: 1, lastServerStream: 0, otherSideFramed: true)
        #expect(p.reader.stop == .refused(ExchangeRefusal(failure: .http2ConnectionError(error), answer: .goaway(error), passing: 0)))
    }
}

extension ExchangeReaderHTTP2Tests {
    /// The data path keeps of a header block what the readers of kept turns keep
    /// (`HeaderListLimits`: 262,144 a block): a field past it never reaches the row, as it never
    /// reaches `tv request`. An HPACK bomb's references were each copied whole before.
    @Test("a response head past one block's room: its :status is read; a content-type after 64 references to a 4,000-byte field is not")
    func fieldsPastTheBlockRoom() {
        let p = ExchangePlaybook(http2: true)
        p.feed(Self.preface + Self.frame(0x4, 0, 0, []) + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, Self.c31), .clientToServer, at: 1)
        // :status 200; x-big (4,000 bytes) into the table, 69 references to it (42 + 64 × 4,037
        // fit), then content-type text/late (static name 31, literal without indexing).
        let head: [UInt8] = [0x88, 0x40, 0x05] + Array("x-big".utf8) + [0x7f, 0xa1, 0x1e] + [UInt8](repeating: 0x42, count: 4_000)
            + [UInt8](repeating: 0xbe, count: 69) + [0x0f, 0x10, 0x09] + Array("text/late".utf8)
        let rows = p.feed(Self.frame(0x4, 0, 0, []) + Self.frame(0x1, Self.endHeaders | Self.endStream, 1, head), .serverToClient, at: 2)
        #expect(rows.map(\.status) == [200])
        #expect(rows.map(\.contentType) == [nil])
        #expect(rows.map(\.state) == [.complete])
        // Reading goes on with the next block, whole.
        p.feed(Self.frame(0x1, Self.endHeaders | Self.endStream, 3, Self.c32), .clientToServer, at: 3)
        let next = p.feed(Self.frame(0x1, Self.endHeaders | Self.endStream, 3, [0x88, 0x0f, 0x10, 0x0a] + Array("text/plain".utf8)), .serverToClient, at: 4)
        #expect(next.map(\.contentType) == ["text/plain"])
        #expect(p.reader.stop == nil)
    }
}
