import TVHome
import Testing
@testable import HTTPReading

@Suite struct ContentDecodingTests {
    @Test func decodesEachCodingMadeByTheRealTools() {
        for (coding, body) in [("gzip", EncodedBodies.gzip), ("br", EncodedBodies.br), ("zstd", EncodedBodies.zstd),
                               ("deflate", EncodedBodies.deflate), ("x-gzip", EncodedBodies.gzip)] {
            let (decoded, note) = ContentDecoding.decode(body, codings: [coding], complete: true)
            #expect(decoded == EncodedBodies.plain, "\(coding)")
            #expect(note == nil, "\(coding)")
        }
    }

    @Test func codingsAreUndoneInReverseOrder() throws {
        // gzip applied to the brotli stream: Content-Encoding: br, gzip.
        let codings = ContentDecoding.codings(["br, gzip", "identity"])
        #expect(codings == ["br", "gzip"])
        let gzipOfBr = try #require(RealTools.encode(EncodedBodies.br, with: "gzip"))
        let (decoded, note) = ContentDecoding.decode(gzipOfBr, codings: codings, complete: true)
        #expect(decoded == EncodedBodies.plain)
        #expect(note == nil)
    }

    @Test func aCutStreamDecodesAsFarAsItWasRecorded() {
        let cut = Array(EncodedBodies.gzip.prefix(30))
        let (decoded, note) = ContentDecoding.decode(cut, codings: ["gzip"], complete: false)
        #expect(decoded.map { EncodedBodies.plain.starts(with: $0) } == true)
        #expect(note?.hasPrefix("Decoded from gzip as far as it was recorded (") == true)
        let zstd = ContentDecoding.decode(Array(EncodedBodies.zstd.prefix(40)), codings: ["zstd"], complete: true)
        #expect(zstd.note?.hasPrefix("The zstd stream ends early; ") == true)
        // Counts past a thousand are grouped, as everywhere else (a trial read "85937 bytes").
        let large = Array(repeating: UInt8(ascii: "a"), count: 50_000)
        if let gzip = RealTools.encode(large, with: "gzip") {
            let half = ContentDecoding.decode(Array(gzip.prefix(gzip.count - 8)), codings: ["gzip"], complete: false)
            let n = half.decoded?.count ?? 0
            #expect(n > 1_000 && half.note == "Decoded from gzip as far as it was recorded (\(ByteWords.grouped(Int64(n))) bytes).", "\(half.note ?? "")")
            #expect(half.note?.contains(",") == true)
        } else {
            Issue.record("gzip is needed to make the fixture")
        }
    }

    @Test func garbageAndUnknownCodingsAreSaidNotHidden() {
        let garbage = ContentDecoding.decode(b("not gzip at all"), codings: ["gzip"], complete: true)
        #expect(garbage.decoded == nil)
        #expect(garbage.note == "Could not decode gzip (incorrect header check); the body is shown as transferred.")
        let brotli = ContentDecoding.decode([0xff, 0xff, 0xff, 0xff], codings: ["br"], complete: true)
        #expect(brotli.decoded == nil)
        #expect(brotli.note?.hasPrefix("Could not decode br (brotli: ") == true)
        let unknown = ContentDecoding.decode(b("x"), codings: ["compress"], complete: true)
        #expect(unknown.decoded == nil)
        #expect(unknown.note == "Not decoded: tv does not know the content coding 'compress'; the body is shown as transferred.")
    }
}
