import Foundation
import Testing

/// `tv request ID --curl` through the real `tv` binary: curl's requests recorded by `tv run
/// --inspect --keep-content`, then each printed command run by bash against the same server, and
/// what the server read compared byte for byte (nginx in front of a Python server that answers
/// with the request it read).
@Suite("tv request --curl sends what the client sent", .serialized)
struct CurlReplayRunTests {
    /// Answers each request with the bytes of the request it read (head and Content-Length body).
    static let echoServer = #"""
    import socket, sys, threading
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(16)
    def serve(c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                d = c.recv(65536)
                if not d:
                    return
                data += d
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                d = c.recv(65536)
                if not d:
                    break
                body += d
            out = head + b"\r\n\r\n" + body
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(out) + out)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    @Test("a body starting with @, an empty header, no User-Agent or Accept, a text body with line ends and ESC: the replay's request is the original's, byte for byte")
    func replaysTheSameRequest() throws {
        let echo = try PythonServer(Self.echoServer)
        defer { echo.stop() }
        let world = try RunWorld(nginxLocations: "location /echo/ { proxy_pass http://127.0.0.1:\(echo.port); proxy_http_version 1.1; }")
        let box = world.sandbox
        let tv = try world.run("--inspect", "--keep-content")
        let text = "line\r\nnext\n\ttab \u{1B}[31m 'q' $HOME\r" + String(repeating: "z", count: 1_100)
        let originals: [(path: String, arguments: [String])] = [
            ("/echo/at", ["--http1.1", "-H", "User-Agent:", "-H", "Accept:", "-H", "Content-Type:", "--data-raw", "@/etc/hostname"]),
            ("/echo/empty", ["--http2", "-H", "X-Empty;", "-H", "User-Agent: app/1", "-H", "Accept:"]),
            ("/echo/text", ["--http1.1", "-X", "PUT", "-H", "Content-Type:", "-H", "Expect:", "--data-raw", text]),
        ]
        var sent: [String: String] = [:]
        for original in originals {
            let r = try world.curlThrough(tv, ["-s"] + original.arguments + [world.url(original.path)])
            #expect(r.status == 0 && ["POST", "GET", "PUT"].contains { r.out.hasPrefix("\($0) \(original.path) HTTP/1.1\r\n") }, "\(r)")
            sent[original.path] = r.out
        }
        #expect(sent["/echo/at"]?.hasSuffix("\r\n\r\n@/etc/hostname") == true, "\(sent)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try box.json("requests")["requests"] as? [JSON] ?? []
        for original in originals {
            let row = try #require(rows.first { $0.string("path") == original.path }, "\(rows)")
            let curl = try box.tv("request", String(row.int("id") ?? 0), "--curl")
            #expect(curl.status == 0 && curl.out.hasPrefix("curl "), "\(curl)")
            let replay = try box.tool("bash", ["-c", curl.out.trimmingCharacters(in: .newlines) + " -s --max-time 10 --cacert '\(world.pki.upstreamCA)'"])
            #expect(replay.status == 0 && replay.out == sent[original.path], "\(curl.out)\n\(replay)\nsent: \(sent[original.path] ?? "")")
        }
    }
}
