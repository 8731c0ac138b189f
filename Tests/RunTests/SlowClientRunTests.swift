import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §5 and §6 through the real `tv` binary: request heads trickled one byte at a time,
/// reverse mode opening nothing before a whole head, the per-address limit, and the
/// file-descriptor limit (raised at start, the cap sized from it, running out said and counted).
@Suite("tv run: slow clients, the per-address limit and descriptors (issue 12 §5, §6)", .serialized)
struct SlowClientRunTests {
    /// Trickles heads one byte every 100 ms until tv answers; prints, per case, the reply's
    /// first line and the seconds from the head's first byte to tv's answer.
    static let trickler = """
    import select, socket, sys, time
    port, origin = int(sys.argv[1]), int(sys.argv[2])
    def trickle(s, data):
        start = time.time()
        for b in data:
            if select.select([s], [], [], 0)[0]: break
            try: s.sendall(bytes([b]))
            except OSError: break
            time.sleep(0.1)
        s.settimeout(5)
        reply = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk: break
                reply += chunk
        except OSError: pass
        return "%s|%.2f" % (reply.split(b"\\r\\n")[0].decode(), time.time() - start)
    head = b"GET http://127.0.0.1:%d/index.html HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nX-Pad: %s\\r\\n\\r\\n" % (origin, origin, b"a" * 100)
    # The first head, trickled.
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    print("first|" + trickle(s, head))
    # A whole first request, its response read, then the next head trickled on the same connection.
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(head)
    got = b""
    while b"\\r\\n\\r\\n" not in got: got += s.recv(4096)
    length = int([l for l in got.split(b"\\r\\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
    while len(got.split(b"\\r\\n\\r\\n", 1)[1]) < length: got += s.recv(4096)
    print("response|" + got.split(b"\\r\\n")[0].decode() + "|" + got.split(b"\\r\\n\\r\\n", 1)[1].decode().strip())
    print("second|" + trickle(s, head))
    """

    @Test("a plain keep-alive head trickled one byte every 100 ms is answered 408 and closed at the head timeout, the first head and a later one; counted")
    func trickledHeads() throws {
        let world = try RunWorld(createCA: false)
        let tv = try world.run("--head-timeout", "1")
        let r = try world.sandbox.python(Self.trickler, [String(tv.port), String(world.nginx.plainPort)], timeout: 30)
        let lines = Dictionary(uniqueKeysWithValues: r.out.split(separator: "\n").map { line -> (String, [String]) in
            let parts = line.split(separator: "|").map(String.init)
            return (parts[0], Array(parts.dropFirst()))
        })
        #expect(lines["response"] == ["HTTP/1.1 200 OK", "hello from nginx"], "\(r)")
        for key in ["first", "second"] {
            let fields = lines[key] ?? []
            #expect(fields.first == "HTTP/1.1 408 Request Timeout", "\(key): \(r)")
            let seconds = Double(fields.last ?? "") ?? -1
            #expect(seconds >= 0.9 && seconds < 2.0, "\(key) closed after \(seconds) s: \(r)")
        }
        let status = try #require(try world.sandbox.status())
        #expect(status.int("headTimeouts") == 2, "\(status)")
        #expect(try world.sandbox.waitForNoOpenConnections() == 0)
        let text = try world.sandbox.tv("status")
        #expect(text.out.contains("  slow heads        2 closed (request head not whole within the head timeout)\n"), "\(text)")
        try tv.stop()
    }

    /// A keep-alive connection left idle after one exchange: how long until tv closes it.
    static let idler = """
    import socket, sys, time
    port, origin = int(sys.argv[1]), int(sys.argv[2])
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET http://127.0.0.1:%d/index.html HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n\\r\\n" % (origin, origin))
    got = b""
    while b"hello from nginx" not in got: got += s.recv(4096)
    start = time.time()
    rest = s.recv(4096)
    print("closed|%r|%.2f" % (rest, time.time() - start))
    """

    @Test("--idle-timeout closes a connection that carries nothing for that long, and the flow says so; a bad value is one sentence")
    func idleTimeoutOption() throws {
        let world = try RunWorld(createCA: false)
        let tv = try world.run("--idle-timeout", "2")
        let r = try world.sandbox.python(Self.idler, [String(tv.port), String(world.nginx.plainPort)], timeout: 30)
        let fields = r.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        #expect(fields.count == 3 && fields[1] == "b''", "\(r)")
        let seconds = Double(fields.last ?? "") ?? -1
        #expect(seconds >= 1.9 && seconds < 4, "closed after \(seconds) s: \(r)")
        let rows = try world.sandbox.closedFlows(1)
        #expect(rows.first?["error"] as? String == "closed after 2 s without traffic", "\(rows)")
        try tv.stop()
        for bad in ["0", "x", "604801"] {
            let refused = try world.sandbox.tvArgs(["run", "--idle-timeout", bad])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.err == "tv: --idle-timeout takes seconds from 1 to 604800 (a week), not '\(bad)'.\n", "\(refused)")
        }
    }

    @Test("reverse mode: the server sees no connection until the plain head is whole; a head that never completes is a 408 and never reaches it")
    func reverseWaitsForTheHead() throws {
        let world = try RunWorld(createCA: false)
        let origin = freeLoopbackPort()
        let tv = try world.run("--mode", "reverse:http://127.0.0.1:\(origin)", "--head-timeout", "2")
        let script = """
        import select, socket, sys, time
        port, origin = int(sys.argv[1]), int(sys.argv[2])
        srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", origin)); srv.listen(8)
        def pending(wait=0): return bool(select.select([srv], [], [], wait)[0])
        head = b"GET /r HTTP/1.1\\r\\nHost: origin.test\\r\\n\\r\\n"
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        seen = False
        for b in head[:-1]:
            c.sendall(bytes([b])); time.sleep(0.02)
            seen = seen or pending()
        time.sleep(0.3)
        print("before|%s" % (seen or pending()))
        c.sendall(head[-1:])
        print("after|%s" % pending(3))
        conn, _ = srv.accept(); conn.settimeout(5)
        got = b""
        while b"\\r\\n\\r\\n" not in got: got += conn.recv(4096)
        print("request|" + got.split(b"\\r\\n")[0].decode())
        conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok"); conn.close()
        reply = b""
        while True:
            chunk = c.recv(4096)
            if not chunk: break
            reply += chunk
        print("reply|" + reply.split(b"\\r\\n")[0].decode() + "|" + reply.split(b"\\r\\n\\r\\n", 1)[1].decode())
        # A head that stops half way.
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        start = time.time()
        c.sendall(b"GET /slow HT")
        reply = b""
        seen = False
        while True:
            seen = seen or pending()
            if select.select([c], [], [], 0.05)[0]:
                chunk = c.recv(4096)
                if not chunk: break
                reply += chunk
        print("slow|%s|%.2f|%s" % (reply.split(b"\\r\\n")[0].decode(), time.time() - start, seen or pending(0.3)))
        """
        let r = try world.sandbox.python(script, [String(tv.port), String(origin)], timeout: 30)
        let lines = r.out.split(separator: "\n").map { $0.split(separator: "|").map(String.init) }
        #expect(lines.count == 5, "\(r) \(tv.log())")
        guard lines.count == 5 else { return }
        #expect(lines[0] == ["before", "False"], "no connection to the server before the head is whole: \(r)")
        #expect(lines[1] == ["after", "True"], "\(r)")
        #expect(lines[2] == ["request", "GET /r HTTP/1.1"], "\(r)")
        #expect(lines[3] == ["reply", "HTTP/1.1 200 OK", "ok"], "\(r)")
        #expect(lines[4].first == "slow" && lines[4].dropFirst().first == "HTTP/1.1 408 Request Timeout", "\(r)")
        let seconds = Double(lines[4].dropFirst(2).first ?? "") ?? -1
        #expect(seconds >= 1.9 && seconds < 3.0, "\(seconds) s: \(r)")
        #expect(lines[4].last == "False", "the server never saw the slow client: \(r)")
        let rows = try world.sandbox.closedFlows(2)
        #expect(rows.contains { $0.string("failureReason") == "the client sent no complete request head within 2 s (tv closed the connection)" }, "\(rows)")
        try tv.stop()
    }

    /// Opens `hold` connections and keeps them, then `extra` more; prints the first line each
    /// extra one was answered with; then closes everything.
    static let holder = """
    import socket, sys, time
    port, hold, extra = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(hold)]
    time.sleep(0.3)
    for _ in range(extra):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        try: print((s.recv(300).split(b"\\r\\n")[0].decode()) or "closed")
        except OSError as e: print("error " + type(e).__name__)
        s.close()
    time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
    for s in held: s.close()
    """

    /// Opens `hold` connections to HOST:PORT and keeps them, then on `extra` more reads tv's
    /// refusal, or when none comes within 0.5 s sends a proxy request for URL, printing each
    /// answer's status line and body (`|` between); then closes everything.
    static let holdThenAsk = """
    import socket, sys, time
    host, port, hold, extra, url = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    held = [socket.create_connection((host, port), timeout=10) for _ in range(hold)]
    time.sleep(0.3)
    for _ in range(extra):
        s = socket.create_connection((host, port), timeout=10)
        # A refusal comes at once; a request sent into it could turn tv's close into a reset.
        s.settimeout(0.5)
        try: data = s.recv(65536)
        except socket.timeout: data = None
        s.settimeout(10)
        if data is None:
            s.sendall(("GET %s HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n" % url).encode())
            data = b""
        while True:
            d = s.recv(65536)
            if not d: break
            data += d
        head, _, body = data.partition(b"\\r\\n\\r\\n")
        print(head.split(b"\\r\\n")[0].decode() + "|" + body.decode().strip())
        s.close()
    for s in held: s.close()
    """

    @Test("--max-per-client 3: five connections held from 127.0.0.1 and two more requests are all served: loopback is every local program, not one client (a trial's program holding 1,100 locked every other out)")
    func loopbackIsNotLimitedPerAddress() throws {
        let world = try RunWorld(createCA: false)
        let tv = try world.run("--max-per-client", "3")
        let url = "http://127.0.0.1:\(world.nginx.plainPort)/index.html"
        let r = try world.sandbox.python(Self.holdThenAsk, ["127.0.0.1", String(tv.port), "5", "2", url], timeout: 30)
        #expect(r.out == "HTTP/1.1 200 OK|hello from nginx\nHTTP/1.1 200 OK|hello from nginx\n", "\(r)")
        #expect(!tv.log().contains("already holds"), "\(tv.log())")
        let status = try #require(try world.sandbox.status())
        #expect(status.int("refusedPerClient") == 0, "\(status)")
        try tv.stop()
    }

    /// This host's first global IPv4 address (`ip -4 -o addr show scope global`), if it has one.
    static let globalAddress: String? = {
        let r = Shell.run(["ip", "-4", "-o", "addr", "show", "scope", "global"])
        guard let word = r.out.split(whereSeparator: \.isWhitespace).drop(while: { $0 != "inet" }).dropFirst().first else { return nil }
        return word.split(separator: "/").first.map(String.init)
    }()

    @Test("--max-per-client 3 on a non-loopback address: the 4th and 5th connections from it are refused with a 503 that says the address's count, counted, said once",
          .enabled(if: globalAddress != nil, "this host has no global IPv4 address to connect from"))
    func perClientLimit() throws {
        let address = try #require(Self.globalAddress)
        let world = try RunWorld(createCA: false)
        let port = freeLoopbackPort()
        let tv = try TVSession(world.sandbox, ["--max-per-client", "3"], listen: "\(address):\(port)")
        let url = "http://127.0.0.1:\(world.nginx.plainPort)/index.html"
        let r = try world.sandbox.python(Self.holdThenAsk, [address, String(port), "3", "2", url], timeout: 30)
        let refused = "HTTP/1.1 503 Service Unavailable|tv: 3 connections from this client's address are open, the most one address may hold"
            + " (every program and machine behind it counts); try again once some have closed"
        #expect(r.out == refused + "\n" + refused + "\n", "\(r)")
        let said = tv.log().components(separatedBy: "\n").filter { $0.contains("from \(address), which already holds 3") }
        #expect(said == ["tv: refused a connection from \(address), which already holds 3 (the most one client address may open; raise it with --max-per-client)"], "\(tv.log())")
        let status = try #require(try world.sandbox.status())
        #expect(status.int("refusedPerClient") == 2, "\(status)")
        try tv.stop()
    }

    /// The soft and hard "Max open files" of `pid`.
    static func openFileLimits(_ pid: Int32) -> [String] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return [] }
        return Array(line.dropFirst("Max open files".count).split(separator: " ").prefix(2).map(String.init))
    }

    static func openDescriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    @Test("started with a soft limit of 64 under a hard 4096, tv raises the soft limit to 4096 and sizes its cap from it; lowered while running, accepts that fail for lack of descriptors are said and counted, and requests complete once clients close")
    func descriptorLimitRaisedAndShortageSaid() throws {
        let world = try RunWorld(createCA: false)
        let tv = try TVSession(world.sandbox, ["--workers", "2"], launcher: ["/usr/bin/prlimit", "--nofile=64:4096", "--"])
        #expect(Self.openFileLimits(tv.pid) == ["4096", "4096"])
        let status = try #require(try world.sandbox.status())
        #expect(status.int("descriptorLimit") == 4096, "\(status)")
        let cap = status.int("connectionCap") ?? 0
        // (4096 - descriptors open when the proxy starts - 2 × 2 loops - 26) / 3
        #expect(cap > 1_300 && cap <= 1_354, "\(status)")

        // Lower the limit under tv's feet: a few descriptors left, twenty clients.
        let open = Self.openDescriptors(tv.pid)
        let lowered = try world.sandbox.tool("prlimit", ["--pid", String(tv.pid), "--nofile=\(open + 6):\(open + 6)"])
        #expect(lowered.status == 0, "\(lowered)")
        let r = try world.sandbox.python(Self.holder, [String(tv.port), "20", "0", "0.6"], timeout: 30)
        #expect(r.status == 0, "\(r)")
        let said = tv.log().components(separatedBy: "\n").filter { $0.contains("could not accept") }
        #expect(said == ["tv: could not accept a connection: tv ran out of file descriptors (its limit is \(open + 6); raise it with ulimit -n); clients wait in the listen queue until some close"],
                "\(tv.log())")
        #expect(try world.sandbox.waitForNoOpenConnections() == 0)
        let after = try #require(try world.sandbox.status())
        #expect((after.int("acceptsFailedForDescriptors") ?? 0) >= 1, "\(after)")
        let ok = try world.sandbox.curl(["-x", tv.proxyURL, "http://127.0.0.1:\(world.nginx.plainPort)/index.html"])
        #expect(ok.out == "hello from nginx\n", "\(ok)")
        try tv.stop()
    }

    @Test("under a hard limit of 64 the cap is sized from it: connections beyond it are refused with a 503, said with the reason, counted; a request completes once the others close")
    func capSizedFromALowHardLimit() throws {
        let world = try RunWorld(createCA: false)
        // Two loops whatever the host has (with one per core, a large host needs more than 64 to start).
        let tv = try TVSession(world.sandbox, ["--workers", "2"], launcher: ["/usr/bin/prlimit", "--nofile=64:64", "--"])
        #expect(Self.openFileLimits(tv.pid) == ["64", "64"])
        let status = try #require(try world.sandbox.status())
        #expect(status.int("descriptorLimit") == 64, "\(status)")
        let cap = try #require(status.int("connectionCap"))
        #expect(cap >= 1 && cap < 11, "\(status)")
        let r = try world.sandbox.python(Self.holder, [String(tv.port), String(cap), "3"], timeout: 30)
        #expect(r.out == String(repeating: "HTTP/1.1 503 Service Unavailable\n", count: 3), "\(r)")
        let said = tv.log().components(separatedBy: "\n").filter { $0.contains("the most tv takes at once") }
        #expect(said == ["tv: refused a connection: \(cap) are open, the most tv takes at once (sized from the file-descriptor limit of 64; raise it with ulimit -n)"], "\(tv.log())")
        #expect(try world.sandbox.waitForNoOpenConnections() == 0)
        let after = try #require(try world.sandbox.status())
        #expect(after.int("refusedByCap") == 3, "\(after)")
        let ok = try world.sandbox.curl(["-x", tv.proxyURL, "http://127.0.0.1:\(world.nginx.plainPort)/index.html"])
        #expect(ok.out == "hello from nginx\n", "\(ok)")
        try tv.stop()
    }
}
