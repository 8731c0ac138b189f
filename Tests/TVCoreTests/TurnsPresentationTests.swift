import FlowStore
import HTTPReading
import Recording
import Testing
@testable import TVCore
import FlowTerms

@Suite struct TurnsPresentationTests {
    let now: Int64 = 1_764_471_900_000_000

    /// A closed flow of `status` (an open one on which nothing was sent yet is "nothing sent yet").
    func flow(_ status: FlowStatus) -> FlowRecord {
        var f = FlowRecord(id: 7, startTime: now, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "127.0.0.1",
                           serverPort: 443, host: "a.test", hostOrigin: .sni, status: status)
        f.duration = 1_000
        return f
    }

    @Test func unitsForTurns() {
        #expect(Units.grouped(0) == "0")
        #expect(Units.grouped(999) == "999")
        #expect(Units.grouped(1_048_776) == "1,048,776")
        #expect(Units.offsetSeconds(0) == "0.000 s")
        #expect(Units.offsetSeconds(12_345) == "0.012 s")
        #expect(Units.offsetSeconds(61_250_999) == "61.251 s")
        #expect(Units.offsetSeconds(2_722) == "0.003 s" && Units.offsetSeconds(2_499) == "0.002 s" && Units.offsetSeconds(-5) == "0.000 s")
    }

    @Test func oneBlockPerTurnWithFiguresAndTheCutLine() {
        let items = [
            TurnsPresentation.Item(turn: Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 33, seenBytes: 33),
                                   bytes: Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)),
            TurnsPresentation.Item(turn: Turn(number: 2, direction: .serverToClient, startOffset: 12_345, keptBytes: 65_536,
                                              seenBytes: 1_048_776, cutBy: .turnLimit),
                                   bytes: [0x89, 0x50, 0x4e, 0x47] + [UInt8](repeating: 0x41, count: 65_532)),
        ]
        let lines = TurnsPresentation(flowID: 7, flow: flow(.inspected), items: items).lines()
        #expect(lines == [
            "Flow 7: a.test",
            "",
            "Turn 1  → client to server  at 0.000 s  33 bytes",
            "  GET / HTTP/1.1",
            "  Host: a.test",
            "",
            "",
            "Turn 2  ← server to client  at 0.012 s  65,536 of 1,048,776 bytes kept",
        ] + (0..<16).map { row in
            row == 0 ? "  00000000  89 50 4e 47 41 41 41 41  41 41 41 41 41 41 41 41  |.PNGAAAAAAAAAAAA|"
                     : "  000000\(row < 16 ? String(row, radix: 16) : "")0  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|"
        } + [
            "  … showing 256 of 65,536 bytes; --full prints all that was kept.",
            "⋯ The rest of this turn was not kept: a turn keeps at most 64 KiB; the server-to-client side's next turn is kept again.",
        ])
    }

    @Test func anHTTP2TurnWhoseBodiesWereShortenedSaysSoAndItsSideGoesOn() {
        let turn = Turn(number: 10, direction: .serverToClient, startOffset: 229_000, keptBytes: 65_590, seenBytes: 100_221)
        #expect(turn.bodiesShortened && !turn.truncated)
        let lines = TurnsPresentation(flowID: 9, flow: flow(.inspected), items: [.init(turn: turn, bytes: [0x00, 0x00, 0x04])]).lines()
        #expect(Array(lines[2...]) == [
            "Turn 10  ← server to client  at 0.229 s  65,590 of 100,221 bytes kept",
            "  00000000  00 00 04                                          |...|",
            "  HTTP/2 bodies past 64 KiB were left out of this turn: each stream keeps at most 64 KiB of body a direction, the rest of the connection is kept (the DATA frames that lost bytes say how many they kept).",
        ])
        // Lost bytes, a cut or a deleted start explain a shortfall themselves.
        for other in [Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 1, seenBytes: 2, incomplete: true),
                      Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 1, seenBytes: 2, cutBy: .flowBudget),
                      Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 1, seenBytes: 2, startDeleted: true)] {
            #expect(!other.bodiesShortened)
        }
    }

    @Test func textPreviewsAreCappedAtAKibibyteAndFullShowsAll() {
        let text = Array(String(repeating: "abcdefghi\n", count: 200).utf8)   // 2,000 bytes
        let item = TurnsPresentation.Item(turn: Turn(number: 1, direction: .serverToClient, startOffset: 0, keptBytes: 2_000, seenBytes: 2_000),
                                          bytes: text)
        let capped = TurnsPresentation(flowID: 7, flow: nil, items: [item]).lines()
        #expect(capped.count == 2 + 1 + 103 + 1)
        #expect(capped[2] == "Turn 1  ← server to client  at 0.000 s  2,000 bytes")
        #expect(capped[capped.count - 2] == "  abcd")
        #expect(capped.last == "  … showing 1,024 of 2,000 bytes; --full prints all that was kept.")
        let full = TurnsPresentation(flowID: 7, flow: nil, items: [item], full: true).lines()
        #expect(full.count == 3 + 200)
    }

    @Test func aCutCharacterAtTheEndStillReadsAsText() {
        let bytes = Array("prix: 5 €".utf8).dropLast(1)
        let item = TurnsPresentation.Item(turn: Turn(number: 1, direction: .clientToServer, startOffset: 1_500, keptBytes: bytes.count,
                                                     seenBytes: 40, cutBy: .flowBudget), bytes: Array(bytes))
        #expect(TurnsPresentation(flowID: 7, flow: nil, items: [item]).lines() == [
            "Flow 7", "",
            "Turn 1  → client to server  at 0.002 s  10 of 40 bytes kept",
            "  prix: 5 ",
            "⋯ The client-to-server side stopped being recorded after this turn: this connection's budget per direction (content.flowBudget) was used up.",
        ])
    }

    @Test func incompleteAndUnreadableTurnsSaySo() {
        let lines = TurnsPresentation(flowID: 7, flow: nil, items: [
            .init(turn: Turn(number: 1, direction: .clientToServer, startOffset: 0, keptBytes: 2, seenBytes: 9, incomplete: true), bytes: [0x68, 0x69]),
            .init(turn: Turn(number: 2, direction: .serverToClient, startOffset: 0, keptBytes: 3, seenBytes: 3), bytes: nil,
                  unreadable: "The bytes of turn 2 of flow 7 are gone."),
        ]).lines()
        #expect(lines == [
            "Flow 7", "",
            "Turn 1  → client to server  at 0.000 s  2 of 9 bytes kept",
            "  hi",
            "  Incomplete: bytes of this turn were lost while recording (the recording queue was full, or keeping content was switched off before the turn ended).",
            "",
            "Turn 2  ← server to client  at 0.000 s  3 bytes",
            "  The bytes of turn 2 of flow 7 are gone.",
        ])
    }

    /// A turn going on at `tv content delete` keeps what came after: said as that, not as bytes
    /// the recording lost (a trial's turn blamed the recording queue).
    @Test("a turn whose start was deleted says so, not that the recording queue was full")
    func aTurnWhoseStartWasDeleted() {
        let lines = TurnsPresentation(flowID: 7, flow: nil, items: [
            .init(turn: Turn(number: 4, direction: .clientToServer, startOffset: 4_000_000, keptBytes: 2, seenBytes: 40, startDeleted: true),
                  bytes: [0x68, 0x69]),
        ]).lines()
        #expect(lines == [
            "Flow 7", "",
            "Turn 4  → client to server  at 4.000 s  2 of 40 bytes kept",
            "  hi",
            "  Start deleted: this turn was going on when the connection's kept content was deleted (`tv content delete`); what it held then went with it, and the bytes kept are those that came after.",
        ])
    }

    @Test func theFourReasonsForNothing() {
        func only(_ status: FlowStatus) -> String { TurnsPresentation(flowID: 7, flow: flow(status), items: []).lines()[1] }
        #expect(only(.notEncrypted) == "Not encrypted: this connection was plain and tv kept none of its content; `tv flow 7` shows its addresses, times and byte counts.")
        // Open, and nothing sent either way yet: TLS or plain is not known (a waiting CONNECT
        // tunnel read "not encrypted" everywhere: a trial).
        var waiting = flow(.notEncrypted)
        waiting.duration = nil
        #expect(TurnsPresentation(flowID: 7, flow: waiting, items: []).lines()[1] == "Nothing was sent on this connection yet, so there is no content to keep so far.")
        #expect(FlowListPresentation.statusWord(waiting) == "nothing sent yet")
        #expect(FlowDetailPresentation.statusSentence(waiting) == "not known yet — nothing was sent either way so far; the first bytes tell TLS from plain")
        waiting.bytesUp = 1
        #expect(FlowListPresentation.statusWord(waiting) == "not encrypted")
        #expect(only(.encrypted) == "Not inspected: tv passed this connection through without decrypting it, so it never saw what was said.")
        #expect(only(.keptPrivate) == "Kept private: this client pins its certificate or lacks tv's root (`tv flow 7` says which), so tv passed this connection through unread — that is a guarantee, not a failure.")
        #expect(only(.inspected) == "Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then).")
        let json = TurnsPresentation(flowID: 7, flow: flow(.keptPrivate), items: []).json().serialized()
        #expect(json.hasPrefix("{\"flow\":7,\"status\":\"kept_private\",\"turns\":[],\"absence\":{\"reason\":\"kept_private\","))
    }

    @Test func jsonCarriesEveryKeptByte() {
        let json = TurnsPresentation(flowID: 7, flow: nil, items: [
            .init(turn: Turn(number: 1, direction: .clientToServer, startOffset: 5, keptBytes: 2, seenBytes: 2), bytes: [0x68, 0x69]),
            .init(turn: Turn(number: 2, direction: .serverToClient, startOffset: 9, keptBytes: 2, seenBytes: 4, cutBy: .turnLimit), bytes: [0, 255]),
        ]).json().serialized()
        #expect(json == "{\"flow\":7,\"status\":null,\"turns\":[{\"number\":1,\"direction\":\"client_to_server\",\"startOffset\":5,\"keptBytes\":2,\"seenBytes\":2,\"truncated\":false,\"cutBy\":null,\"incomplete\":false,\"startDeleted\":false,\"bodiesShortened\":false,\"text\":\"hi\"},{\"number\":2,\"direction\":\"server_to_client\",\"startOffset\":9,\"keptBytes\":2,\"seenBytes\":4,\"truncated\":true,\"cutBy\":\"turn_limit\",\"incomplete\":false,\"startDeleted\":false,\"bodiesShortened\":false,\"base64\":\"AP8=\"}],\"absence\":null}")
    }

    @Test func flowDetailSaysHowMuchWasSaved() {
        let f = flow(.inspected)
        #expect(FlowDetailPresentation.contentSentence(f, content: ContentSummary(turns: 4, keptBytes: 70_000, seenBytes: 1_100_000, truncated: true))
                == "68.4 KiB saved of what was said; tv turns 7 shows it (--http reads it as HTTP). The recording budget cut part of it.")
        // Its segment file deleted or moved: said so, not offered as readable (a trial).
        var gone = ContentSummary(turns: 2, keptBytes: 5_300, seenBytes: 5_300)
        gone.goneBytes = 5_300
        #expect(FlowDetailPresentation.contentSentence(f, content: gone)
                == "5.2 KiB was saved of what was said, but its segment file is no longer in the content folder (deleted or moved): the bytes cannot be read; tv turns 7 shows the turns' figures.")
        gone.goneBytes = 1_024
        #expect(FlowDetailPresentation.contentSentence(f, content: gone)
                == "5.2 KiB saved of what was said, 1.0 KiB of it in segment files no longer in the content folder (deleted or moved), which cannot be read; tv turns 7 shows the rest (--http reads it as HTTP).")
        #expect(FlowDetailPresentation.contentSentence(f) == "Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then).")
    }

    @Test("a plain flow's absence sentence points above under tv flow, and to tv flow elsewhere")
    func plainAbsenceNamesTheRightPlace() {
        #expect(FlowDetailPresentation.contentSentence(flow(.notEncrypted))
                == "Not encrypted: this connection was plain and tv kept none of its content; the addresses, times and byte counts above are what it recorded.")
        #expect(ContentAbsence.notEncrypted.sentence(flowID: 7)
                == "Not encrypted: this connection was plain and tv kept none of its content; `tv flow 7` shows its addresses, times and byte counts.")
    }

    @Test func httpViewShowsMessagesDecodedBodiesAndWhereReadingStopped() {
        let turns = TurnRecorder.turns(from: [
            Chunk(.clientToServer, at: 0, Array("GET /1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET /2 HTTP/1.1\r\n\r\n".utf8)),
            Chunk(.serverToClient, at: 2_000, Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\nzz\r\n".utf8)),
        ])
        let lines = HTTPPresentation(flowID: 7, flow: flow(.inspected), result: HTTPReader.read(turns)).lines()
        #expect(lines == [
            "Flow 7: a.test — read as HTTP/1.1, 2 exchanges",
            "",
            "#1",
            "  → client to server  turn 1  at 0.000 s",
            "    GET /1 HTTP/1.1",
            "    Host: a.test",
            "  ← server to client  turn 2  at 0.002 s",
            "    HTTP/1.1 200 OK",
            "    Content-Length: 2",
            "    body: 2 bytes, content-length",
            "      ok",
            "",
            "#2",
            "  → client to server  turn 1  at 0.000 s",
            "    GET /2 HTTP/1.1",
            "  ← server to client  turn 2  at 0.002 s",
            "    HTTP/1.1 200 OK",
            "    Transfer-Encoding: chunked",
            "    body: 4 bytes, chunked",
            "      abcd",
            "    The connection ended before the body did: 4 bytes came.",
            "",
            "Reading stopped at turn 2 ← server to client: The chunked body cannot be read on: a chunk size line starts with byte 0x7a, which is not a hexadecimal digit (RFC 9112 §7.1); reading this side stops here.",
            "The plain view (tv turns 7) shows every byte that was kept.",
        ])
        let other = HTTPPresentation(flowID: 7, flow: nil, result: .notHTTP(reason: "It is SSH.")).lines()
        #expect(other == ["Flow 7", "Not read as HTTP: It is SSH. The plain view follows."])
    }

    @Test func aBinaryBodyIsShownAsHexInTheHTTPView() {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x01]
        let turns = TurnRecorder.turns(from: [
            Chunk(.clientToServer, at: 0, Array("GET /i.png HTTP/1.1\r\n\r\n".utf8)),
            Chunk(.serverToClient, at: 1_000, Array("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 18\r\n\r\n".utf8) + png),
        ])
        let lines = HTTPPresentation(flowID: 7, flow: nil, result: HTTPReader.read(turns)).lines()
        #expect(Array(lines.suffix(3)) == [
            "    body: 18 bytes, content-length",
            "      00000000  89 50 4e 47 0d 0a 1a 0a  00 00 00 0d 49 48 44 52  |.PNG........IHDR|",
            "      00000010  00 01                                             |..|",
        ])
    }
}

@Suite("tv content status with segment files gone")
struct ContentUsageGoneTests {
    @Test("turns whose segment file is deleted or moved are said so: all, or how many (a trial's status counted them as kept and readable)")
    func goneTurnsAreSaid() {
        var usage = ContentUsage(turns: 1, flows: 1, keptBytes: 3, segments: [])
        usage.goneTurns = 1
        #expect(ContentUsagePresentation.lines(usage) == ["1 turn of 1 flow: 3 B kept.",
            "All of them point into segment files that are no longer in the content folder (deleted or moved): their figures stay, their bytes cannot be read."])
        usage = ContentUsage(turns: 4, flows: 2, keptBytes: 10_000, segments: [])
        usage.goneTurns = 3
        #expect(ContentUsagePresentation.lines(usage)[1]
                == "3 of them point into segment files that are no longer in the content folder (deleted or moved): their figures stay, their bytes cannot be read.")
        usage.goneTurns = 0
        #expect(ContentUsagePresentation.lines(usage) == ["4 turns of 2 flows: 9.8 KiB kept."])
    }
}
