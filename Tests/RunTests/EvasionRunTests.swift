import Foundation
import Testing

/// The hostile-input trial's evasions of the record, through the real `tv run`: valid or
/// near-valid HTTP/1 inside inspected TLS (and reverse mode) after which tv stopped reading while
/// nginx served `GET /hidden-…?secret=1`. Every request nginx (or the Python server) serves must
/// have a row; what tv cannot follow is refused, never passed on unread.
@Suite("tv run: HTTP/1 that evaded the record (hostile-input trial)", .serialized)
struct EvasionRunTests {
    /// nginx answering every path with what it saw, reading (and discarding) request bodies;
    /// its access log on.
    static let locations = #"""
    access_log logs/access.log;
                location /first { return 200 "nginx saw $request_method $uri\n"; }
                location /hidden- { return 200 "nginx saw $request_method $uri\n"; }
    """#

    /// A raw HTTP/1 client (argv: tv's port, target host:port, `tls` through a CONNECT tunnel
    /// or `plain` straight to a reverse listener, tv's root, case names): for each case, one
    /// connection carrying the case and then `GET /hidden-CASE?secret=1` (Connection: close) in
    /// one write; prints "CASE STATUS,STATUS…" of the responses it read until the close.
    static let client = #"""
    import re, socket, ssl, sys
    proxy, target, mode, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    H = target.encode()
    TE = b"Transfer-Encoding: chunked\r\n"
    def post(extra, body):
        return b"POST /first HTTP/1.1\r\nHost: " + H + b"\r\n" + extra + b"\r\n" + body
    cases = {
        "zeros16": post(TE, b"0000000000000002\r\nab\r\n0\r\n\r\n"),
        "ext8k": post(TE, b"2;x=" + b"e" * 8000 + b"\r\nab\r\n0\r\n\r\n"),
        "ext70k": post(TE, b"2;x=" + b"e" * 70000 + b"\r\nab\r\n0\r\n\r\n"),
        "trailers70k": post(TE, b"2\r\nab\r\n0\r\nX-T: " + b"v" * 70000 + b"\r\n\r\n"),
        "overflow": post(TE, b"10000000000000002\r\nab\r\n0\r\n\r\n"),
        "nonhex": post(TE, b"2g\r\nab\r\n0\r\n\r\n"),
        "hexprefix": post(TE, b"0x2\r\nab\r\n0\r\n\r\n"),
        "negative": post(TE, b"-2\r\nab\r\n0\r\n\r\n"),
        "extlf": post(TE, b"2;a\nb\r\nab\r\n0\r\n\r\n"),
        "nocrlf": post(TE, b"2\r\nabXX0\r\n\r\n"),
        "tefold": post(b"Transfer-Encoding:\r\n chunked\r\n", b"2\r\nab\r\n0\r\n\r\n"),
        "clfold": post(b"X-A: b\r\n Content-Length: 2\r\n", b"ab"),
    }
    def connect():
        s = socket.create_connection(("127.0.0.1", proxy), timeout=20)
        if mode == "tls":
            s.sendall(b"CONNECT " + H + b" HTTP/1.1\r\nHost: " + H + b"\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1)
            ctx = ssl.create_default_context(cafile=cafile)
            ctx.set_alpn_protocols(["http/1.1"])
            s = ctx.wrap_socket(s, server_hostname=target.split(":")[0])
        return s
    for name in sys.argv[5:]:
        s = connect()
        s.sendall(cases[name] + b"GET /hidden-" + name.encode() + b"?secret=1 HTTP/1.1\r\nHost: " + H + b"\r\nConnection: close\r\n\r\n")
        out = b""
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except (OSError, ssl.SSLError):
            pass
        s.close()
        statuses = [code.decode() for code in re.findall(rb"(?:^|\n)HTTP/1\.1 (\d{3}) ", out)]
        print(name, ",".join(statuses) or "-")
    """#

    /// Each request nginx logged ("METHOD /path STATUS", query left out), in order.
    static func logged(_ world: RunWorld) -> [String] {
        world.sandbox.text(world.nginx.dir + "/logs/access.log").split(separator: "\n").compactMap { line in
            let quoted = line.split(separator: "\"")
            guard quoted.count >= 3 else { return nil }
            let request = quoted[1].split(separator: " ")
            guard request.count >= 2, let status = quoted[2].split(separator: " ").first else { return nil }
            return "\(request[0]) \(request[1].split(separator: "?")[0]) \(status)"
        }
    }

    /// Each request nginx served ("METHOD /path"): logged with a status below 400 (a head cut
    /// off by tv's close is logged as a 400 it never answered).
    static func served(_ world: RunWorld) -> [String] {
        logged(world).compactMap { entry in
            let parts = entry.split(separator: " ")
            guard parts.count == 3, let status = Int(parts[2]), status < 400 else { return nil }
            return "\(parts[0]) \(parts[1])"
        }
    }

    /// Each row ("METHOD /path STATUS STATE"), oldest first.
    static func rows(_ box: Sandbox) throws -> [String] {
        (try box.json("requests", "--limit", "1000")["requests"] as? [JSON] ?? []).reversed()
            .map { "\($0.string("method") ?? "") \($0.string("path") ?? "") \($0.int("status") ?? 0) \($0.string("state") ?? "")" }
    }

    /// Every request nginx served has a row (a hidden request fails here).
    static func everyServedRequestHasARow(_ world: RunWorld, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = try Self.rows(world.sandbox)
        for request in Self.served(world) {
            #expect(rows.contains { $0.hasPrefix(request + " ") }, "nginx served \(request), which has no row: \(rows)", sourceLocation: sourceLocation)
        }
    }

    @Test("valid chunked request bodies inside inspected TLS (a 16-digit size with leading zeros, 8 KB and 70 KB extensions, 70 KB of trailers): the request after each, which nginx serves, has its row, and the flow no error (tv stopped reading, and nginx served GET /hidden-…?secret=1 with no row: the trial)")
    func validBodiesOverTLS() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let names = ["zeros16", "ext8k", "ext70k", "trailers70k"]
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "tls", world.tvRoot] + names)
        #expect(r.status == 0 && r.out == names.map { "\($0) 200,200\n" }.joined(), "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let served = Self.served(world)
        for name in names { #expect(served.contains("GET /hidden-\(name)"), "\(served)") }
        let rows = try Self.rows(box)
        #expect(rows == names.flatMap { ["POST /first 200 complete", "GET /hidden-\($0) 200 complete"] }, "\(rows)")
        try Self.everyServedRequestHasARow(world)
        let flows = try box.closedFlows(names.count)
        #expect(flows.allSatisfy { $0.string("status") == "inspected" && $0.string("error") == nil }, "\(flows)")
    }

    @Test("malformed chunk sizes and obs-fold inside inspected TLS (2^64+2, 2g, 0x2, -2, a bare LF in an extension, no CRLF after data, a folded Transfer-Encoding, a fold hiding Content-Length): tv's 400, nothing after them reaches nginx, the row answered 400 and the flow says why (they were forwarded: the trial)")
    func malformedOverTLS() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let names = ["overflow", "nonhex", "hexprefix", "negative", "extlf", "nocrlf", "tefold", "clfold"]
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "tls", world.tvRoot] + names)
        #expect(r.status == 0 && r.out == names.map { "\($0) 400\n" }.joined(), "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        #expect(!Self.logged(world).contains { $0.hasPrefix("GET /hidden-") }, "\(Self.logged(world))")
        #expect(Self.served(world).isEmpty, "\(Self.logged(world))")
        let rows = try Self.rows(box)
        #expect(rows == Array(repeating: "POST /first 400 answered", count: names.count), "\(rows)")
        try Self.everyServedRequestHasARow(world)
        let errors = try box.closedFlows(names.count).map { $0.string("error") ?? "" }
        #expect(errors == [
            "the client's chunked body is past a limit of tv's: A chunk size has more than 15 significant hexadecimal digits (2^60 bytes or more), more than tv counts; a 64-bit reader would wrap it around (RFC 9112 §7.1).",
            "the client's chunked body is malformed: A chunk size is followed by byte 0x67 instead of a ';' or the line end (RFC 9112 §7.1).",
            "the client's chunked body is malformed: A chunk size is followed by byte 0x78 instead of a ';' or the line end (RFC 9112 §7.1).",
            "the client's chunked body is malformed: A chunk size line starts with byte 0x2d, which is not a hexadecimal digit (RFC 9112 §7.1).",
            "the client's chunked body is malformed: A chunk extension contains a bare LF, which readers may take for the end of the line or not (RFC 9112 §7.1 ends it with CRLF).",
            "the client's chunked body is malformed: A chunk of 2 bytes is not followed by CRLF (RFC 9112 §7.1).",
            "the client's request was not understood: A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400.",
            "the client's request was not understood: A header line of the request starts with whitespace (obs-fold), which RFC 9112 §5.2 lets tv refuse with 400.",
        ], "\(errors)")
    }

    @Test("reverse mode to nginx over TLS, a plain client: the same valid bodies keep the next request's row; a folded Transfer-Encoding and a 2^64+2 size get tv's 400")
    func reverseMode() throws {
        let world = try RunWorld(nginxLocations: Self.locations)
        let box = world.sandbox
        let tv = try world.run("--inspect", "--mode", "reverse:https://localhost:\(world.nginx.tlsPort)")
        let valid = ["zeros16", "ext8k", "trailers70k"], refused = ["tefold", "overflow"]
        let r = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", "plain", world.tvRoot] + valid + refused)
        #expect(r.status == 0 && r.out == (valid.map { "\($0) 200,200\n" } + refused.map { "\($0) 400\n" }).joined(), "\(r)")
        _ = try box.waitForNoOpenConnections()
        try tv.stop()
        let rows = try Self.rows(box)
        #expect(rows == valid.flatMap { ["POST /first 200 complete", "GET /hidden-\($0) 200 complete"] } + ["POST /first 400 answered", "POST /first 400 answered"], "\(rows)")
        #expect(!Self.logged(world).contains { $0.hasPrefix("GET /hidden-tefold") || $0.hasPrefix("GET /hidden-overflow") }, "\(Self.logged(world))")
        try Self.everyServedRequestHasARow(world)
    }
}
