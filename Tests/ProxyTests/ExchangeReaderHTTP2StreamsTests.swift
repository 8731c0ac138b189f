@testable import Proxy
import FlowTerms
import Testing

/// HTTP/2 through `ExchangeReader` past `Settings.maxOpen`, and malformed requests (RFC 9113
/// §8.2–§8.3), with header blocks from RFC 7541 Appendix C (C.3: requests without Huffman
/// coding, one connection), static-table indexes (Appendix A) and literals without indexing
/// (§6.2.2), frames as RFC 9113 §4.1 lays them out (`ExchangeReaderHTTP2Tests`' helpers).
@Suite("Exchange rows read from HTTP/2: streams past the bound, malformed requests")
struct ExchangeReaderHTTP2StreamsTests {
    typealias H = ExchangeReaderHTTP2Tests
    static let endStream = H.endStream, endHeaders = H.endHeaders

    /// A literal field without indexing, new name (RFC 7541 §6.2.2), no Huffman coding.
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    static func reader(maxOpen: Int = 256) -> ExchangePlaybook {
        ExchangePlaybook(.init(flowID: 7, scheme: "https", keepsQuery: false, http2: true, maxOpen: maxOpen))
    }

    func record(_ sequence: Int, stream: Int64, scheme: String, at time: Int64) -> ExchangeRecord {
        ExchangeRecord(flowID: 7, sequence: sequence, streamID: stream, httpVersion: "HTTP/2", method: "GET", scheme: scheme,
                       authority: "www.example.com", path: "/", requestTime: time)
    }

    @Test("past maxOpen a stream is read without a row and counted, its header block kept in HPACK's step; a stream whose whole response came is let go (complete) to make room; the reading goes on (it stopped: 'More than 256 streams were open at once')")
    func streamsPastTheBound() {
        let p = Self.reader(maxOpen: 2)
        // Streams 1 and 3 open (no END_STREAM); stream 5 (C.3.3, which adds custom-key to the
        // client's table and reads :authority at 63) finds both followed, none answered.
        let opened = p.feed(H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, Self.endHeaders, 1, H.c31)
                            + H.frame(0x1, Self.endHeaders, 3, H.c32) + H.frame(0x1, Self.endHeaders, 5, H.c33), .clientToServer, at: 10)
        #expect(opened == [record(1, stream: 1, scheme: "http", at: 10), record(2, stream: 3, scheme: "http", at: 10)])
        #expect(p.reader.requestsLeftOut == 1)
        #expect(p.reader.stop == nil)
        // The server answers stream 1 whole (:status 200, END_STREAM) while its request goes on.
        #expect(p.feed(H.frame(0x4, 0, 0, []) + H.frame(0x1, Self.endHeaders | Self.endStream, 1, [0x88]), .serverToClient, at: 20) == [])
        // Stream 7 reads :authority at 64 and custom-key at 62: there only if stream 5's block
        // was decoded. Stream 1 is let go to make room for it.
        let seven = p.feed(H.frame(0x1, Self.endHeaders, 7, [0x82, 0x87, 0x84, 0xc0, 0xbe]), .clientToServer, at: 30)
        var first = record(1, stream: 1, scheme: "http", at: 10)
        first.status = 200
        first.responseTime = 20
        first.responseBodyBytes = 0
        first.responseWireBytes = 0
        first.state = .complete
        first.endTime = 30
        #expect(seven == [first, record(3, stream: 7, scheme: "https", at: 30)])
        // Stream 9 finds 3 and 7 followed, neither answered: counted.
        #expect(p.feed(H.frame(0x1, Self.endHeaders, 9, [0x82, 0x87, 0x84, 0xc0]), .clientToServer, at: 40) == [])
        #expect(p.reader.requestsLeftOut == 2)
        // Stream 5's trailers and stream 1's end open nothing (ids at or below the highest
        // opened, RFC 9113 §5.1.1).
        #expect(p.feed(H.frame(0x1, Self.endHeaders | Self.endStream, 5, Self.literal("t", "1"))
                       + H.frame(0x0, Self.endStream, 1, [0x61]), .clientToServer, at: 50) == [])
        // The server's answer to stream 5 adds content-type text/plain to its table (62); stream
        // 3's head reads it from there.
        let answers = H.frame(0x1, Self.endHeaders | Self.endStream, 5, [0x88, 0x40, 0x0c] + Array("content-type".utf8) + [0x0a] + Array("text/plain".utf8))
            + H.frame(0x1, Self.endHeaders | Self.endStream, 3, [0x88, 0xbe])
        #expect(p.feed(answers, .serverToClient, at: 60) == [])
        #expect(p.reader.stop == nil)
        #expect(p.reader.isBetweenExchanges == false)
        var third = record(2, stream: 3, scheme: "http", at: 10)
        third.status = 200
        third.contentType = "text/plain"
        third.responseTime = 60
        third.responseBodyBytes = 0
        third.responseWireBytes = 0
        third.state = .complete
        third.endTime = 70
        var seventh = record(3, stream: 7, scheme: "https", at: 30)
        seventh.state = .incomplete
        seventh.endTime = 70
        #expect(p.end(at: 70) == [third, seventh])
        #expect(p.reader.requestsLeftOut == 2)
    }

    @Test("a stream that ends makes room, and a stream the client reset is let go first: the next stream gets its row")
    func roomAfterAnEnd() {
        let p = Self.reader(maxOpen: 1)
        p.feed(H.preface + H.frame(0x4, 0, 0, []) + H.frame(0x1, Self.endHeaders | Self.endStream, 1, H.c31)
               + H.frame(0x1, Self.endHeaders | Self.endStream, 3, H.c32), .clientToServer, at: 10)
        #expect(p.reader.requestsLeftOut == 1)
        // The client resets stream 1; stream 5 (C.3.3) gets the room.
        let next = p.feed(H.frame(0x3, 0, 1, [0, 0, 0, 8]) + H.frame(0x1, Self.endHeaders | Self.endStream, 5, H.c33), .clientToServer, at: 20)
        #expect(next.map(\.streamID) == [1, 5])
        #expect(next.map(\.state) == [.cancelled, .open])
        #expect(next.map(\.endTime) == [20, nil])
        #expect(next.map(\.sequence) == [1, 2])
        #expect(next.last?.path == "/index.html")
        #expect(p.reader.requestsLeftOut == 1)
    }

    /// :method GET (2), :scheme https (7), :authority a.test, then `fields`.
    static func request(_ fields: [UInt8]) -> [UInt8] {
        [0x82, 0x87] + literal(":authority", "a.test") + fields
    }

    /// The row and the malformation of one request on stream 1, its header block `block`.
    static func read(_ block: [UInt8]) -> (row: ExchangeRecord?, malformed: HTTP2MalformedRequest?) {
        let p = reader()
        let rows = p.feed(H.preface + H.frame(0x1, Self.endHeaders | Self.endStream, 1, block), .clientToServer, at: 1)
        return (rows.first, p.reader.takeMalformedRequest())
    }

    @Test("a repeated :path or :method: the row names the first of each, as tv request and the HAR do (the row named the last), and the flow is told the rule (RFC 9113 §8.3), once")
    func repeatedPseudoHeaders() {
        let (row, malformed) = Self.read(Self.request(Self.literal(":path", "/dup-a") + Self.literal(":path", "/dup-hidden-b")))
        #expect(row?.path == "/dup-a")
        #expect(malformed == HTTP2MalformedRequest(streamID: 1, rule: .repeatedPseudoHeader(":path")))
        #expect(malformed?.phrase == "the client's request on stream 1 was malformed: it repeats :path (RFC 9113 §8.3); tv passed it on as sent"
                + " (it does not take a stream out of an HTTP/2 connection), and the server may have read it otherwise than its row,"
                + " which names the first of each repeated field")
        // :method GET, then POST (literal, name index 2).
        let p = Self.reader()
        let rows = p.feed(H.preface + H.frame(0x1, Self.endHeaders | Self.endStream, 1, Self.request([0x84] + [0x02, 0x04] + Array("POST".utf8)))
                          + H.frame(0x1, Self.endHeaders | Self.endStream, 3, Self.request([0x84, 0x04, 0x02] + Array("/x".utf8))), .clientToServer, at: 1)
        #expect(rows.map(\.method) == ["GET", "GET"])
        #expect(rows.map(\.path) == ["/", "/"])
        #expect(p.reader.takeMalformedRequest() == HTTP2MalformedRequest(streamID: 1, rule: .repeatedPseudoHeader(":method")))
        #expect(p.reader.takeMalformedRequest() == nil)
        #expect(p.reader.stop == nil)
    }

    @Test("each rule of RFC 9113 §8.2–§8.3 a request's header block can break, the first one said; a well-formed request breaks none")
    func rules() {
        let cases: [([UInt8], HTTP2MalformedRequest.Rule?)] = [
            (Self.request([0x84]), nil),
            (Self.request([0x84] + Self.literal("te", "trailers") + Self.literal("host", "A.TEST")), nil),
            (Self.request(Self.literal("x-a", "1") + [0x84]), .pseudoHeaderAfterRegular(":path")),
            (Self.request([0x84] + Self.literal(":foo", "bar")), .undefinedPseudoHeader),
            (Self.request([0x84] + Self.literal(":status", "200")), .undefinedPseudoHeader),
            (Self.request([]), .missingPseudoHeader(":path")),
            ([0x82, 0x84] + Self.literal(":authority", "a.test"), .missingPseudoHeader(":scheme")),
            (Self.request(Self.literal(":path", "noslash")), .invalidPath),
            (Self.request(Self.literal(":path", "/sp ace")), .invalidPath),
            (Self.request(Self.literal(":path", "")), .invalidPath),
            (Self.request([0x84] + Self.literal("X-Upper", "1")), .invalidFieldName),
            (Self.request([0x84] + Self.literal("x-a", "a\r\nx-b: c")), .invalidFieldValue),
            (Self.request([0x84] + Self.literal("x-a", "trailing ")), .invalidFieldValue),
            (Self.request([0x84] + Self.literal("transfer-encoding", "chunked")), .connectionSpecificField("transfer-encoding")),
            (Self.request([0x84] + Self.literal("te", "gzip")), .connectionSpecificField("te")),
            (Self.request([0x84] + Self.literal("host", "evil.example")), .hostDiffersFromAuthority),
            // CONNECT (RFC 9113 §8.5) names only :authority.
            ([0x02, 0x07] + Array("CONNECT".utf8) + Self.literal(":authority", "a.test:443"), nil),
        ]
        for (block, rule) in cases {
            let (row, malformed) = Self.read(block)
            #expect(row != nil)
            #expect(malformed?.rule == rule, "\(block)")
        }
    }
}
