import Recording
import Testing
import Wire
@testable import HTTPReading

/// The trial's HPACK bomb (a 4,000-byte field in the server's dynamic table, then trailers of
/// one-byte references to it) read within `HeaderListLimits`: what each block, message and
/// reading keeps, what it leaves out, and the sentence that says so.
@Suite("HTTP/2 header blocks read within their limits")
struct HTTP2HeaderLimitTests {
    /// GET / on a.test: :method GET, :path /, :scheme https (static), :authority a.test (literal,
    /// indexed): 42 + 38 + 44 + 48 = 172 bytes by RFC 9113 §6.5.2's measure.
    static let request: [UInt8] = [0x82, 0x84, 0x87, 0x41, 0x06] + b("a.test")
    /// :status 200 (static), then `x-big` with a 4,000-byte value, literal with incremental
    /// indexing (RFC 7541 §6.2.1; the length 4,000 as 7f a1 1e, §5.1): 42 + 4,037 = 4,079.
    static let bigHead: [UInt8] = [0x88, 0x40, 0x05] + b("x-big") + [0x7f, 0xa1, 0x1e] + [UInt8](repeating: 0x42, count: 4_000)

    /// A header block as HEADERS and CONTINUATIONs of at most 16,384 bytes (`endStream` on the HEADERS).
    static func block(_ payload: [UInt8], stream: UInt32 = 1, endStream: Bool) -> [UInt8] {
        let pieces = stride(from: 0, to: max(payload.count, 1), by: 16_384).map { Array(payload[$0..<min($0 + 16_384, payload.count)]) }
        var out: [UInt8] = []
        for (index, piece) in pieces.enumerated() {
            let last: UInt8 = index == pieces.count - 1 ? 0x4 : 0
            out += index == 0 ? frame(1, flags: last | (endStream ? 0x1 : 0), stream: stream, piece) : frame(9, flags: last, stream: stream, piece)
        }
        return out
    }

    /// One exchange: the request, then the server's big head, a DATA, and `trailers` blocks of
    /// that many references to x-big (index 62, `0xbe`), the last ending the stream.
    static func bomb(_ trailers: [Int]) -> [RecordedTurn] {
        var server = frame(4) + block(bigHead, endStream: false) + frame(0, stream: 1, b("body"))
        for (index, references) in trailers.enumerated() {
            server += block([UInt8](repeating: 0xbe, count: references), endStream: index == trailers.count - 1)
        }
        return turns([(up, clientStart + frame(1, flags: 0x5, stream: 1, request)), (down, server)])
    }

    @Test("60,000 references in one trailer block: the first 64 kept (64 × 4,037 fits 262,144), 59,936 counted, said once")
    func blockCap() throws {
        let c = try #require(conversation(Self.bomb([60_000])))
        #expect(c.problems == [])
        let response = try #require(c.exchanges.first?.response)
        #expect(response.headers.map(\.name) == [":status", "x-big"])
        #expect(response.headersLeftOut == nil)
        #expect(response.trailers.count == 64)
        #expect(response.trailers.allSatisfy { $0.name == "x-big" && $0.value.utf8.count == 4_000 })
        let cut = try #require(response.trailersLeftOut)
        #expect(cut == HeaderListCut(rule: .block, limits: .standard, fields: 59_936, bytes: 59_936 * 4_037))
        #expect(cut.sentence(trailers: true) == "59,936 trailer fields (231 MiB) were left out: tv keeps at most 256 KiB of one header block, "
                + "the most Chrome accepts (name and value bytes and 32 a field: SETTINGS_MAX_HEADER_LIST_SIZE, RFC 9113 §6.5.2).")
        #expect(response.body.content == b("body"))
        #expect(c.exchanges.first?.request?.headersLeftOut == nil)
    }

    @Test("two trailer blocks: the second has what the message's first two left (524,288 − 262,447), and its 65th field is cut by the message's limit")
    func messageCap() throws {
        let c = try #require(conversation(Self.bomb([64, 70])))
        let response = try #require(c.exchanges.first?.response)
        #expect(response.trailers.count == 128)
        let cut = try #require(response.trailersLeftOut)
        #expect(cut == HeaderListCut(rule: .message, limits: .standard, fields: 6, bytes: 6 * 4_037))
        #expect(cut.sentence(trailers: true)
                == "6 trailer fields (23.7 KiB) were left out: tv keeps at most 512 KiB of one message's header and trailer fields together.")
    }

    @Test("a reading's room: the trailers find what the connection's earlier blocks left (10,000 − 4,251), and the second reference is cut by it")
    func readingCap() throws {
        let limits = HeaderListLimits(block: 262_144, message: 524_288, reading: 10_000)
        guard case let .conversation(c) = HTTPReader.read(Self.bomb([2]), headerLimits: limits) else { Issue.record("not HTTP"); return }
        let response = try #require(c.exchanges.first?.response)
        #expect(response.headers.count == 2)
        #expect(response.trailers.count == 1)
        let cut = try #require(response.trailersLeftOut)
        #expect(cut == HeaderListCut(rule: .reading, limits: limits, fields: 1, bytes: 4_037))
        #expect(cut.sentence(trailers: true) == "1 trailer field (3.9 KiB) was left out: tv keeps at most 9.8 KiB of one connection's header fields in all"
                + " (`tv turns` shows the bytes as they were sent).")
    }

    @Test("a response head past the block's room keeps its :status and says what it left out; the next block still reads its references")
    func headCap() throws {
        // x-big once, then 69 references to it in the same block: the 65th x-big no longer fits
        // (42 + 64 × 4,037 = 258,410 kept).
        let head = Self.bigHead + [UInt8](repeating: 0xbe, count: 69)
        let server = frame(4) + Self.block(head, endStream: false) + Self.block([0xbe], endStream: true)
        let c = try #require(conversation(turns([(up, clientStart + frame(1, flags: 0x5, stream: 1, Self.request)), (down, server)])))
        let response = try #require(c.exchanges.first?.response)
        #expect(response.startLine == "HTTP/2 200")
        #expect(response.headers.count == 65)
        #expect(response.headersLeftOut == HeaderListCut(rule: .block, limits: .standard, fields: 6, bytes: 6 * 4_037))
        #expect(response.headersLeftOut?.sentence().hasPrefix("6 header fields (23.7 KiB) were left out: ") == true)
        #expect(response.trailers.map(\.name) == ["x-big"])
    }
}
