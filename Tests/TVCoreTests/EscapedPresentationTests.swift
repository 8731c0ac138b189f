import FlowStore
import HTTPReading
import Recording
import Testing
@testable import TVCore

/// Issue 12 §4: each presentation escapes what came from the network with `TerminalText`, field
/// by field, and keeps its own words, columns and lines. Exact lines; `#"…"#` holds backslashes
/// as printed.
@Suite struct EscapedPresentationTests {
    let now: Int64 = 1_764_471_900_000_000
    static let attack = "\u{1B}]0;t\u{07}\u{202E}"
    static let shown = #"\x1b]0;t\x07\u{202E}"#

    func hostile() -> FlowRecord {
        FlowRecord(id: 4, startTime: now - 12_000_000, clientAddress: "127.0.0.1", clientPort: 50_000,
                   serverAddress: "192.0.2.1", serverPort: 443, host: "a" + Self.attack + "\nb", hostOrigin: .sni,
                   alpn: "h2\u{1B}[2J", tlsVersion: "TLSv1.3", status: .failed, failureReason: "alert \u{00}x",
                   bytesUp: 1536, bytesDown: 2048, duration: 1_250_000, error: "bad\u{9B}2J",
                   clientVersions: ["TLSv1.3"], clientALPN: ["h2", "\u{2066}x"],
                   certificateSubject: "CN=ü\u{1B}[1m", certificateIssuer: "CN=例\u{7F}", certificateSANs: ["DNS:a\tb"])
    }

    @Test("tv flows: host, ALPN and reason escaped, columns still aligned")
    func list() {
        let lines = FlowListPresentation(page: FlowPage(flows: [hostile()], nextCursor: nil), now: now).lines()
        #expect(lines == [
            #"ID  WHEN      HOST                      PROTO PORT             UP       DOWN  DURATION  STATUS"#,
            #" 4  12 s ago  a\x1b]0;t\x07\u{202E}\nb  h2\x1b[2J :443  ↑ 1.5 KiB  ↓ 2.0 KiB     1.3 s  failed: alert \x00x"#,
        ])
    }

    @Test("tv flow: every peer field on its own line, escaped")
    func detail() {
        let lines = FlowDetailPresentation.lines(hostile(), now: now)
        #expect(Array(lines.prefix(2)) == [#"Flow 4: a\x1b]0;t\x07\u{202E}\nb"#,
                                           #"  name         a\x1b]0;t\x07\u{202E}\nb (from the TLS ClientHello (SNI))"#])
        #expect(lines.contains(#"  status       failed — alert \x00x"#))
        #expect(lines.contains(#"  error        bad\u{9B}2J"#))
        #expect(lines.contains(#"  offered      versions TLSv1.3; ALPN h2, \u{2066}x"#))
        #expect(lines.contains(#"  chosen       TLSv1.3; ALPN h2\x1b[2J"#))
        #expect(lines.contains(#"  certificate  CN=ü\x1b[1m"#))
        #expect(lines.contains(#"    issuer     CN=例\x7f"#))
        #expect(lines.contains(#"    names      DNS:a\tb"#))
    }

    @Test("tv turns: the title escaped, text previews keep tabs and escape the rest")
    func turns() {
        let bytes = Array("one\t\u{202E}two\nthree\u{2028}\n".utf8)
        let item = TurnsPresentation.Item(turn: Turn(number: 1, direction: .serverToClient, startOffset: 0,
                                                     keptBytes: bytes.count, seenBytes: bytes.count), bytes: bytes)
        #expect(TurnsPresentation(flowID: 4, flow: hostile(), items: [item]).lines() == [
            #"Flow 4: a\x1b]0;t\x07\u{202E}\nb"#,
            "",
            "Turn 1  ← server to client  at 0.000 s  20 bytes",
            "  one\t" + #"\u{202E}two"#,
            #"  three\u{2028}"#,
        ])
    }

    @Test("tv turns --http: start line (:path), header names and values, trailers, frames and reasons escaped")
    func http() {
        let request = HTTPMessage(startLine: "GET /\u{1B}[2J HTTP/2", headers: [HTTPHeader(":path", "/\u{1B}[2J"),
                                                                              HTTPHeader("x-\u{1B}]0;n\u{07}", "v\u{00}\u{9B}")],
                                  body: .none, turn: 1, offset: 0)
        let response = HTTPMessage(startLine: "HTTP/2 200", headers: [HTTPHeader("x-t", "\u{202E}r")],
                                   trailers: [HTTPHeader("grpc-message", "m\u{1B}[0m\nx")],
                                   body: HTTPBody(framing: "DATA frames", transferred: Array("a\u{202E}b\n".utf8)), turn: 2, offset: 1_000)
        let conversation = HTTPConversation(
            version: "HTTP/2", exchanges: [HTTPExchange(streamID: 1, request: request, response: response)],
            connectionLines: [.init(direction: .serverToClient, turn: 2, offset: 1_000, text: "GOAWAY, debug '\u{1B}[2J'")],
            problems: [.init(direction: .serverToClient, turn: 2, reason: "'\u{1B}]0;x\u{07}' is not a frame.")])
        #expect(HTTPPresentation(flowID: 4, flow: nil, result: .conversation(conversation)).lines() == [
            "Flow 4 — read as HTTP/2, 1 exchange",
            "",
            "",
            "#1  stream 1",
            "  → client to server  turn 1  at 0.000 s",
            #"    GET /\x1b[2J HTTP/2"#,
            #"    x-\x1b]0;n\x07: v\x00\u{9B}"#,
            "  ← server to client  turn 2  at 0.001 s",
            "    HTTP/2 200",
            #"    x-t: \u{202E}r"#,
            "    body: 6 bytes, DATA frames",
            #"      a\u{202E}b"#,
            #"    trailer grpc-message: m\x1b[0m\nx"#,
            #"turn 2  ← server to client  GOAWAY, debug '\x1b[2J'"#,
            "",
            #"Reading stopped at turn 2 ← server to client: '\x1b]0;x\x07' is not a frame."#,
            "The plain view (tv turns 4) shows every byte that was kept.",
        ])
        #expect(HTTPPresentation(flowID: 4, flow: nil, result: .notHTTP(reason: "It starts '\u{1B}[2J'.")).lines()
                == ["Flow 4", #"Not read as HTTP: It starts '\x1b[2J'. The plain view follows."#])
    }
}
