import FlowTerms
import Recording
import Testing
@testable import HTTPReading

/// Turns kept after `tv content delete` took a connection's start while it stayed open (a trial:
/// HTTP/1's second request read as another protocol's bytes or paired with the first's row,
/// HTTP/2's turns said "another protocol" and "the recording queue was full").
@Suite struct DeletedStartTests {
    /// A turn numbered `number` of `text`, starting `offset` µs into the flow.
    static func turn(_ number: Int, _ direction: Direction, at offset: Int64, _ bytes: [UInt8], startDeleted: Bool = false) -> RecordedTurn {
        RecordedTurn(turn: Turn(number: number, direction: direction, startOffset: offset, keptBytes: bytes.count,
                                seenBytes: bytes.count + (startDeleted ? 50 : 0), startDeleted: startDeleted), bytes: bytes)
    }

    /// HTTP/2 frames from the middle of a connection: a HEADERS frame on stream 3 whose block
    /// refers to the dynamic table (index 62, RFC 7541 §2.3.2), then a WINDOW_UPDATE.
    static let framesFromTheMiddle: [UInt8] = [0, 0, 4, 0x01, 0x05, 0, 0, 0, 3, 0x82, 0x87, 0x84, 0xBE,
                                               0, 0, 4, 0x08, 0x00, 0, 0, 0, 0, 0, 0, 0x40, 0x00]

    @Test("kept turns from the first, whole, have no deleted start; a later first turn or a cut one has, and says what went")
    func whatWent() {
        let whole = [Turn(number: 1, direction: up, startOffset: 0, keptBytes: 5, seenBytes: 5),
                     Turn(number: 2, direction: down, startOffset: 10, keptBytes: 5, seenBytes: 5)]
        #expect(DeletedStart(whole) == nil && DeletedStart([]) == nil)
        let later = DeletedStart([Turn(number: 4, direction: up, startOffset: 4_000_000, keptBytes: 5, seenBytes: 5),
                                  Turn(number: 3, direction: down, startOffset: 3_000, keptBytes: 5, seenBytes: 5)])
        #expect(later == DeletedStart(firstKeptTurn: 3, firstKeptOffset: 3_000))
        #expect(later?.clause == "the start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired)")
        #expect(DeletedStart(firstKeptTurn: 2, firstKeptOffset: 0).clause
                == "the start of this connection's kept content was deleted (turn 1, by `tv content delete` while the connection was open, or as it expired)")
        let cut = DeletedStart([Turn(number: 5, direction: up, startOffset: 70, keptBytes: 5, seenBytes: 9, startDeleted: true)])
        #expect(cut == DeletedStart(firstKeptTurn: 5, firstKeptOffset: 70, firstTurnCut: true))
        #expect(cut?.clause == "the start of this connection's kept content was deleted (turns 1–4 and the beginning of turn 5, by `tv content delete` while the connection was open)")
        #expect(DeletedStart(firstKeptTurn: 1, firstKeptOffset: 0, firstTurnCut: true).clause
                == "the start of this connection's kept content was deleted (the beginning of turn 1, by `tv content delete` while the connection was open)")
    }

    @Test("HTTP/1 after a deleted start is read from the first request kept whole; a response kept before it (its request deleted) is left out, not paired with it")
    func http1ReadFromTheFirstRequest() throws {
        let turns = [
            Self.turn(3, down, at: 2_000, b("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nbefore")),
            Self.turn(4, up, at: 4_000_000, b("GET /headers?n=after HTTP/1.1\r\nHost: a.test\r\n\r\n")),
            Self.turn(5, down, at: 4_001_000, b("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nafter")),
        ]
        guard case let .conversation(c) = HTTPReader.read(turns) else { Issue.record("not read as HTTP"); return }
        #expect(c.deletedStart == DeletedStart(firstKeptTurn: 3, firstKeptOffset: 2_000))
        #expect(c.exchanges.map { [$0.request?.startLine, $0.response.map { String(decoding: $0.body.transferred, as: UTF8.self) }] }
                == [["GET /headers?n=after HTTP/1.1", "after"]])
        #expect(c.notes == ["The start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired); reading as HTTP starts at turn 4, the first request kept whole."])
        #expect(c.problems.isEmpty)
    }

    @Test("a turn whose start was deleted is not a loss of the recording's: reading starts in it when what came after is a request")
    func aCutTurnStartingWithARequest() throws {
        let turns = [Self.turn(2, up, at: 900, b("GET /next HTTP/1.1\r\nHost: a.test\r\n\r\n"), startDeleted: true),
                     Self.turn(3, down, at: 1_900, b("HTTP/1.1 204 No Content\r\n\r\n"))]
        guard case let .conversation(c) = HTTPReader.read(turns) else { Issue.record("not read as HTTP"); return }
        #expect(c.exchanges.count == 1 && c.exchanges[0].response?.startLine == "HTTP/1.1 204 No Content" && c.problems.isEmpty)
        #expect(c.notes.first?.hasSuffix("reading as HTTP starts at turn 2, the first request kept whole.") == true)
    }

    @Test("HTTP/2 after a deleted start is not read (its header compression state went with it), and says so rather than 'another protocol'")
    func http2IsNotReadFromTheMiddle() {
        let turns = [Self.turn(7, up, at: 4_000_000, Self.framesFromTheMiddle, startDeleted: true),
                     Self.turn(8, down, at: 4_002_000, [0, 0, 4, 0x01, 0x04, 0, 0, 0, 3, 0x88, 0xC0, 0xBF, 0xBE])]
        let deleted = DeletedStart(firstKeptTurn: 7, firstKeptOffset: 4_000_000, firstTurnCut: true)
        #expect(HTTPReader.read(turns) == .startDeleted(deleted, http2: true))
        #expect(HTTPReader.read(turns).notHTTPReason
                == "The start of this connection's kept content was deleted (turns 1–6 and the beginning of turn 7, by `tv content delete` while the connection was open), so its HTTP/2 cannot be read from the middle: header compression state is lost with it.")
        // Bytes that are neither a request nor frames: said without naming HTTP/2.
        let other = [Self.turn(3, up, at: 10, b("hello there, not a request\n"))]
        #expect(HTTPReader.read(other).notHTTPReason
                == "The start of this connection's kept content was deleted (turns 1–2, by `tv content delete` while the connection was open, or as it expired), and what is left does not start with a request, so it cannot be read as HTTP from the middle.")
    }

    @Test("frames are told from other bytes by their headers (RFC 9113 §4.1)")
    func http2FrameHeaders() {
        #expect(HTTPReader.looksLikeHTTP2Frames(Self.framesFromTheMiddle))
        // One frame going on past the turn (the rest came in a later turn).
        #expect(HTTPReader.looksLikeHTTP2Frames([0, 0x40, 0, 0x00, 0x00, 0, 0, 0, 5, 1, 2, 3]))
        #expect(!HTTPReader.looksLikeHTTP2Frames(b("GET / HTTP/1.1\r\n\r\n")))
        #expect(!HTTPReader.looksLikeHTTP2Frames([0, 0, 0, 0x01, 0x04, 0x80, 0, 0, 1]))   // reserved bit set
        #expect(!HTTPReader.looksLikeHTTP2Frames([0, 0, 1, 0x00, 0x00, 0, 0, 0, 1, 9, 0xFF]))   // a second header cut short
        #expect(!HTTPReader.looksLikeHTTP2Frames([0, 0, 0]))
    }

    @Test("a row made before what is kept begins precedes it, even by half a millisecond; one made as its first turn began does not")
    func rowsBeforeTheKeptStart() {
        let start: Int64 = 1_764_471_900_000_000
        let deleted = DeletedStart(firstKeptTurn: 3, firstKeptOffset: 4_000_000)
        var row = ExchangeRecord(flowID: 7, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", path: "/", requestTime: start + 1_000)
        #expect(deleted.precedes(row, flowStart: start))
        row.requestTime = start + 4_000_000
        #expect(!deleted.precedes(row, flowStart: start))
        // Half a millisecond before (a re-check's local request and the turn after it).
        row.requestTime = start + 3_999_500
        #expect(deleted.precedes(row, flowStart: start))
    }
}
