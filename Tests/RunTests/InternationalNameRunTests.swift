import Foundation
import Testing

/// Sends argv[2] (UTF-8, `\r\n` as given) to the proxy on 127.0.0.1:argv[1] and prints the whole
/// answer as UTF-8 (the server closes, or 10 s pass).
private let rawRequest = #"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2].encode("utf-8"))
got = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
except socket.timeout:
    pass
sys.stdout.write(got.decode("utf-8", "replace"))
"""#

/// A SOCKS5 CONNECT for the domain argv[2] (sent as UTF-8) port argv[3] through 127.0.0.1:argv[1];
/// prints the reply's REP byte.
private let socksDomain = #"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"\x05\x01\x00")
assert s.recv(2) == b"\x05\x00"
name = sys.argv[2].encode("utf-8")
port = int(sys.argv[3])
s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + port.to_bytes(2, "big"))
reply = s.recv(10)
print(reply[1])
"""#

/// An HTTP server that answers every request with the Host header it received.
private let hostEcho = #"""
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("host=" + self.headers.get("Host", "")).encode("latin-1")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""#

/// Issue 14 §4: a raw international name (UTF-8) in CONNECT, SOCKS5, a plain-HTTP request and
/// SNI is dialled, certified and recorded as its A-label; only what IDNA refuses is refused.
@Suite("International names through tv run", .serialized)
struct InternationalNameRunTests {
    static let refusal = "the host name 'a☃.test' is not a valid international domain name (IDNA: string contains a disallowed character); use the name's registered spelling or its xn-- form"

    @Test("CONNECT bücher.test:443 in UTF-8 is dialled as xn--bcher-kva.test (a 502 for the unresolvable .test name, not a 400); CONNECT a☃.test:443 is a 400 with IDNA's reason")
    func connect() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let dialled = try box.python(rawRequest, [String(tv.port), "CONNECT bücher.test:443 HTTP/1.1\r\nHost: bücher.test:443\r\n\r\n"])
        #expect(dialled.out.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), "\(dialled)")
        #expect(dialled.out.contains("tv could not connect to xn--bcher-kva.test:443 ("), "\(dialled)")
        let refused = try box.python(rawRequest, [String(tv.port), "CONNECT a☃.test:443 HTTP/1.1\r\nHost: a☃.test:443\r\n\r\n"])
        #expect(refused.out.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(refused)")
        #expect(refused.out.contains(Self.refusal), "\(refused)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows[0].string("host") == "xn--bcher-kva.test")
        #expect(rows[0].string("hostOrigin") == "connect")
        #expect(rows[0].string("error")?.hasPrefix("tv could not connect to xn--bcher-kva.test:443 (") == true, "\(rows[0])")
        #expect(rows[1].string("status") == "failed")
        #expect(rows[1].string("error") == Self.refusal)
        try tv.stop()
    }

    @Test("openssl s_client -servername bücher.test (raw UTF-8 SNI): the leaf names xn--bcher-kva.test, the server is asked for it, the row records it")
    func sni() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let s = try box.tool("openssl", ["s_client", "-proxy", tv.proxyHostPort, "-connect", "127.0.0.1:\(world.nginx.tlsPort)",
                                         "-servername", "bücher.test", "-CAfile", world.tvRoot, "-verify_hostname", "xn--bcher-kva.test",
                                         "-verify_return_error", "-brief", "-ign_eof"],
                             stdin: Data("GET /index.html HTTP/1.0\r\nHost: xn--bcher-kva.test\r\n\r\n".utf8))
        #expect(s.status == 0, "\(s)")
        #expect(s.err.contains("Verification: OK"), "\(s)")
        #expect(s.out.hasSuffix("\r\n\r\nhello from nginx\n"), "\(s)")
        let rows = try box.closedFlows(1)
        try #require(rows.count == 1)
        #expect(rows[0].string("host") == "xn--bcher-kva.test")
        #expect(rows[0].string("hostOrigin") == "sni")
        #expect(rows[0].string("status") == "inspected")
        try tv.stop()
    }

    @Test("SOCKS5 with the UTF-8 domain bücher.test is dialled as xn--bcher-kva.test; a☃.test gets REP 04 and IDNA's reason")
    func socks() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--mode", "socks5")
        let dialled = try box.python(socksDomain, [String(tv.port), "bücher.test", String(world.nginx.tlsPort)])
        #expect(dialled.status == 0, "\(dialled)")
        #expect(dialled.out != "0\n", "the .test name does not resolve: \(dialled)")
        let refused = try box.python(socksDomain, [String(tv.port), "a☃.test", "443"])
        #expect(refused.out == "4\n", "\(refused)")
        let rows = try box.closedFlows(2)
        try #require(rows.count == 2)
        #expect(rows[0].string("host") == "xn--bcher-kva.test")
        #expect(rows[0].string("hostOrigin") == "socks")
        #expect(rows[0].string("error")?.hasPrefix("tv could not connect to xn--bcher-kva.test:\(world.nginx.tlsPort) (") == true, "\(rows[0])")
        #expect(rows[1].string("error") == Self.refusal)
        try tv.stop()
    }

    @Test("plain HTTP: a UTF-8 Host reaches the server as the target's ASCII authority; http://bücher.test/ is dialled as xn--bcher-kva.test")
    func plainHTTP() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let server = try PythonServer(hostEcho)
        defer { server.stop() }
        let tv = try world.run("--inspect")
        let echoed = try box.python(rawRequest, [String(tv.port),
                                                 "GET http://127.0.0.1:\(server.port)/ HTTP/1.1\r\nHost: bücher.test\r\nConnection: close\r\n\r\n"])
        #expect(echoed.out.hasPrefix("HTTP/1.0 200 OK\r\n"), "\(echoed)")
        #expect(echoed.out.hasSuffix("\r\n\r\nhost=127.0.0.1:\(server.port)"), "\(echoed)")
        let dialled = try box.python(rawRequest, [String(tv.port),
                                                  "GET http://bücher.test:\(server.port)/ HTTP/1.1\r\nHost: bücher.test:\(server.port)\r\nConnection: close\r\n\r\n"])
        #expect(dialled.out.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), "\(dialled)")
        #expect(dialled.out.contains("tv could not connect to xn--bcher-kva.test:\(server.port) ("), "\(dialled)")
        let refused = try box.python(rawRequest, [String(tv.port), "GET http://a☃.test/ HTTP/1.1\r\nHost: a☃.test\r\n\r\n"])
        #expect(refused.out.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(refused)")
        #expect(refused.out.contains(Self.refusal), "\(refused)")
        let rows = try box.closedFlows(3)
        try #require(rows.count == 3)
        #expect(rows[1].string("host") == "xn--bcher-kva.test")
        #expect(rows[2].string("error") == Self.refusal)
        try tv.stop()
    }
}
