import Foundation
import Testing

/// A WebSocket through `tv run --inspect --keep-content`: python3's `websockets` client (through
/// a CONNECT tunnel) and server (TLS), with and without permessage-deflate, read back as
/// messages by `tv request N --json`, `tv request N`, `tv turns N --http` and `tv export har`
/// (trial 42: Chromium's `hello ws`, `echo: {"a":1}` and binary 1,2,3,250 were hex of masked,
/// compressed frames, and the HAR had none of them).
@Suite("tv run --keep-content: WebSocket messages after a 101", .serialized)
struct WebSocketRunTests {
    /// argv: port, certificate, key, `deflate` or `plain`. Says "welcome from server", then
    /// echoes text as "echo: TEXT" and binary as it came.
    static let server = #"""
    import ssl, sys
    from websockets.sync.server import serve
    port, cert, key, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    def echo(ws):
        ws.send("welcome from server")
        for m in ws:
            ws.send(m if isinstance(m, bytes) else "echo: " + m)
    with serve(echo, "127.0.0.1", port, ssl=ctx, compression="deflate" if mode == "deflate" else None, ping_interval=None) as server:
        server.serve_forever()
    """#

    /// argv: proxy port, target, CA file. Through a CONNECT tunnel: waits for the welcome, then
    /// sends each message after the echo of the one before (so the turns' order is fixed), and
    /// closes (1000).
    static let client = #"""
    import socket, sys
    import ssl
    from websockets.sync.client import connect
    proxy, target, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    ctx = ssl.create_default_context(cafile=cafile)
    with connect(f"wss://{target}/ws", sock=s, ssl=ctx, server_hostname="localhost", ping_interval=None) as ws:
        got = [ws.recv()]
        for m in ["hello ws", '{"a":1}', bytes([1, 2, 3, 250])]:
            ws.send(m)
            got.append(ws.recv())
    print(got)
    """#

    /// The messages both ways: (direction, type, text or base64).
    static let expected: [(String, String, String)] = [
        ("server_to_client", "text", "welcome from server"),
        ("client_to_server", "text", "hello ws"),
        ("server_to_client", "text", "echo: hello ws"),
        ("client_to_server", "text", #"{"a":1}"#),
        ("server_to_client", "text", #"echo: {"a":1}"#),
        ("client_to_server", "binary", "AQID+g=="),
        ("server_to_client", "binary", "AQID+g=="),
    ]

    @Test("with permessage-deflate: the messages in tv request --json, tv request, tv turns --http and the HAR")
    func deflate() throws { try exchange(compressed: true) }

    @Test("without an extension: the same messages, none compressed")
    func plain() throws { try exchange(compressed: false) }

    func exchange(compressed: Bool) throws {
        let world = try RunWorld()
        let box = world.sandbox
        // The system's python3 when its websockets has the sync API (11 or later), else the
        // test venv's (Debian 12 ships 10.4).
        let python = try box.tool("python3", ["-c", "import websockets.sync.server"]).status == 0 ? "python3" : try PyPIVenv.websockets.get()
        let server = try PythonServer(Self.server, arguments: [world.pki.serverCert, world.pki.serverKey, compressed ? "deflate" : "plain"],
                                      python: python)
        defer { server.stop() }
        let tv = try world.run("--inspect", "--keep-content")
        let target = "localhost:\(server.port)"
        let run = try box.python(Self.client, [String(tv.port), target, world.tvRoot], timeout: 30, interpreter: python)
        #expect(run.out == #"['welcome from server', 'echo: hello ws', 'echo: {"a":1}', b'\x01\x02\x03\xfa']"# + "\n", "\(run)")
        let flows = try box.closedFlows(1)
        let flow = try #require(flows.first?.int("id"))
        let rows = try box.json("requests", "--flow", String(flow))["requests"] as? [JSON] ?? []
        let request = try #require(rows.first?.int("id"), "\(rows)")

        // --json: the 101's exchange carries the messages, each side's close last.
        let detail = try box.json("request", String(request))
        let webSocket = try #require(detail.object("content")?.object("webSocket"), "\(detail)")
        let messages = webSocket["messages"] as? [JSON] ?? []
        let data = messages.filter { ["text", "binary"].contains($0.string("type") ?? "") }
        #expect(data.map { $0.string("direction") ?? "" } == Self.expected.map(\.0))
        #expect(data.map { $0.string("type") ?? "" } == Self.expected.map(\.1))
        #expect(data.map { $0.string("text") ?? $0.string("base64") ?? "" } == Self.expected.map(\.2))
        #expect(data.map { $0["cut"] is NSNull } == Array(repeating: true, count: 7))
        let closes = messages.filter { $0.string("type") == "close" }
        #expect(closes.map { $0.int("closeCode") ?? 0 } == [1000, 1000], "\(messages)")
        #expect(closes.first?.string("direction") == "client_to_server")
        #expect((webSocket["problems"] as? [JSON])?.isEmpty == true, "\(webSocket)")
        if compressed {
            #expect((webSocket.string("extensions") ?? "").hasPrefix("permessage-deflate"), "\(webSocket)")
            #expect(data.contains { $0["compressed"] as? Bool == true }, "\(data)")
        } else {
            #expect(webSocket["extensions"] is NSNull)
            #expect(data.allSatisfy { $0["compressed"] as? Bool == false })
        }

        // The people's view: the messages after the 101, text as text and binary as hex.
        let shown = try box.tv("request", String(request)).out
        #expect(shown.contains("  switched protocols to WebSocket; its messages follow the response\n"), "\(shown)")
        #expect(shown.contains("  WebSocket: 9 messages"), "\(shown)")
        #expect(matches(shown, #"    turn \d+  → client to server  at \d+\.\d{3} s  text, 8 bytes[^\n]*\n      hello ws\n"#), "\(shown)")
        #expect(matches(shown, #"    turn \d+  ← server to client  at \d+\.\d{3} s  binary, 4 bytes[^\n]*\n      00000000  01 02 03 fa"#), "\(shown)")
        #expect(matches(shown, #"    turn \d+  → client to server  at \d+\.\d{3} s  close, code 1000\n"#), "\(shown)")
        let http = try box.tv("turns", String(flow), "--http").out
        #expect(http.contains("      echo: {\"a\":1}\n"), "\(http)")

        // The HAR: Chrome's _webSocketMessages, data messages only, times in seconds since the epoch.
        let harFile = box.work + "/ws.har"
        #expect(try box.tv("export", "har", String(flow), "-o", harFile).status == 0)
        let har = try #require(try JSONSerialization.jsonObject(with: box.read(harFile)) as? JSON)
        let entry = try #require((har.object("log")?["entries"] as? [JSON])?.first)
        #expect(entry.string("_resourceType") == "websocket")
        let harMessages = entry["_webSocketMessages"] as? [JSON] ?? []
        #expect(harMessages.map { $0.string("type") ?? "" } == Self.expected.map { $0.0 == "client_to_server" ? "send" : "receive" })
        #expect(harMessages.map { $0.int("opcode") ?? 0 } == Self.expected.map { $0.1 == "text" ? 1 : 2 })
        #expect(harMessages.map { $0.string("data") ?? "" } == Self.expected.map(\.2))
        // Within the flow's life (µs in the row; seconds in the HAR).
        let started = Double(try #require(flows.first?.int("startTime"))) / 1_000_000
        let ended = Double(try #require(flows.first?.int("lastActivityTime"))) / 1_000_000
        #expect(harMessages.allSatisfy { (started - 0.001...ended + 0.001).contains(($0["time"] as? Double) ?? 0) }, "\(started) \(ended) \(harMessages)")
        try tv.stop()
    }
}
