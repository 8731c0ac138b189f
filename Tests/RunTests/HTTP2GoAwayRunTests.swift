import Foundation
import Testing

/// An inspected HTTP/2 connection one side ends with an error (RFC 9113 §6.8 GOAWAY, §7 codes):
/// a python3 client speaking raw frames through `tv run`'s CONNECT tunnel to nginx (h2 by ALPN).
/// nginx answers a connection WINDOW_UPDATE of 0 with GOAWAY PROTOCOL_ERROR (§6.9); the client
/// sends its own GOAWAY ENHANCE_YOUR_CALM, and a graceful NO_ERROR one. The flow's error says
/// the first two and nothing of the third (a trial's connections ended by GOAWAY PROTOCOL_ERROR
/// and FLOW_CONTROL_ERROR read as clean).
@Suite("tv run: an HTTP/2 connection ended by GOAWAY with an error says so on its flow", .serialized)
struct HTTP2GoAwayRunTests {
    /// argv: proxy port, target, CA file, what to end with (`window-zero`, `calm`, `graceful`).
    /// GETs /index.html on stream 1 and reads its response, then ends as told and closes; after
    /// `window-zero` prints the server's GOAWAY as "goaway CODE LAST" (nginx keeps a connection
    /// the client's GOAWAY ended open until its keep-alive timeout: the client closes at once).
    static let client = #"""
    import socket, ssl, struct, sys
    proxy, target, cafile, end = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.create_connection(("127.0.0.1", proxy), timeout=10)
    s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.startswith(b"HTTP/1.1 200"), head
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["h2"])
    t = ctx.wrap_socket(s, server_hostname="localhost")
    assert t.selected_alpn_protocol() == "h2", t.selected_alpn_protocol()
    def frame(kind, flags, stream, payload): return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload
    def lit(index, value): return bytes([index]) + bytes([len(value)]) + value.encode()
    block = b"\x82\x87" + lit(0x04, "/index.html") + lit(0x01, target)  # GET https, :path and :authority literal
    t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") + frame(1, 5, 1, block))
    buf, goaway = b"", None
    def frames():
        global buf
        while True:
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                n = int.from_bytes(buf[:3], "big")
                f = (buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n])
                buf = buf[9 + n:]
                yield f
            d = t.recv(65536)
            if not d: return
            buf += d
    for kind, flags, stream, payload in frames():
        if kind == 4 and not flags & 1: t.sendall(frame(4, 1, 0, b""))
        if kind == 0 and stream == 1 and flags & 1: break
    if end == "window-zero":
        t.sendall(frame(8, 0, 0, b"\x00\x00\x00\x00"))
    elif end == "calm":
        t.sendall(frame(7, 0, 0, struct.pack(">II", 0, 0xb) + b"slow down"))
    else:
        t.sendall(frame(7, 0, 0, struct.pack(">II", 0, 0)))
    if end == "window-zero":
        for kind, flags, stream, payload in frames():
            if kind == 7:
                goaway = struct.unpack(">II", payload[:8])
        # nginx closes after its GOAWAY: read to the end (closing with bytes unread would reset).
    t.close()
    print("goaway %d %d" % (goaway[1], goaway[0] & 0x7fffffff) if goaway else "closed")
    """#

    /// Runs the client ending as `end`; returns its line and the flow's row after tv saw it end.
    private func run(_ end: String) throws -> (said: String, flow: JSON, requests: [JSON]) {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        defer { withExtendedLifetime((world, tv)) {} }
        let target = "localhost:\(world.nginx.tlsPort)"
        let client = try box.python(Self.client, [String(tv.port), target, world.tvRoot, end], timeout: 30)
        #expect(client.status == 0, "\(client)")
        let flow = try #require(try box.closedFlows(1).first)
        let requests = try box.json("requests", "--flow", String(flow.int("id") ?? 0))["requests"] as? [JSON] ?? []
        return (client.out, flow, requests)
    }

    @Test("nginx's GOAWAY PROTOCOL_ERROR after a connection WINDOW_UPDATE of 0: the flow's error names the server, the code and the last stream; the request before it stays complete")
    func serverEndsWithProtocolError() throws {
        let (said, flow, requests) = try run("window-zero")
        #expect(said == "goaway 1 1\n")
        #expect(flow.string("status") == "inspected")
        #expect(flow.string("error") == "the server ended HTTP/2 with GOAWAY PROTOCOL_ERROR; streams after 1 went unprocessed (RFC 9113 §6.8)", "\(flow)")
        #expect(requests.map { "\($0.string("state") ?? "?") \($0.int("status") ?? 0)" } == ["complete 200"], "\(requests)")
    }

    @Test("the client's GOAWAY ENHANCE_YOUR_CALM with debug text: said with its text")
    func clientEndsWithAnError() throws {
        let (_, flow, requests) = try run("calm")
        #expect(flow.string("error") == "the client ended HTTP/2 with GOAWAY ENHANCE_YOUR_CALM ('slow down'); it processed no stream (RFC 9113 §6.8)", "\(flow)")
        #expect(requests.count == 1)
    }

    @Test("a graceful GOAWAY (NO_ERROR) is no error")
    func gracefulEndIsClean() throws {
        let (_, flow, _) = try run("graceful")
        #expect(flow["error"] is NSNull, "\(flow)")
    }
}
