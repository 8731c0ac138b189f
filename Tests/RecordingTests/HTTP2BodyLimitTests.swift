import FlowTerms
import Testing
@testable import Recording

/// One HTTP/2 frame's bytes, laid out as RFC 9113 §4.1 draws it: length (24 bits), type, flags,
/// the reserved bit and a 31-bit stream id, then the payload.
private func h2frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
    let n = payload.count
    return [UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff), type, flags,
            UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff), UInt8(stream & 0xff)] + payload
}

/// A frame head as tv writes it for a shortened DATA frame (§6.1's type 0x0).
private func dataHead(length: Int, flags: UInt8, stream: UInt32) -> [UInt8] {
    Array(h2frame(0x00, flags: flags, stream: stream, []).dropFirst(3)).withLength(length)
}

private extension Array where Element == UInt8 {
    /// A head's 6 bytes after the length, with the 24-bit length put before them.
    func withLength(_ length: Int) -> [UInt8] { [UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + self }
}

private let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
private let data: UInt8 = 0x0, headers: UInt8 = 0x1, rstStream: UInt8 = 0x3, settings: UInt8 = 0x4
private let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4, padded: UInt8 = 0x8

/// The bytes `limit` keeps of `read`, going `direction`.
private func kept(_ limit: inout HTTP2BodyLimit, _ read: [UInt8], _ direction: Direction = .serverToClient) -> [UInt8] {
    var out: [UInt8] = [0xEE]  // what `out` held before: replaced when the read changes
    let changed = read.withUnsafeBytes { limit.cut($0, direction, into: &out) }
    return changed ? out : read
}

@Suite struct HTTP2BodyLimitTests {
    @Test func framesWithinTheLimitAreKeptAsTheyAreWithoutACopy() {
        var limit = HTTP2BodyLimit(limit: 10)
        let read = preface + h2frame(settings) + h2frame(headers, flags: endHeaders | endStream, stream: 1, [0x82])
        var out: [UInt8] = [0xEE]
        #expect(!read.withUnsafeBytes { limit.cut($0, .clientToServer, into: &out) })
        #expect(out == [0xEE])
        let body = h2frame(headers, flags: endHeaders, stream: 1, [0x88]) + h2frame(data, stream: 1, bytes(6)) + h2frame(data, flags: endStream, stream: 1, bytes(4))
        #expect(!body.withUnsafeBytes { limit.cut($0, .serverToClient, into: &out) })
    }

    @Test func aBodyKeepsItsFirstBytesAndTheStreamsEndStaysMarked() {
        var limit = HTTP2BodyLimit(limit: 10)
        let head = h2frame(headers, flags: endHeaders, stream: 1, [0x88])
        // 6 bytes, then 8 of which 4 fit, then 5 that do not fit at all, then the end.
        let read = head + h2frame(data, stream: 1, bytes(6, 0x61)) + h2frame(data, stream: 1, bytes(8, 0x62))
            + h2frame(data, stream: 1, bytes(5, 0x63)) + h2frame(data, flags: endStream, stream: 1, bytes(3, 0x64))
        #expect(kept(&limit, read) == head + h2frame(data, stream: 1, bytes(6, 0x61))
                + dataHead(length: 4, flags: 0x80, stream: 1) + bytes(4, 0x62)
                + dataHead(length: 0, flags: 0x80 | endStream, stream: 1))
    }

    @Test func otherStreamsGoOnWhileOneIsAtItsLimit() {
        var limit = HTTP2BodyLimit(limit: 4)
        let read = h2frame(data, stream: 1, bytes(9, 0x61)) + h2frame(data, flags: endStream, stream: 3, bytes(4, 0x62))
            + h2frame(data, stream: 1, bytes(2, 0x63)) + h2frame(data, flags: endStream, stream: 5, bytes(2, 0x64))
        #expect(kept(&limit, read) == dataHead(length: 4, flags: 0x80, stream: 1) + bytes(4, 0x61)
                + h2frame(data, flags: endStream, stream: 3, bytes(4, 0x62))
                + h2frame(data, flags: endStream, stream: 5, bytes(2, 0x64)))
        // Each direction counts its own bodies: the client's stream 1 starts at 0.
        var client = HTTP2BodyLimit(limit: 4)
        _ = kept(&client, preface, .clientToServer)
        #expect(kept(&client, h2frame(data, flags: endStream, stream: 1, bytes(4)), .clientToServer) == h2frame(data, flags: endStream, stream: 1, bytes(4)))
    }

    @Test func aPaddedFrameLosesItsPaddingWhenItIsShortened() {
        var limit = HTTP2BodyLimit(limit: 5)
        // Pad length 3: 1 + 7 data + 3 padding = 11 payload bytes (§6.1).
        let payload = [UInt8(3)] + bytes(7, 0x61) + [0, 0, 0]
        #expect(kept(&limit, h2frame(data, flags: padded | endStream, stream: 7, payload))
                == dataHead(length: 5, flags: 0x80 | endStream, stream: 7) + bytes(5, 0x61))
        // Data that fits once the padding is gone is kept whole, unmarked.
        var roomy = HTTP2BodyLimit(limit: 8)
        #expect(kept(&roomy, h2frame(data, flags: padded, stream: 7, payload)) == dataHead(length: 7, flags: 0, stream: 7) + bytes(7, 0x61))
    }

    @Test func payloadsAcrossReadsAreCutWhereTheLimitFalls() {
        var limit = HTTP2BodyLimit(limit: 10)
        let frame = h2frame(data, stream: 1, bytes(30, 0x61))
        // The head and 4 payload bytes, then 12, then the last 14.
        #expect(kept(&limit, Array(frame[0..<13])) == dataHead(length: 10, flags: 0x80, stream: 1) + bytes(4, 0x61))
        #expect(kept(&limit, Array(frame[13..<25])) == bytes(6, 0x61))
        #expect(kept(&limit, Array(frame[25...]) + h2frame(settings)) == h2frame(settings))
    }

    @Test func aHeadSplitBetweenReadsIsKeptWhole() {
        var limit = HTTP2BodyLimit(limit: 4)
        let frame = h2frame(data, stream: 1, bytes(8))
        #expect(kept(&limit, Array(frame[0..<5])) == Array(frame[0..<5]))
        #expect(kept(&limit, Array(frame[5...])) == Array(frame[5...]))
        // The stream is then past its limit: its next DATA keeps nothing.
        #expect(kept(&limit, h2frame(data, stream: 1, bytes(2)) + h2frame(settings)) == h2frame(settings))
    }

    @Test func aPeerOpeningStreamsWithoutEndCannotGrowTheCount() {
        var limit = HTTP2BodyLimit(limit: 4)
        var read: [UInt8] = []
        for stream in 0..<HTTP2BodyLimit.maxTrackedStreams { read += h2frame(data, stream: UInt32(2 * stream + 1), [0x61]) }
        #expect(kept(&limit, read) == read)
        // Stream 8193 is past the tracked streams: its DATA is left out; an ended one keeps its mark.
        #expect(kept(&limit, h2frame(data, stream: 8_193, [0x62]) + h2frame(data, flags: endStream, stream: 8_195, [0x63]))
                == dataHead(length: 0, flags: 0x80 | endStream, stream: 8_195))
        // RST_STREAM and an ended stream free their counts: stream 1 is forgotten, 8,197 fits.
        _ = kept(&limit, h2frame(rstStream, stream: 1, [0, 0, 0, 8]))
        #expect(kept(&limit, h2frame(data, stream: 8_197, [0x64])) == h2frame(data, stream: 8_197, [0x64]))
    }
}

@Suite struct RecordingCutTests {
    /// Chunks through a `RecordingCut`: each turn's figures and kept bytes.
    private func turns(_ chunks: [Chunk], budget: RecordingBudget) -> [RecordedTurn] {
        RecordingCut.turns(from: chunks, budget: budget)
    }

    @Test func anHTTP2TurnIsNotCutAndItsSideGoesOn() {
        let budget = RecordingBudget(turnLimit: 16, flowBudget: 1_000)
        let request = preface + h2frame(settings) + h2frame(headers, flags: endHeaders | endStream, stream: 1, [0x82])
        let server = h2frame(settings) + h2frame(headers, flags: endHeaders, stream: 1, [0x88]) + h2frame(data, stream: 1, bytes(20))
            + h2frame(data, flags: endStream, stream: 1, bytes(20))
        let later = h2frame(headers, flags: endHeaders | endStream, stream: 3, [0x82])
        let read = turns([Chunk(.clientToServer, at: 0, request), Chunk(.serverToClient, at: 1, server),
                          Chunk(.clientToServer, at: 2, later), Chunk(.serverToClient, at: 3, h2frame(data, flags: endStream, stream: 3, bytes(5)))],
                         budget: budget)
        #expect(read.map(\.turn) == [
            Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: request.count, seenBytes: request.count),
            Turn(number: 2, direction: .serverToClient, startOffset: 1, keptBytes: 9 + 10 + 9 + 16 + 9, seenBytes: server.count),
            Turn(number: 3, direction: .clientToServer, startOffset: 2, keptBytes: later.count, seenBytes: later.count),
            Turn(number: 4, direction: .serverToClient, startOffset: 3, keptBytes: 14, seenBytes: 14),
        ])
        #expect(read[1].turn.bodiesShortened && !read[1].turn.truncated)
        #expect(read[1].bytes == h2frame(settings) + h2frame(headers, flags: endHeaders, stream: 1, [0x88])
                + dataHead(length: 16, flags: 0x80, stream: 1) + bytes(16) + dataHead(length: 0, flags: 0x80 | endStream, stream: 1))
    }

    @Test func theFlowBudgetStillStopsAnHTTP2Side() {
        let read = turns([Chunk(.clientToServer, at: 0, preface), Chunk(.serverToClient, at: 1, h2frame(data, stream: 1, bytes(30)))],
                         budget: RecordingBudget(turnLimit: 100, flowBudget: 20))
        #expect(read[1].turn == Turn(number: 2, direction: .serverToClient, startOffset: 1, keptBytes: 20, seenBytes: 39, cutBy: .flowBudget))
        #expect(read[1].bytes == Array(h2frame(data, stream: 1, bytes(30)).prefix(20)))
    }

    @Test func theServersSettingsBeforeThePrefaceStayInStep() {
        // The server's SETTINGS, its head split, arrive before the client's preface.
        let settingsFrame = h2frame(settings, [0, 3, 0, 0, 0, 100])
        let read = turns([Chunk(.serverToClient, at: 0, Array(settingsFrame[0..<4])), Chunk(.serverToClient, at: 1, Array(settingsFrame[4...])),
                          Chunk(.clientToServer, at: 2, preface), Chunk(.serverToClient, at: 3, h2frame(data, stream: 1, bytes(30)))],
                         budget: RecordingBudget(turnLimit: 20))
        #expect(read.map(\.bytes) == [settingsFrame, preface, dataHead(length: 20, flags: 0x80, stream: 1) + bytes(20)])
    }

    @Test func otherProtocolsAndLateStartsKeepTheTurnLimit() {
        let budget = RecordingBudget(turnLimit: 10, flowBudget: 1_000)
        let http1 = turns([Chunk(.clientToServer, at: 0, Array("GET / HTTP/1.1\r\n\r\n".utf8)), Chunk(.serverToClient, at: 1, bytes(30))], budget: budget)
        #expect(http1.map(\.turn.cutBy) == [.turnLimit, .turnLimit])
        // Recording that began inside an HTTP/2 connection cannot find its frames.
        let late = turns([Chunk(.clientToServer, at: 0, h2frame(data, stream: 1, bytes(30)))], budget: budget)
        #expect(late.map(\.turn.keptBytes) == [10] && late[0].turn.cutBy == .turnLimit)
    }
}
