@testable import Proxy
import FlowTerms
import Testing

/// `RequestRowAllowance`: a connection's first rows, then so many a second; the rest counted.
@Suite("Request rows one connection writes")
struct RequestRowAllowanceTests {
    static func record(_ sequence: Int, _ state: ExchangeState = .open) -> ExchangeRecord {
        var r = ExchangeRecord(flowID: 7, sequence: sequence, streamID: Int64(sequence * 2 - 1), httpVersion: "HTTP/2", method: "GET",
                               scheme: "https", authority: "a.test", path: "/", requestTime: 0)
        r.state = state
        return r
    }

    @Test("the standard allowance: 10,000 rows, then 10 for each whole second since the first request")
    func standard() {
        var rows = RequestRowAllowance.standard
        #expect(rows.first == 10_000 && rows.perSecond == 10)
        #expect(rows.allowed(at: 5_000_000) == 10_000)                 // before any request
        #expect(rows.passes(Self.record(1), at: 1_000_000) == true)
        #expect(rows.allowed(at: 1_999_999) == 10_000)
        #expect(rows.allowed(at: 2_000_000) == 10_010)
        #expect(rows.allowed(at: 1_000_000 + 86_400 * 1_000_000) == 874_000)   // a day
        #expect(rows.allowed(at: 0) == 10_000)                          // a clock that stepped back
        var huge = RequestRowAllowance(first: 10, perSecond: Int.max)
        #expect(huge.passes(Self.record(1), at: 0) == true)
        #expect(huge.allowed(at: 2_000_000) == Int.max)                 // no overflow
    }

    @Test("each exchange is decided at its first record, and its later records go the same way; the allowance grows with the seconds")
    func decisions() {
        var rows = RequestRowAllowance(first: 2, perSecond: 1)
        let t0: Int64 = 1_000_000
        #expect(rows.passes(Self.record(1), at: t0) == true)
        #expect(rows.passes(Self.record(1, .complete), at: t0) == true)
        #expect(rows.passes(Self.record(2), at: t0) == true)
        #expect(rows.passes(Self.record(3), at: t0 + 999_999) == false)          // 2 written of 2
        #expect(rows.passes(Self.record(3, .open), at: t0 + 999_999) == false)   // its progress report
        #expect(rows.passes(Self.record(3, .incomplete), at: t0 + 999_999) == false)
        #expect(rows.passes(Self.record(2, .complete), at: t0 + 999_999) == true)
        #expect(rows.passes(Self.record(4), at: t0 + 1_000_000) == true)         // 3 allowed after a second
        #expect(rows.passes(Self.record(5, .complete), at: t0 + 1_500_000) == false)
        #expect(rows.passes(Self.record(6), at: t0 + 1_500_000) == false)
        #expect(rows.passes(Self.record(7), at: t0 + 3_000_000) == true)         // 5 allowed, 3 written
        #expect(rows.passes(Self.record(6, .complete), at: t0 + 3_000_000) == false)
        #expect(rows.passes(Self.record(4, .complete), at: t0 + 3_000_000) == true)
        #expect(rows.written == 4)
        #expect(rows.leftOut == 3)
    }

    /// CVE-2023-44487's shape: HEADERS, then RST_STREAM(CANCEL), stream after stream.
    static var rapidReset: [UInt8] {
        var bytes = ExchangeReaderHTTP2Tests.preface + ExchangeReaderHTTP2Tests.frame(0x4, 0, 0, [])
        for stream in stride(from: UInt32(1), through: 9, by: 2) {
            bytes += ExchangeReaderHTTP2Tests.frame(0x1, 0x5, stream, [0x82, 0x87, 0x84, 0x41, 0x06] + Array("a.test".utf8))
            bytes += ExchangeReaderHTTP2Tests.frame(0x3, 0, stream, [0, 0, 0, 8])
        }
        return bytes
    }

    @Test("a rapid reset of five streams under an allowance of two: two opened and ended (cancelled) rows, three counted")
    func rapidResetThroughTheReader() {
        var settings = ExchangeReader.Settings(flowID: 7, scheme: "https", keepsQuery: false, http2: true)
        settings.requestRows = RequestRowAllowance(first: 2, perSecond: 0)
        let reader = ExchangeReader(settings)
        var emitted: [ExchangeRecord] = []
        Self.rapidReset.withUnsafeBytes { reader.feed($0, .clientToServer, at: 10) { emitted.append($0) } }
        func row(_ sequence: Int, _ state: ExchangeState) -> ExchangeRecord {
            var r = ExchangeRecord(flowID: 7, sequence: sequence, streamID: Int64(sequence * 2 - 1), httpVersion: "HTTP/2", method: "GET",
                                   scheme: "https", authority: "a.test", path: "/", requestTime: 10, requestEndTime: 10)
            r.state = state
            if state != .open { r.endTime = 10 }
            return r
        }
        // Each reset stream waits for the head a server may send anyway (`cancelled` then).
        #expect(emitted == [row(1, .open), row(2, .open)])
        #expect(reader.requestsLeftOut == 3)
        reader.end(at: 20) { emitted.append($0) }
        #expect(emitted == [row(1, .open), row(2, .open), row(1, .cancelled), row(2, .cancelled)])
        #expect(reader.stop == .ended)
    }

    @Test("the flow keeps the count the reader told, and its row says it (nil when none)")
    func machineAndRow() {
        var m = ConnectionMachineTests.machine()
        #expect(m.handle(.requestRowsLeftOut(190_000)) == [])
        #expect(m.facts.requestsLeftOut == 190_000)
    }
}
