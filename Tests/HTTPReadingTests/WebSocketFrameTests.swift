import Testing
@testable import HTTPReading

/// RFC 6455 §5.7's example frames, byte for byte, and the rules of §5.1–§5.5.
@Suite struct WebSocketFrameTests {
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]

    func parse(_ bytes: [UInt8], fromClient: Bool, rsv1: Bool = false) -> WebSocketFrameParser.Result {
        WebSocketFrameParser.parse(bytes, at: 0, end: bytes.count, fromClient: fromClient, rsv1Allowed: rsv1)
    }

    @Test func unmaskedHello() {
        #expect(parse([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], fromClient: false)
                == .frame(WebSocketFrame(fin: true, rsv1: false, opcode: .text, masked: false, payload: b("Hello")), next: 7))
    }

    @Test func maskedHelloIsUnmasked() {
        #expect(parse(Self.maskedHello, fromClient: true)
                == .frame(WebSocketFrame(fin: true, rsv1: false, opcode: .text, masked: true, payload: b("Hello")), next: 11))
    }

    @Test func fragmentsAreJoined() {
        let bytes: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]
        #expect(parse(bytes, fromClient: false)
                == .frame(WebSocketFrame(fin: false, rsv1: false, opcode: .text, masked: false, payload: b("Hel")), next: 5))
        #expect(WebSocketFrameParser.parse(bytes, at: 5, end: bytes.count, fromClient: false, rsv1Allowed: false)
                == .frame(WebSocketFrame(fin: true, rsv1: false, opcode: .continuation, masked: false, payload: b("lo")), next: 9))
        let c = readWebSocket([(down, bytes)])
        #expect(c.messages == [WebSocketMessage(direction: down, opcode: .text, turn: 2, offset: 1_000, data: b("Hello"))])
        #expect(c.problems == [])
    }

    @Test func pingAndMaskedPong() {
        let c = readWebSocket([(down, [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]),
                               (up, [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])])
        #expect(c.messages == [WebSocketMessage(direction: down, opcode: .ping, turn: 2, offset: 1_000, data: b("Hello")),
                               WebSocketMessage(direction: up, opcode: .pong, turn: 3, offset: 3_000, data: b("Hello"))])
        #expect(c.problems == [])
    }

    @Test func lengthsOf256And65536() {
        let small = (0..<256).map { UInt8($0 & 0xff) }
        #expect(parse([0x82, 0x7E, 0x01, 0x00] + small, fromClient: false)
                == .frame(WebSocketFrame(fin: true, rsv1: false, opcode: .binary, masked: false, payload: small), next: 260))
        let large = (0..<65_536).map { UInt8(($0 * 7) & 0xff) }
        #expect(parse([0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + large, fromClient: false)
                == .frame(WebSocketFrame(fin: true, rsv1: false, opcode: .binary, masked: false, payload: large), next: 65_546))
    }

    @Test func aCutFrameKeepsItsPayloadSoFar() {
        #expect(parse(Array(Self.maskedHello.prefix(9)), fromClient: true)
                == .needsMore(header: WebSocketFrame(fin: true, rsv1: false, opcode: .text, masked: true, payload: b("Hel")), expected: 5))
        #expect(parse([0x82, 0x7F, 0, 0], fromClient: false) == .needsMore(header: nil, expected: nil))
    }

    @Test func brokenRulesAreSaid() {
        #expect(parse([0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], fromClient: true) == .malformed(.clientFrameUnmasked))
        #expect(parse(Self.maskedHello, fromClient: false) == .malformed(.serverFrameMasked))
        #expect(parse([0x83, 0x00], fromClient: false) == .malformed(.reservedOpcode(3)))
        #expect(parse([0xC1, 0x00], fromClient: false) == .malformed(.reservedBits(0x40)))
        #expect(parse([0xA1, 0x00], fromClient: false, rsv1: true) == .malformed(.reservedBits(0x20)))
        #expect(parse([0x89, 0x7E, 0x00, 0x7E], fromClient: false) == .malformed(.controlTooLong(126)))
        #expect(parse([0x09, 0x00], fromClient: false) == .malformed(.controlFragmented(.ping)))
        #expect(parse([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], fromClient: false) == .malformed(.lengthTooLarge))
        #expect(WebSocketFrameError.controlTooLong(126).sentence
                == "A control frame carries 126 payload bytes, more than the 125 allowed (RFC 6455 §5.5).")
        #expect(WebSocketFrameError.clientFrameUnmasked.sentence
                == "A frame from the client is not masked, which every client frame must be (RFC 6455 §5.1).")
    }

    @Test func aContinuationWithoutStartStopsTheSide() {
        let c = readWebSocket([(down, [0x81, 0x02, 0x68, 0x69, 0x80, 0x02, 0x6c, 0x6f])])
        #expect(c.messages == [WebSocketMessage(direction: down, opcode: .text, turn: 2, offset: 1_000, data: b("hi"))])
        #expect(c.problems == [.init(direction: down, turn: 2,
            reason: "A continuation frame comes without a fragmented message begun (RFC 6455 §5.4). Reading the server's frames stops here.")])
    }

    @Test func closeCarriesCodeAndReason() {
        let c = readWebSocket([(down, [0x88, 0x06, 0x03, 0xE8] + b("bye!"))])
        let close = try? #require(c.messages.first)
        #expect(close?.opcode == .close)
        #expect(close?.closeCode == 1000)
        #expect(close?.closeReason == "bye!")
    }
}

/// A 101 to WebSocket (turn 1 the request, turn 2 the 101 at 1 ms), then `after`, one chunk a
/// millisecond (a server chunk right after the 101 is in its turn).
func readWebSocket(_ after: [(Direction, [UInt8])], extensions: String? = nil,
                   budget: RecordingBudget = RecordingBudget()) -> WebSocketConversation {
    let parts: [(Direction, [UInt8])] = [
        (up, b("GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")),
        (down, b("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 + (extensions.map { "Sec-WebSocket-Extensions: \($0)\r\n" } ?? "") + "\r\n")),
    ] + after
    guard case let .conversation(c) = HTTPReader.read(turns(parts, budget: budget)),
          let webSocket = c.exchanges.first?.webSocket else { return WebSocketConversation(messages: [], notes: ["not read"]) }
    return webSocket
}

import Recording
import FlowTerms
