import Foundation
import Testing

/// Issue 12 §4 end to end: escape sequences a client really sends — in HTTP/2 header values and
/// `:path` (curl through `tv run --inspect --keep-content` to nginx), in the ALPN list of a
/// ClientHello (Python) — are recorded as sent and printed only as escapes by `tv flows`,
/// `tv flow`, `tv turns` (plain and `--http`), and never by the session itself.
@Suite("tv run: terminal escapes from the network (issue 12 §4)", .serialized)
struct TerminalEscapeRunTests {
    @Test("ESC, CSI, OSC and BEL sent over HTTP/2 and in ALPN reach no terminal raw")
    func hostileClients() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")

        // The title-setting OSC and a screen clear, in a header value and in the request target.
        let h2 = try world.curlThrough(tv, ["--http2", "-o", "/dev/null", "-H", "X-Title: \u{1B}]0;pwned\u{07}\u{1B}[2J",
                                            "--request-target", "/\u{1B}[2J\u{1B}]0;path\u{07}", world.url("/")])
        #expect(h2.status == 0, "\(h2)")
        // A ClientHello whose ALPN list names an escape sequence (plus one nginx knows).
        let alpn = try box.python("""
            import socket, ssl, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.sendall(b"CONNECT localhost:%s HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n" % sys.argv[2].encode())
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                head += s.recv(1)
            ctx = ssl.create_default_context(cafile=sys.argv[3])
            ctx.set_alpn_protocols(["x\\x1b]0;alpn\\x07", "http/1.1"])
            t = ctx.wrap_socket(s, server_hostname="localhost")
            t.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n")
            while t.recv(4096):
                pass
            print(t.selected_alpn_protocol())
            """, [String(tv.port), String(world.nginx.tlsPort), world.tvRoot])
        #expect(alpn.status == 0, "\(alpn)")
        #expect(alpn.out == "http/1.1\n")

        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        let h2ID = try #require(rows[0].int("id")), alpnID = try #require(rows[1].int("id"))
        #expect(rows[1].strings("clientALPN") == ["x\u{1B}]0;alpn\u{07}", "http/1.1"])

        func clean(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
            let result = try box.tvArgs(arguments, sourceLocation: sourceLocation)
            #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
            #expect(rawTerminalControls(in: result.stdout + result.stderr) == [], "tv \(arguments.joined(separator: " "))",
                    sourceLocation: sourceLocation)
            return result.out
        }
        _ = try clean("flows")
        let flow = try clean("flow", String(alpnID))
        #expect(flow.contains(#"; ALPN x\x1b]0;alpn\x07, http/1.1"# + "\n"), "\(flow)")
        let http = try clean("turns", String(h2ID), "--http")
        #expect(http.contains(#"    GET /\x1b[2J\x1b]0;path\x07 HTTP/2"# + "\n"), "\(http)")
        #expect(http.contains(#"    x-title: \x1b]0;pwned\x07\x1b[2J"# + "\n"), "\(http)")
        _ = try clean("turns", String(h2ID))
        _ = try clean("turns", String(h2ID), "--http", "--json")
        _ = try clean("turns", String(alpnID), "--http")
        _ = try clean("status")

        try tv.stop()
        #expect(rawTerminalControls(in: Data(tv.log().utf8)) == [], "the session's own output")
    }
}
