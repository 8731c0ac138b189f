import Recording
import Testing
@testable import HTTPReading

/// Whatever the turns hold, reading them ends with messages or a reason — never a trap.
@Suite struct RobustnessTests {
    /// A small deterministic generator (SplitMix64), so failures repeat.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func everyCutOfTheCapturesIsReadOrExplained() {
        for capture in [HTTP2Captures.nghttpThreeStreams, HTTP2Captures.curlTwoPosts] {
            let whole = TurnRecorder.turns(from: capture)
            for index in whole.indices {
                for length in stride(from: 0, through: whole[index].bytes.count, by: 7) {
                    var turns = Array(whole.prefix(index + 1))
                    turns[index].bytes = Array(turns[index].bytes.prefix(length))
                    if case let .conversation(c) = HTTPReader.read(turns) {
                        #expect(c.version == "HTTP/2")
                    }
                }
            }
        }
    }

    @Test func randomFramesAndRandomHTTP1NeverTrap() {
        var random = SplitMix(state: 5)
        for round in 0..<300 {
            var client = round % 2 == 0 ? HTTPReader.http2Preface : Array("GET / HTTP/1.1\r\n".utf8)
            var server: [UInt8] = round % 2 == 0 ? [] : Array("HTTP/1.1 200 OK\r\n".utf8)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let length = Int.random(in: 0...40, using: &random)
                // Frame-like headers with random types, flags and lengths, and random payloads.
                let header: [UInt8] = [0, 0, UInt8(length), UInt8.random(in: 0...10, using: &random),
                                       UInt8.random(in: 0...255, using: &random), 0, 0, 0, UInt8.random(in: 0...5, using: &random)]
                let payload = (0..<Int.random(in: 0...50, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                client += header + payload
                server += payload + header
            }
            let turns = TurnRecorder.turns(from: [Chunk(.clientToServer, at: 0, client), Chunk(.serverToClient, at: 1, server),
                                                  Chunk(.clientToServer, at: 2, Array(client.reversed()))])
            switch HTTPReader.read(turns) {
            case let .conversation(c): _ = c.exchanges.count
            case let .notHTTP(reason): #expect(!reason.isEmpty)
            case .startDeleted: Issue.record("turns from the first are never after a deleted start")
            }
        }
    }
}
