import Testing
import FlowTerms
import HTTPReading
@testable import TVCore

/// How `tv turns --http` and `tv request` list a WebSocket's messages, and what `--json` carries.
@Suite struct WebSocketPresentationTests {
    static let conversation = WebSocketConversation(
        deflate: PerMessageDeflate(serverMaxWindowBits: 12),
        messages: [
            WebSocketMessage(direction: .clientToServer, opcode: .text, turn: 3, offset: 51_384, data: Array("hello ws".utf8),
                             wireSize: 10, compressed: true),
            WebSocketMessage(direction: .serverToClient, opcode: .binary, turn: 4, offset: 60_000, data: [1, 2, 3, 250]),
            WebSocketMessage(direction: .clientToServer, opcode: .text, turn: 5, offset: 70_000, data: [], wireSize: 7, compressed: true,
                             cut: "Not inflated: the client's turn 3 was cut."),
            WebSocketMessage(direction: .serverToClient, opcode: .close, turn: 6, offset: 80_000, data: [0x03, 0xE8] + Array("bye\u{1B}".utf8)),
        ],
        notes: ["The client's turn 3 was cut at 64 KiB; reading its frames resumes at its next turn kept, 5."])

    @Test func lines() {
        #expect(WebSocketPresentation.lines(Self.conversation, full: false) == [
            "  WebSocket: 4 messages, permessage-deflate; server_max_window_bits=12",
            "    turn 3  → client to server  at 0.051 s  text, 8 bytes (10 compressed)",
            "      hello ws",
            "    turn 4  ← server to client  at 0.060 s  binary, 4 bytes",
            "      00000000  01 02 03 fa                                       |....|",
            "    turn 5  → client to server  at 0.070 s  text, 7 bytes compressed, not inflated",
            "      Not inflated: the client's turn 3 was cut.",
            "    turn 6  ← server to client  at 0.080 s  close, code 1000, reason \u{201C}bye\\x1b\u{201D}",
            "    The client's turn 3 was cut at 64 KiB; reading its frames resumes at its next turn kept, 5.",
        ])
    }

    @Test func json() {
        let json = WebSocketPresentation.json(Self.conversation).serialized()
        #expect(json.hasPrefix(#"{"extensions":"permessage-deflate; server_max_window_bits=12","messages":[{"direction":"client_to_server","turn":3,"startOffset":51384,"opcode":1,"type":"text","text":"hello ws","size":8,"wireSize":10,"compressed":true,"cut":null},{"direction":"server_to_client","turn":4,"startOffset":60000,"opcode":2,"type":"binary","base64":"AQID+g==","size":4,"wireSize":4,"compressed":false,"cut":null},"#), "\(json)")
        #expect(json.contains(#"{"direction":"server_to_client","turn":6,"startOffset":80000,"opcode":8,"type":"close","closeCode":1000,"text":"bye\u001b","#), "\(json)")
    }
}
