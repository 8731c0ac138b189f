@testable import Proxy
import FlowTerms
import Testing

/// A GOAWAY with an error code on an inspected HTTP/2 connection (RFC 9113 §6.8, §7): read by
/// `ExchangeReader` from either side, said once; the machine puts it on the flow when nothing
/// else is; NO_ERROR is a graceful end, not an error.
@Suite("HTTP/2 GOAWAY with an error: read, said once, on the flow")
struct HTTP2GoAwayTests {
    typealias T = ExchangeReaderHTTP2Tests

    static func goaway(last: UInt32, code: UInt32, debug: [UInt8] = []) -> [UInt8] {
        T.frame(0x7, 0, 0, [UInt8(last >> 24), UInt8(last >> 16 & 0xff), UInt8(last >> 8 & 0xff), UInt8(last & 0xff),
                            UInt8(code >> 24), UInt8(code >> 16 & 0xff), UInt8(code >> 8 & 0xff), UInt8(code & 0xff)] + debug)
    }

    @Test("the server's FLOW_CONTROL_ERROR after the streams: taken once, the rows unchanged; the first of two is kept")
    func serverGoAway() {
        let p = ExchangePlaybook(http2: true)
        p.feed(T.clientStream, .clientToServer, at: 10)
        let rows = p.feed(T.serverStream + Self.goaway(last: 5, code: 0x3) + Self.goaway(last: 5, code: 0x1), .serverToClient, at: 20)
        #expect(rows.count == 3)
        let said = p.reader.takeGoAway()
        #expect(said == HTTP2GoAway(sentBy: .server, errorCode: 3, lastStreamID: 5, debug: nil))
        #expect(p.reader.takeGoAway() == nil, "said once")
        #expect(said?.phrase == "the server ended HTTP/2 with GOAWAY FLOW_CONTROL_ERROR; streams after 5 went unprocessed (RFC 9113 §6.8)")
        #expect(p.reader.stop == nil)
    }

    @Test("the client's, with debug text; binary debug data is left out; NO_ERROR is none")
    func clientGoAway() {
        let p = ExchangePlaybook(http2: true)
        p.feed(T.preface + T.frame(0x4, 0, 0, []) + Self.goaway(last: 0, code: 0xb, debug: Array("slow down".utf8)), .clientToServer, at: 1)
        let said = p.reader.takeGoAway()
        #expect(said?.phrase == "the client ended HTTP/2 with GOAWAY ENHANCE_YOUR_CALM ('slow down'); it processed no stream (RFC 9113 §6.8)")

        let binary = ExchangePlaybook(http2: true)
        binary.feed(T.frame(0x4, 0, 0, []) + Self.goaway(last: 1, code: 0x2a, debug: [0, 1, 0xff]), .serverToClient, at: 1)
        #expect(binary.reader.takeGoAway()?.phrase == "the server ended HTTP/2 with GOAWAY error 0x2a; streams after 1 went unprocessed (RFC 9113 §6.8)")

        let graceful = ExchangePlaybook(http2: true)
        graceful.feed(T.frame(0x4, 0, 0, []) + Self.goaway(last: 7, code: 0), .serverToClient, at: 1)
        #expect(graceful.reader.takeGoAway() == nil)

        let http1 = ExchangePlaybook()
        http1.client("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: 1)
        #expect(http1.reader.takeGoAway() == nil)
    }
}
