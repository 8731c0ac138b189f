import Foundation
import Testing

/// `tv stop` while a client has not read the whole of a response yet, through the real `tv`
/// binary to nginx. Found by a trial: a 1 MiB response tv had relayed whole, the row said
/// complete, yet the client read 128,000 bytes and then a reset (the stop reset every relayed
/// connection, and a reset discards what the client's socket holds unread and tv's send queue).
/// Now a connection between exchanges, with nothing left in tv, closes with FINs; one part way
/// through a response is still reset, and its row says incomplete.
@Suite("tv run: tv stop while the client still reads", .serialized)
struct StopRunTests {
    /// Sends one GET through the proxy (argv 1) for argv 2's path on nginx's port argv 3, as an
    /// absolute-form request (`plain`) or inside a CONNECT tunnel with TLS trusting argv 5's root
    /// (`tls`, argv 4); reads the head, waits 2 s (tv reads what the sockets take meanwhile),
    /// runs the command in argv 6… (`tv stop`), and only then reads on. Prints the body bytes
    /// read and how the connection ended (`eof` or `reset`).
    static let client = """
    import socket, ssl, subprocess, sys, time
    proxy, path, port, mode, root = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    s = socket.create_connection(('127.0.0.1', proxy), timeout=20)
    if mode == 'tls':
        s.sendall(b'CONNECT localhost:%d HTTP/1.1\\r\\nHost: localhost:%d\\r\\n\\r\\n' % (port, port))
        got = b''
        while b'\\r\\n\\r\\n' not in got: got += s.recv(1)
        s = ssl.create_default_context(cafile=root).wrap_socket(s, server_hostname='localhost')
        s.sendall(b'GET %s HTTP/1.1\\r\\nHost: localhost:%d\\r\\n\\r\\n' % (path.encode(), port))
    else:
        s.sendall(b'GET http://127.0.0.1:%d%s HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n\\r\\n' % (port, path.encode(), port))
    data = b''
    while b'\\r\\n\\r\\n' not in data: data += s.recv(1)
    time.sleep(2)
    subprocess.run(sys.argv[6:], check=True, capture_output=True)
    ending = 'eof'
    while True:
        try: chunk = s.recv(65536)
        except (ConnectionResetError, ssl.SSLError) as e: ending = 'reset'; break
        if not chunk: break
        data += chunk
    print(len(data.split(b'\\r\\n\\r\\n', 1)[1]), ending)
    """

    /// One GET of `path` (`size` bytes) stopped as `client` does; returns what the client read,
    /// and the one request row.
    func stopDuring(_ path: String, size: Int, tls: Bool) throws -> (body: Int, ending: String, row: JSON?) {
        let world = try RunWorld(createCA: tls)
        if path == "/1m.bin" { _ = FileManager.default.createFile(atPath: world.www + path, contents: Data(count: size)) }
        let tv = tls ? try world.run("--inspect") : try world.run()
        let stop = [try TVBinary.require(), "--data-dir", world.sandbox.dataDir, "stop"]
        let r = try world.sandbox.python(Self.client, [String(tv.port), path, String(tls ? world.nginx.tlsPort : world.nginx.plainPort),
                                                       tls ? "tls" : "plain", world.tvRoot] + stop, timeout: 60)
        #expect(tv.waitForExit(seconds: 15), "\(r) \(tv.log())")
        let parts = r.out.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let rows = try world.sandbox.json("requests")["requests"] as? [JSON] ?? []
        #expect(rows.count == 1, "\(rows)")
        return (Int(parts.first ?? "") ?? -1, parts.last ?? "", rows.first)
    }

    @Test("a response tv relayed whole: the client reads all of it after the stop, then a FIN; the row says complete (plain proxy and inspected TLS)")
    func wholeResponseDelivered() throws {
        for tls in [false, true] {
            let got = try stopDuring("/1m.bin", size: 1 << 20, tls: tls)
            #expect(got.body == 1 << 20 && got.ending == "eof", "tls \(tls): \(got)")
            #expect(got.row?.string("state") == "complete", "tls \(tls): \(String(describing: got.row))")
            #expect(got.row?.int("responseBodyBytes") == 1 << 20, "tls \(tls): \(String(describing: got.row))")
        }
    }

    @Test("a response part way (10 MiB, the client not reading): still a reset; the client has less, the row says incomplete")
    func partWayIsReset() throws {
        for tls in [false, true] {
            let got = try stopDuring("/10m.bin", size: 10 << 20, tls: tls)
            #expect(got.body < 10 << 20, "tls \(tls): \(got)")
            #expect(got.row?.string("state") == "incomplete", "tls \(tls): \(String(describing: got.row))")
        }
    }
}
