import FlowStore
import Foundation
import HTTPReading
import Recording
import Testing
import TVHome
@testable import TVCore

@Suite(.serialized) struct TurnsReadingTests {
    func run(_ flow: Int64, _ shape: TurnsReading.Shape, in folder: KeptContentFolder,
             terminal: Bool = false) throws -> [RecordedOutput.Piece] {
        let output = RecordedOutput(terminal: terminal)
        try TurnsReading(flowID: flow, shape: shape).run(home: folder.home, to: output)
        return output.pieces
    }

    static let plain = TurnsReading.Shape.shown(turn: nil, full: false, http: false, json: false)
    static let http = TurnsReading.Shape.shown(turn: nil, full: false, http: true, json: false)

    @Test func thePlainViewIsOneLineAtATime() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        #expect(try run(1, Self.plain, in: folder) == [
            "Flow 1: a.test", "",
            "Turn 1  → client to server  at 0.000 s  37 bytes", "  GET /hello HTTP/1.1", "  Host: a.test", "", "",
            "Turn 2  ← server to client  at 0.002 s  43 bytes", "  HTTP/1.1 200 OK", "  Content-Length: 5", "", "  hello",
        ].map(RecordedOutput.Piece.line))
    }

    @Test func theHTTPViewIsStreamedAsOneRunOfLines() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        #expect(try run(1, Self.http, in: folder) == [.lines([
            "Flow 1: a.test — read as HTTP/1.1, 1 exchange", "",
            "#1",
            "  → client to server  turn 1  at 0.000 s", "    GET /hello HTTP/1.1", "    Host: a.test",
            "  ← server to client  turn 2  at 0.002 s", "    HTTP/1.1 200 OK", "    Content-Length: 5",
            "    body: 5 bytes, content-length", "      hello",
        ])])
    }

    @Test func turnsThatAreNotHTTPFallBackToThePlainViewAfterTheReason() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        #expect(try run(2, Self.http, in: folder) == [
            .lines(["Flow 2: mail.test",
                    "Not read as HTTP: Only the server spoke, and not in HTTP/1, so this is not read as HTTP. The plain view follows."]),
        ] + ["", "Turn 1  ← server to client  at 0.000 s  21 bytes", "  220 mail.test ESMTP"]
            .map(RecordedOutput.Piece.line))
    }

    @Test func nothingKeptReadAsHTTPIsThePlainViewsSentence() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let sentence = "Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."
        #expect(try run(3, Self.http, in: folder) == [.line("Flow 3: sealed.test"), .line(sentence)])
        #expect(try run(3, Self.plain, in: folder) == [.line("Flow 3: sealed.test"), .line(sentence)])
    }

    @Test func oneTurnIsPrintedInFull() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let pieces = try run(5, .shown(turn: 2, full: false, http: false, json: false), in: folder)
        // Every kept byte, not a preview: 43 bytes of head, then 65,493 `a`s, never a "showing … of" line.
        #expect(pieces.first == .line("Flow 5: big.test"))
        #expect(pieces.contains(.line("Turn 2  ← server to client  at 0.001 s  65,536 of 100,043 bytes kept")))
        #expect(!pieces.contains { if case let .line(text) = $0 { return text.contains("showing") } else { return false } })
        let kept = pieces.compactMap { piece -> Int? in
            guard case let .line(text) = piece, text.hasPrefix("  a") else { return nil }
            return text.count - 2
        }.reduce(0, +)
        #expect(kept == 65_536 - 43)
    }

    @Test func turnsWhoseBytesAreGoneKeepTheirFiguresAndSayWhy() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        for segment in try FileManager.default.contentsOfDirectory(atPath: folder.home.contentDirectory) {
            try FileManager.default.removeItem(atPath: folder.home.contentDirectory + "/" + segment)
        }
        #expect(try run(2, Self.plain, in: folder) == [
            "Flow 2: mail.test", "", "Turn 1  ← server to client  at 0.000 s  21 bytes",
            "  The bytes of turn 1 of flow 2 are gone (their segment file was deleted); the turn's figures stay, and nothing can bring the bytes back.",
        ].map(RecordedOutput.Piece.line))
        // Read as HTTP there is nothing to read: the reason, then the plain view.
        let http = try run(2, Self.http, in: folder)
        #expect(http.count == 4)
        #expect(http.last == .line("  The bytes of turn 1 of flow 2 are gone (their segment file was deleted); the turn's figures stay, and nothing can bring the bytes back."))
        #expect(throws: ContentError.self) { try run(2, .raw(turn: 1, file: nil), in: folder) }
    }

    @Test func aTurnThatIsNotThereAndAFlowThatIsNotThereAreRefused() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        #expect(throws: ContentRefusal.noTurn(flow: 1, turn: 9, last: 2)) {
            try run(1, .shown(turn: 9, full: false, http: false, json: false), in: folder)
        }
        #expect(throws: ContentRefusal.noTurn(flow: 3, turn: 1, last: nil)) { try run(3, .raw(turn: 1, file: nil), in: folder) }
        #expect(throws: ContentRefusal.noFlow(99)) { try run(99, Self.plain, in: folder) }
        #expect(ContentRefusal.noTurn(flow: 1, turn: 9, last: 2).message == "Flow 1 has no turn 9; its turns are 1 to 2.")
        #expect(ContentRefusal.noTurn(flow: 3, turn: 1, last: nil).message == "Flow 3 has no turn 1; no turns are kept for it.")
        #expect(ContentRefusal.noFlow(99).message == "There is no flow 99 in this data folder; `tv flows` lists the ones there are.")
        #expect(ContentRefusal.noFlow(99).exitCode == 1)
    }

    @Test func damagedRowsAreNotedBeforeAnythingElseEvenARefusal() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try folder.damageTurn("kept_bytes", to: "-5", flow: 1, turn: 2)
        try folder.damageTurn("direction", to: "sideways", flow: 2, turn: 1)
        try folder.damage("DELETE FROM flows WHERE id = 2;")
        let output = RecordedOutput()
        try TurnsReading(flowID: 1, shape: Self.plain).run(home: folder.home, to: output)
        #expect(output.pieces.first == .note("tv: The row of turn 2 of flow 1 is damaged (kept_bytes is -5); it is left out."))
        #expect(output.pieces.dropFirst().first == .line("Flow 1: a.test"))
        #expect(!output.stdoutLines.contains { $0.hasPrefix("Turn 2") })
        // Flow 2 has no row and no readable turn, but a damaged one: it is there, and the reason
        // nothing is shown is the index, not that nothing was kept.
        #expect(try run(2, Self.plain, in: folder) == [
            .note("tv: The row of turn 1 of flow 2 is damaged (direction is 'sideways'); it is left out."),
            .line("Flow 2"),
            .line("Nothing can be shown: turns of this connection were kept, but every one of their index rows is damaged (each is named above)."),
        ])
        let refused = RecordedOutput()
        #expect(throws: ContentRefusal.noTurn(flow: 2, turn: 1, last: nil)) {
            try TurnsReading(flowID: 2, shape: .raw(turn: 1, file: nil)).run(home: folder.home, to: refused)
        }
        #expect(refused.pieces == [.note("tv: The row of turn 1 of flow 2 is damaged (direction is 'sideways'); it is left out.")])
    }

    @Test func aRawTurnGoesToAFileOrAsBytesAndBinaryIsRefusedOnATerminal() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let file = folder.path + "/turn.bin"
        #expect(try run(1, .raw(turn: 2, file: file), in: folder, terminal: true) == [
            .note("Wrote turn 2 of flow 1 to \(file) (43 bytes)."),
        ])
        #expect(FileManager.default.contents(atPath: file) == Data("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)

        #expect(try run(1, .raw(turn: 1, file: nil), in: folder, terminal: true) == [.bytes(Array("GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8))])
        #expect(throws: ContentRefusal.unsafeForTerminal(turn: 1)) { try run(4, .raw(turn: 1, file: nil), in: folder, terminal: true) }
        #expect(try run(4, .raw(turn: 1, file: nil), in: folder) == [.bytes([0x00, 0x1b, 0x5b, 0x32, 0x4a])])
        // A cut turn says so after its bytes.
        let cut = try run(5, .raw(turn: 2, file: nil), in: folder)
        #expect(cut.count == 2)
        #expect(cut.last == .note("tv: this is what was kept of turn 2: 65,536 of 100,043 bytes kept."))
        if case let .bytes(bytes) = cut.first { #expect(bytes.count == 65_536) } else { Issue.record("\(cut)") }
    }

    @Test func terminalSafeBytesAreTextWithOnlyLineControls() {
        #expect(TurnsReading.isTerminalSafe(Array("GET / HTTP/1.1\r\n\tx\n".utf8)))
        #expect(TurnsReading.isTerminalSafe([]))
        #expect(!TurnsReading.isTerminalSafe([0x41, 0x1b, 0x5b, 0x32, 0x4a]))
        #expect(!TurnsReading.isTerminalSafe([0x00, 0x01, 0x02]))
        #expect(!TurnsReading.isTerminalSafe(Array("a\u{202E}b".utf8)))
    }

    @Test func jsonIsOneLineOrPlainJSON() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let plain = try run(1, .shown(turn: nil, full: false, http: false, json: true), in: folder)
        #expect(plain.count == 1)
        guard case let .line(text) = plain.first else { Issue.record("\(plain)"); return }
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["flow"] as? Int == 1)
        #expect((document["turns"] as? [[String: Any]])?.map { $0["text"] as? String } == [
            "GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        ])

        let http = try run(1, .shown(turn: nil, full: false, http: true, json: true), in: folder)
        #expect(http.count == 1)
        guard case let .line(httpText) = http.first else { Issue.record("\(http)"); return }
        let reading = try #require(try JSONSerialization.jsonObject(with: Data(httpText.utf8)) as? [String: Any])
        #expect(reading["version"] as? String == "HTTP/1.1")
        let exchanges = try #require(reading["exchanges"] as? [[String: Any]])
        #expect(((exchanges.first?["response"] as? [String: Any])?["body"] as? [String: Any])?["text"] as? String == "hello")
    }

    @Test func longHTTPJSONIsHandedOverInPiecesOfAtLeast64KiB() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let pieces = try run(5, .shown(turn: nil, full: false, http: true, json: true), in: folder)
        #expect(pieces.count == 2)
        guard case let .out(first) = pieces.first, case let .line(last) = pieces.last else { Issue.record("\(pieces)"); return }
        #expect(first.utf8.count >= 65_536)
        #expect(last.utf8.count < 65_536)
        let reading = try #require(try JSONSerialization.jsonObject(with: Data((first + last).utf8)) as? [String: Any])
        let exchanges = try #require(reading["exchanges"] as? [[String: Any]])
        let body = try #require((exchanges.first?["response"] as? [String: Any])?["body"] as? [String: Any])
        #expect(body["text"] as? String == String(repeating: "a", count: 65_536 - 43))
        #expect(body["complete"] as? Bool == false)
    }
}
