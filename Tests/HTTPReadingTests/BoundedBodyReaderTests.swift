import Testing
import TVHome
@testable import HTTPReading

/// `BoundedBodyReader` over decompression bombs made by the real tools (issue 12 §1): each body
/// stops at its limit and says so, the command's budget runs out across bodies, and what is
/// streamed is exactly what was measured, in pieces of at most 64 KiB.
@Suite struct BoundedBodyReaderTests {
    static let sixteenMiB = 16 * 1_048_576

    func body(_ bytes: [UInt8], _ coding: String) -> HTTPBody {
        HTTPBody(framing: "content-length", transferred: bytes, encodings: [coding])
    }

    /// Every piece `stream` hands out, checked for size, and their total and whether all are 0.
    func streamed(_ reader: BoundedBodyReader, _ body: HTTPBody, _ reading: BodyReading) -> (count: Int, zeros: Bool, largest: Int) {
        var count = 0
        var zeros = true
        var largest = 0
        reader.stream(body, reading) { piece in
            count += piece.count
            largest = max(largest, piece.count)
            if zeros && piece.contains(where: { $0 != 0 }) { zeros = false }
        }
        return (count, zeros, largest)
    }

    @Test(arguments: ["br", "zstd", "gzip"])
    func aBombStopsAtItsLimitAndSaysSo(coding: String) throws {
        let bomb = try #require(RealTools.bomb(coding, zeros: Self.sixteenMiB), "\(coding) is not installed")
        let reader = BoundedBodyReader()
        let limit = DecodingBudget.standard.limit(kept: bomb.count)
        #expect(limit.rule == .ratio)
        #expect(limit.bytes == max(65_536, bomb.count * 1_000))
        let reading = reader.measure(body(bomb, coding), keeping: 1_024)
        let cut = DecodingCut(limit: limit, codings: [coding], kept: bomb.count, budget: .standard)
        #expect(reading == BodyReading(decoded: true, size: limit.bytes, head: [UInt8](repeating: 0, count: 1_024), printable: false,
                                       cutCharacter: 0, note: cut.sentence, cut: cut))
        // The command is charged for all the decoder produced: the 64 KiB pieces up to the one
        // that crossed the limit — and for br the whole window (here all 16 MiB), which
        // libbrotli decodes before handing anything out.
        let spent = coding == "br" ? Self.sixteenMiB : (limit.bytes / 65_536 + 1) * 65_536
        #expect(reader.budget.spent == spent)
        let out = streamed(reader, body(bomb, coding), reading)
        #expect(out.count == limit.bytes)
        #expect(out.zeros)
        #expect(out.largest == 65_536)
        #expect(reader.budget.spent == spent, "streaming spends nothing more")
    }

    @Test func aBombPastTheBodyCapStopsThere() throws {
        let bomb = try #require(RealTools.bomb("gzip", zeros: 2 * Self.sixteenMiB))
        #expect(bomb.count > 16_778)
        let reader = BoundedBodyReader()
        let reading = reader.measure(body(bomb, "gzip"), keeping: 0)
        #expect(reading.size == 16_777_216)
        #expect(reading.cut?.limit == DecodingLimit(bytes: 16_777_216, rule: .bodyCap))
        #expect(reading.note == "Decoded 16.0 MiB from \(ByteWords.grouped(Int64(bomb.count))) bytes of gzip and stopped: tv decodes a body to at most 16.0 MiB; the decoded body ends there.")
    }

    @Test func theCommandBudgetRunsOutAcrossBodiesAndTheRestIsShownAsTransferred() throws {
        let bomb = try #require(RealTools.bomb("zstd", zeros: Self.sixteenMiB))
        let perBody = bomb.count * 1_000
        let work = (perBody / 65_536 + 1) * 65_536   // the pieces up to the one that crossed the limit
        let budget = DecodingBudget(ratio: 1_000, floor: 65_536, bodyCap: Self.sixteenMiB, commandCap: 2 * work + 20_352)
        let reader = BoundedBodyReader(budget: budget)
        let readings = (0..<4).map { _ in reader.measure(body(bomb, "zstd"), keeping: 0) }
        #expect(readings.map(\.size) == [perBody, perBody, 20_352, bomb.count])
        #expect(readings.map(\.decoded) == [true, true, true, false])
        #expect(readings.map { $0.cut?.limit.rule } == [.ratio, .ratio, .commandBudget, .commandBudget])
        let all = ByteWords.binary(Int64(budget.commandCap))
        #expect(readings[2].note == "Decoded 19.9 KiB from \(bomb.count) bytes of zstd and stopped: this command decodes at most \(all) in all; the decoded body ends there.")
        #expect(readings[3].note == "Not decoded: this command has already decoded \(all), the most it decodes in all; shown: the \(bomb.count) bytes of zstd as transferred (ask for fewer flows or bodies at a time to see it decoded).")
        #expect(reader.budget.spent == 2 * work + 65_536)
        #expect(streamed(reader, body(bomb, "zstd"), readings[3]).count == bomb.count)
    }

    @Test func aBrotliBombIsChargedForTheWindowItDecoded() throws {
        let bomb = try #require(RealTools.bomb("br", zeros: Self.sixteenMiB))
        let reader = BoundedBodyReader()
        let readings = (0..<6).map { _ in reader.measure(body(bomb, "br"), keeping: 0) }
        // Four bodies spend the 64 MiB (16 MiB of work each, 64 KiB shown); the rest are not decoded.
        #expect(readings.map(\.size) == [65_536, 65_536, 65_536, 65_536, bomb.count, bomb.count])
        #expect(readings.map(\.decoded) == [true, true, true, true, false, false])
        #expect(reader.budget.spent == 4 * Self.sixteenMiB)
    }

    @Test func aChainOfCodingsIsHeldToTheLimitToo() throws {
        // gzip applied over a brotli bomb: Content-Encoding: br, gzip.
        let br = try #require(RealTools.bomb("br", zeros: Self.sixteenMiB))
        let gzipOfBr = try #require(RealTools.encode(br, with: "gzip"))
        let reader = BoundedBodyReader()
        let message = HTTPBody(framing: "chunked", transferred: gzipOfBr, encodings: ["br", "gzip"])
        let reading = reader.measure(message, keeping: 0)
        #expect(reading.size == 65_536)
        #expect(reading.cut?.codings == ["br", "gzip"])
        #expect(streamed(reader, message, reading).count == 65_536)
    }

    @Test func aBodyWithoutCodingsIsShownAsTransferredAndSpendsNothing() {
        let reader = BoundedBodyReader()
        let text = b("héllo\nwörld é").dropLast()   // ends inside "é"
        let reading = reader.measure(HTTPBody(framing: "content-length", transferred: Array(text)), keeping: 4)
        #expect(reading == BodyReading(decoded: false, size: 15, head: b("hél"), printable: true,
                                       cutCharacter: 1, note: nil, cut: nil))
        #expect(reader.budget.spent == 0)
    }

    @Test func aSmallBodyDecodesWholeAndIsStreamedFromWhatWasKept() throws {
        let reader = BoundedBodyReader()
        let message = body(EncodedBodies.br, "br")
        let reading = reader.measure(message, keeping: 100)
        #expect(reading.size == 512)
        #expect(reading.head == Array(EncodedBodies.plain.prefix(100)))
        #expect(reading.printable && reading.note == nil && reading.cut == nil)
        var all: [UInt8] = []
        reader.stream(message, reading) { all += $0 }
        #expect(all == EncodedBodies.plain)
        #expect(reader.budget.spent == 512)
    }
}
