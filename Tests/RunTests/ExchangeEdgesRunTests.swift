import Foundation
import Testing

/// Issue 16's edges through the real `tv` binary (found by the walkthrough).
@Suite("tv run: HTTP exchange rows at their edges (issue 16)", .serialized)
struct ExchangeEdgesRunTests {
    @Test("a 502 tv answers itself (the server refused) is a row answered by tv, with its status and reason, not a cut request")
    func tvAnswered502() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        let closedPort = freeLoopbackPort()
        let r = try box.curl(["-x", tv.proxyURL, "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(closedPort)/gone"])
        #expect(r.out == "502", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 1)
        #expect(rows.first?.string("state") == "answered")
        #expect(rows.first?.int("status") == 502)
        #expect(rows.first?.string("reason") == "Bad Gateway")
        #expect(rows.first?.string("path") == "/gone")
        let listed = try box.tv("requests").out
        #expect(listed.contains("502 by tv"), "\(listed)")
        #expect(!listed.contains("incomplete"), "\(listed)")
        let id = rows.first?.int("id") ?? 0
        let detail = try box.tv("request", String(id)).out
        #expect(detail.contains("status 502 Bad Gateway — answered by tv, not the server"), "\(detail)")
        // `~e` (failed) finds it; `~q` (no response of the server's) too.
        #expect((try box.json("requests", "--filter", "~e")["requests"] as? [JSON] ?? []).count == 1)
        #expect((try box.json("requests", "--filter", "~q")["requests"] as? [JSON] ?? []).count == 1)
    }

    @Test("HTTP/2: nginx answering an upload early (413, its body limit) and resetting the stream NO_ERROR reaches curl as it does directly: the reset goes in a record of its own (coalesced with the response, Debian's curl 7.88 failed: a trial)")
    func earlyAnswerOverHTTP2() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let body = box.work + "/upload.bin"
        try Data(repeating: 0x61, count: 3 << 20).write(to: URL(fileURLWithPath: body))
        let direct = try box.curl(["--cacert", world.pki.upstreamCA, "--http2", "--data-binary", "@" + body, "-o", "/dev/null", "-w", "%{http_code}",
                                   world.url("/index.html")])
        #expect(direct.status == 0 && direct.out == "413", "\(direct)")
        for _ in 0..<3 {
            let through = try world.curlThrough(tv, ["--http2", "--data-binary", "@" + body, "-o", "/dev/null", "-w", "%{http_code}", world.url("/index.html")])
            #expect(through.status == 0 && through.out == "413", "\(through)")
        }
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 3 && rows.allSatisfy { $0.int("status") == 413 && $0.string("state") == "complete" }, "\(rows)")
        try tv.stop()
    }

    @Test("a POST whose body comes after its head, to a port nobody listens on: tv's 502 is its row's answer (502 by tv, ~q, not ~s), ended no earlier than its first response byte")
    func answeredBeforeTheBodyCame() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let tv = try world.run()
        let closed = freeLoopbackPort()
        let client = """
            import socket, sys, time
            s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
            s.sendall(b'POST http://127.0.0.1:%s/split HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\nContent-Length: 809\\r\\n\\r\\n' % (sys.argv[2].encode(), sys.argv[2].encode()))
            time.sleep(0.3)
            try: s.sendall(b'x' * 809)
            except OSError: pass
            data = b''
            while True:
                try: chunk = s.recv(65536)
                except OSError: break
                if not chunk: break
                data += chunk
            print(data.split(b'\\r\\n')[0].decode())
            """
        let r = try box.python(client, [String(tv.port), String(closed)])
        #expect(r.out == "HTTP/1.1 502 Bad Gateway\n", "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 1 && rows.first?.string("state") == "answered" && rows.first?.int("status") == 502, "\(rows)")
        let row = try #require(rows.first)
        let response = try #require(row.int("responseTime")), end = try #require(row.int("endTime"))
        #expect(end >= response, "\(row)")
        #expect((try box.json("requests", "--filter", "~s")["requests"] as? [JSON] ?? []).isEmpty)
        #expect((try box.json("requests", "--filter", "~q")["requests"] as? [JSON] ?? []).count == 1)
    }

    /// Answers by path: `/split` a head in two writes 300 ms apart, `/splitbad` a head in two
    /// writes whose second makes it unreadable (two Content-Lengths that disagree), `/close` no
    /// answer, `/both` Content-Length and Transfer-Encoding together, `/half` half a head then a close, `/nohttp` a line that is not HTTP then a close.
    static let headServer = #"""
    import socket, sys, threading, time
    l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(16)
    def serve(c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk: return
                data += chunk
            path = data.split(b" ")[1]
            if path == b"/split":
                c.sendall(b"HTTP/1.1 200 OK\r\nConte"); time.sleep(0.3)
                c.sendall(b"nt-Length: 5\r\nConnection: close\r\n\r\nhello")
            elif path == b"/splitbad":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"); time.sleep(0.3)
                c.sendall(b"Content-Length: 5\r\n\r\nhello")
            elif path == b"/both":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            elif path == b"/half":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-")
            elif path == b"/nohttp":
                c.sendall(b"hello world\n")
            time.sleep(0.2)
    while True:
        c, _ = l.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    @Test("a response head is passed on only once whole: split across reads it arrives intact; unreadable (both Content-Length and Transfer-Encoding among them), unfinished or missing, curl gets tv's 502 with the reason, not a reset, an empty reply or HTTP/0.9")
    func responseHeadsHeldUntilWhole() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let server = try PythonServer(Self.headServer)
        defer { server.stop() }
        // Directly, curl sees what the server did: the baseline tv's answers replace.
        let direct = try box.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/close"])
        #expect(direct.status == 52 && direct.err.contains("Empty reply from server"), "\(direct)")
        let tv = try world.run()
        let split = try box.curl(["-x", tv.proxyURL, "-w", " %{http_code}", "http://127.0.0.1:\(server.port)/split"])
        #expect(split.status == 0 && split.out == "hello 200", "\(split)")
        let cases: [(String, String)] = [
            ("/splitbad", "tv: the server's response was not understood: The response has Content-Length values that disagree (3, 5), so its body cannot be delimited (RFC 9112 §6.3)."),
            ("/both", "tv: the server's response was not understood: The response has both Content-Length and Transfer-Encoding, which RFC 9112 §6.3 says may be an attempt at response splitting and ought to be handled as an error."),
            ("/close", "tv: the server closed the connection before its response was complete"),
            ("/half", "tv: the server closed the connection before its response was complete"),
            ("/nohttp", "tv: the server closed the connection before its response was complete"),
        ]
        for (path, body) in cases {
            let r = try box.curl(["-x", tv.proxyURL, "-w", "\n%{http_code}", "http://127.0.0.1:\(server.port)\(path)"])
            #expect(r.status == 0 && r.out == body + "\n\n502", "\(path): \(r)")
        }
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let flows = try box.json("flows")["flows"] as? [JSON] ?? []
        #expect(flows.count == 6, "\(flows)")
        let errors = Set(flows.compactMap { $0.string("error") })
        #expect(errors == ["the server's response was not understood: The response has Content-Length values that disagree (3, 5), so its body cannot be delimited (RFC 9112 §6.3).",
                           "the server's response was not understood: The response has both Content-Length and Transfer-Encoding, which RFC 9112 §6.3 says may be an attempt at response splitting and ought to be handled as an error.",
                           "the server closed the connection before its response was complete"], "\(flows)")
        // The request rows read what reached the client: tv's 502, not a cut response.
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        let byPath = Dictionary(rows.compactMap { row in row.string("path").map { ($0, row) } }) { a, _ in a }
        #expect(byPath["/split"]?.int("status") == 200 && byPath["/split"]?.string("state") == "complete", "\(rows)")
        for (path, _) in cases {
            #expect(byPath[path]?.int("status") == 502 && byPath[path]?.string("state") == "answered", "\(path): \(rows)")
        }
    }

    @Test("a response streaming for seconds: its row shows the status and the bytes so far while it lasts (it kept the head's burst's size until the end: a trial), then complete with all of them")
    func streamingRowGrows() throws {
        let server = try PythonServer(#"""
            import socket, sys, threading, time
            l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(4)
            while True:
                c, _ = l.accept()
                data = b""
                while b"\r\n\r\n" not in data:
                    data += c.recv(65536)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n" + b"a" * 1000)
                for _ in range(9):
                    time.sleep(0.7); c.sendall(b"b" * 1000)
                c.close()
            """#)
        defer { server.stop() }
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let tv = try world.run()
        let client = Background.python("""
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.sendall(b"GET http://127.0.0.1:%s/slow HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\n\\r\\n" % (sys.argv[2].encode(), sys.argv[2].encode()))
            n = 0
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                n += len(chunk)
            print(n)
            """, [String(tv.port), String(server.port)])
        defer { client.stop() }
        var grown: JSON?
        for _ in 0..<60 where grown == nil {
            usleep(200_000)
            let rows = try box.json("requests")["requests"] as? [JSON] ?? []
            grown = rows.first { $0.string("state") == "open" && $0.int("status") == 200 && ($0.int("responseBodyBytes") ?? 0) > 1000 }
        }
        #expect(grown != nil, "no open row grew past the head's burst")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 1 && rows.first?.string("state") == "complete" && rows.first?.int("responseBodyBytes") == 10000, "\(rows)")
    }
}
