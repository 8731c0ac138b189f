import Testing
import Recording
import FlowTerms
@testable import HTTPReading

/// RFC 7692 §7.2.3's permessage-deflate examples byte for byte, and how reading goes on or
/// stops at the recording's cuts.
@Suite struct WebSocketReaderTests {
    static let compressedHello: [UInt8] = [0xc1, 0x07, 0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]
    /// §7.2.3.2: "Hello" again, referring back to the first one's window.
    static let secondHello: [UInt8] = [0xc1, 0x05, 0xf2, 0x00, 0x11, 0x00, 0x00]

    func hello(_ turn: Int, _ offset: Int64, wire: Int, _ direction: Direction = down) -> WebSocketMessage {
        WebSocketMessage(direction: direction, opcode: .text, turn: turn, offset: offset, data: b("Hello"), wireSize: wire, compressed: true)
    }

    /// `frame` masked with `key`, as a client sends it (RFC 6455 §5.3).
    func masked(_ frame: [UInt8], key: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]) -> [UInt8] {
        let payload = frame.dropFirst(2).enumerated().map { $0.element ^ key[$0.offset & 3] }
        return [frame[0], frame[1] | 0x80] + key + payload
    }

    @Test func theAcceptedExtensionIsRead() {
        #expect(PerMessageDeflate.accepted(["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"])
                == PerMessageDeflate(serverMaxWindowBits: 12, clientMaxWindowBits: 12))
        #expect(PerMessageDeflate.accepted(["x-webkit-deflate-frame, permessage-deflate;client_no_context_takeover; server_max_window_bits=\"10\""])
                == PerMessageDeflate(clientNoContextTakeover: true, serverMaxWindowBits: 10))
        #expect(PerMessageDeflate.accepted(["x-webkit-deflate-frame"]) == nil)
        #expect(PerMessageDeflate.accepted([]) == nil)
    }

    @Test func helloCompressed() {
        let c = readWebSocket([(down, Self.compressedHello)], extensions: "permessage-deflate")
        #expect(c.deflate == PerMessageDeflate())
        #expect(c.messages == [hello(2, 1_000, wire: 7)])
        #expect(c.problems == [])
    }

    @Test func theSecondMessageSharesTheWindow() {
        let c = readWebSocket([(down, Self.compressedHello), (up, masked([0x81, 0x02, 0x68, 0x69])), (down, Self.secondHello)],
                              extensions: "permessage-deflate")
        #expect(c.messages == [hello(2, 1_000, wire: 7),
                               WebSocketMessage(direction: up, opcode: .text, turn: 3, offset: 3_000, data: b("hi")),
                               hello(4, 4_000, wire: 5)])
    }

    @Test func withoutContextTakeoverTheWindowIsReset() {
        // The server said it would not refer back; the second example does, so it cannot be read.
        let c = readWebSocket([(down, Self.compressedHello + Self.secondHello)],
                              extensions: "permessage-deflate; server_no_context_takeover")
        #expect(c.messages.count == 2)
        #expect(c.messages.first == hello(2, 1_000, wire: 7))
        // Its first literal comes out before the reference back fails.
        #expect(c.messages.last?.data == b("H"))
        #expect(c.messages.last?.cut == "Inflating failed (invalid distance too far back) after 1 byte; the message is not valid DEFLATE (RFC 7692 §7.2.2).")
    }

    @Test func aCompressedMessageInFragments() {
        let c = readWebSocket([(down, [0x41, 0x03, 0xf2, 0x48, 0xcd, 0x80, 0x04, 0xc9, 0xc9, 0x07, 0x00])], extensions: "permessage-deflate")
        #expect(c.messages == [hello(2, 1_000, wire: 7)])
    }

    @Test func storedAndFinalBlocks() {
        let stored: [UInt8] = [0xc1, 0x0b, 0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00]
        let final: [UInt8] = [0xc1, 0x08, 0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00]
        let c = readWebSocket([(down, stored + final + Self.compressedHello)], extensions: "permessage-deflate")
        #expect(c.messages == [hello(2, 1_000, wire: 11), hello(2, 1_000, wire: 8), hello(2, 1_000, wire: 7)])
    }

    @Test func aClientMessageCompressedAndMasked() {
        let c = readWebSocket([(up, masked(Self.compressedHello)), (down, [0x81, 0x02, 0x6f, 0x6b])], extensions: "permessage-deflate")
        #expect(c.messages == [hello(3, 2_000, wire: 7, up),
                               WebSocketMessage(direction: down, opcode: .text, turn: 4, offset: 3_000, data: b("ok"))])
    }

    @Test func decodingStopsAtTheMessagesLimit() {
        let client = SideStream(direction: up)
        var server = SideStream(direction: down)
        for turn in turns([(down, Self.compressedHello + Self.compressedHello)]) { server.append(turn) }
        let small = DecodingBudget(ratio: 0, floor: 3, bodyCap: 100, commandCap: 8)
        let c = WebSocketReader.read(client: client, from: 0, server: server, from: 0, deflate: PerMessageDeflate(), budget: small)
        // The first decodes 5 bytes, keeping 3; the second may decode only the 3 left of 8.
        #expect(c.messages.map(\.data) == [b("Hel"), b("Hel")])
        #expect(c.messages.map(\.cut) == [
            "Decoded 3 B from 7 bytes of permessage-deflate and stopped: tv decodes a body to at most 0 times its kept size (at least 3 B); the decoded body ends there.",
            "Inflating stopped: this connection's messages decode to at most 8 B in all, and the window is lost from here on; shown: the first 3 bytes.",
        ])
    }

    @Test func aTurnCutByTheTurnLimitEndsItsMessageAndReadingResumes() {
        // A 120-byte binary message in a turn that keeps 100 bytes; then the client, then the server again.
        let big: [UInt8] = [0x82, 0x78] + [UInt8](repeating: 0xAB, count: 120)
        let c = readWebSocket([(up, masked([0x81, 0x02, 0x68, 0x69])), (down, big), (up, masked([0x81, 0x02, 0x68, 0x6f])),
                               (down, [0x81, 0x02, 0x6f, 0x6b])],
                              budget: RecordingBudget(turnLimit: 100, flowBudget: 10_000))
        #expect(c.messages == [
            WebSocketMessage(direction: up, opcode: .text, turn: 3, offset: 2_000, data: b("hi")),
            WebSocketMessage(direction: down, opcode: .binary, turn: 4, offset: 3_000, data: [UInt8](repeating: 0xAB, count: 98),
                             cut: "Cut: turn 4 kept at most 64 KiB, and the rest of this message was not kept."),
            WebSocketMessage(direction: up, opcode: .text, turn: 5, offset: 4_000, data: b("ho")),
            WebSocketMessage(direction: down, opcode: .text, turn: 6, offset: 5_000, data: b("ok")),
        ])
        #expect(c.notes == ["The server's turn 4 was cut at 64 KiB; reading its frames resumes at its next turn kept, 6."])
        #expect(c.problems == [])
    }

    @Test func afterACutTurnTheWindowIsLost() {
        let big: [UInt8] = [0xc2, 0x7E, 0x00, 0xC8] + [UInt8](repeating: 0xAB, count: 200)
        let hi = masked([0x81, 0x02, 0x68, 0x69])
        let c = readWebSocket([(up, hi), (down, big), (up, hi), (down, Self.compressedHello)],
                              extensions: "permessage-deflate", budget: RecordingBudget(turnLimit: 130, flowBudget: 10_000))
        #expect(c.messages.count == 4)
        #expect(c.messages.last?.data == [])
        #expect(c.messages.last?.cut == "Not inflated: the server's turn 4 was cut, and what it lost fed the compression window this message refers back to (RFC 7692 §7.2.2: context takeover).")
    }

    @Test func theFlowBudgetStopsASide() {
        let c = readWebSocket([(up, masked([0x81, 0x02, 0x68, 0x69])), (down, [0x82, 0x7E, 0x01, 0x2C] + [UInt8](repeating: 1, count: 300))],
                              budget: RecordingBudget(turnLimit: 1_000, flowBudget: 200))
        #expect(c.messages.last?.data.count ?? 0 > 0)
        #expect(c.messages.last?.cut?.hasPrefix("Cut: the recording budget stopped the server's side in turn 4") == true)
        #expect(c.problems.map(\.turn) == [4])
    }

    @Test func theExchangeCarriesTheMessagesAndTheNote() throws {
        let read = try #require(conversation(turns([
            (up, b("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")),
            (down, b("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n") + [0x81, 0x02, 0x68, 0x69]),
            (up, [0x81, 0x82, 0, 0, 0, 0, 0x68, 0x69]),
        ])))
        #expect(read.notes == ["The connection switched to WebSocket (101 Switching Protocols) in turn 2; its messages are read with that exchange."])
        #expect(read.exchanges.first?.webSocket?.messages.map(\.data) == [b("hi"), b("hi")])
    }
}
