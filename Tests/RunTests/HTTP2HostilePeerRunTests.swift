import Foundation
import Testing

/// A hostile HTTP/2 peer on an inspected connection (RFC 9113 §5.4.1, §10.5), end to end through
/// `tv run --inspect`: a python3 server speaking raw frames over TLS (ALPN h2) behind tv sends
/// what tv cannot read, to a python3 client that records every frame it receives; a python3
/// client floods or breaks the rules in front of tv, nginx behind it. What tv cannot read never
/// reaches the other side, which gets a GOAWAY INTERNAL_ERROR; the sender gets a GOAWAY with its
/// error's code; the flow names the sender. Before, the bytes went on and only the reading
/// stopped, and a server's endless CONTINUATION was said as the client's GOAWAY (a trial).
@Suite("tv run: HTTP/2 from a hostile peer is not forwarded, both sides get a GOAWAY, the flow names the sender", .serialized)
struct HTTP2HostilePeerRunTests {
    /// The hostile server: argv port file, result file, certificate, key, mode. Sends its
    /// SETTINGS, reads the client's request, answers it as `mode` says, then writes every
    /// GOAWAY it reads to the result file ("goaway CODE LAST") until tv closes.
    static let server = #"""
    import socket, ssl, struct, sys, threading
    port_file, result, cert, key, mode = sys.argv[1:6]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key); ctx.set_alpn_protocols(["h2"])
    ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(8)
    def frame(t, f, s, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", s) + p
    def serve(c):
        s = ctx.wrap_socket(c, server_side=True)
        buf = b""
        while len(buf) < 24: buf += s.recv(65536)
        buf = buf[24:]
        s.sendall(frame(4, 0, 0, b""))
        seen, sent = [], False
        while True:
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                n = int.from_bytes(buf[:3], "big"); t, fl = buf[3], buf[4]; sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
                payload = buf[9:9 + n]; buf = buf[9 + n:]
                if t == 7: seen.append("goaway %d %d" % (struct.unpack(">I", payload[4:8])[0], struct.unpack(">I", payload[:4])[0] & 0x7fffffff))
                if t == 1 and fl & 4 and not sent:
                    sent = True
                    ok = frame(1, 4, sid, b"\x88")  # :status 200
                    if mode == "oversize": out = ok + frame(0, 1, sid, b"x" * 16385)
                    elif mode == "stream0": out = frame(1, 5, 0, b"\x88")
                    elif mode == "hpack": out = frame(1, 5, sid, b"\x80")
                    elif mode == "continuation": out = frame(1, 0, sid, b"\x88") + frame(9, 0, sid, b"") * 20
                    else: out = ok + frame(6, 0, 0, b"\0" * 8) * 10001
                    s.sendall(out)
            try: d = s.recv(65536)
            except OSError: d = b""
            if not d:
                open(result, "w").write("\n".join(seen) + "\n")
                return
            buf += d
    open(port_file + ".tmp", "w").write(str(ls.getsockname()[1]))
    import os; os.rename(port_file + ".tmp", port_file)
    while True:
        c, _ = ls.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    /// The honest client (and, with a mode, the hostile one): argv proxy port, target, tv's root,
    /// mode (`honest`, `ping-flood`, `bad-settings`). Prints the types of the frames it received
    /// other than SETTINGS and PING, then "goaway CODE LAST" for each GOAWAY, the PINGs (not
    /// ACKs) it received, the bytes left of an unfinished frame, reading to the end.
    static let client = #"""
    import socket, ssl, struct, sys
    proxy, target, cafile, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    def frame(t, f, s, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", s) + p
    raw = socket.create_connection(("127.0.0.1", proxy), timeout=30)
    raw.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head: head += raw.recv(1)
    ctx = ssl.create_default_context(cafile=cafile); ctx.set_alpn_protocols(["h2"])
    s = ctx.wrap_socket(raw, server_hostname="localhost")
    assert s.selected_alpn_protocol() == "h2", s.selected_alpn_protocol()
    a = target.encode()
    get = frame(1, 5, 1, b"\x82\x87\x84\x01" + bytes([len(a)]) + a)
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"")
    if mode == "honest": out += get
    elif mode == "ping-flood": out += frame(6, 0, 0, b"\0" * 8) * 10001
    else: out += get + frame(4, 0, 0, b"\0" * 7)
    def send():
        try: s.sendall(out)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError): pass  # tv ended it before all went
    # Read while sending (nginx answers each PING): tv holds nothing back for the client then.
    import threading; sender = threading.Thread(target=send); sender.start()
    buf, types, goaways, pings = b"", [], [], 0
    while True:
        try: d = s.recv(65536)
        except (ConnectionResetError, ssl.SSLError): d = b""
        if not d: break
        buf += d
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            n = int.from_bytes(buf[:3], "big"); t, fl, payload = buf[3], buf[4], buf[9:9 + n]; buf = buf[9 + n:]
            if t == 6 and not fl & 1: pings += 1
            if t in (4, 6): continue
            if t == 7: goaways.append("goaway %d %d" % (struct.unpack(">I", payload[4:8])[0], struct.unpack(">I", payload[:4])[0] & 0x7fffffff))
            types.append(str(t))
    sender.join()
    print(" ".join(types))
    for g in goaways: print(g)
    print("pings %d" % pings)
    print("leftover %d" % len(buf))
    """#

    /// The hostile server behind tv in `mode`; returns what the client printed, what the server
    /// read, and the flow's error.
    private func hostileServer(_ mode: String) throws -> (client: String, server: String, error: String?) {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let portFile = box.work + "/hostile.port", result = box.work + "/hostile.result"
        let server = try Background(["python3", "-c", Self.server, portFile, result, world.pki.serverCert, world.pki.serverKey, mode],
                                    logPath: box.work + "/hostile-server.log")
        defer { server.stop() }
        var port = ""
        for _ in 0..<200 where port.isEmpty {
            port = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            if port.isEmpty { usleep(50_000) }
        }
        try #require(!port.isEmpty, "the server did not start")
        let client = try box.python(Self.client, [String(tv.port), "localhost:\(port)", world.tvRoot, "honest"], timeout: 60)
        #expect(client.status == 0, "\(client)")
        let flow = try #require(try box.closedFlows(1).first)
        // The server writes what it read once tv closed its leg (the flow is closed by then).
        var read = ""
        for _ in 0..<200 where read.isEmpty {
            read = (try? String(contentsOfFile: result, encoding: .utf8)) ?? ""
            if read.isEmpty { usleep(50_000) }
        }
        return (client.out, read, flow.string("error"))
    }

    static func sentence(_ sender: String, _ reason: String, _ code: String, other: String) -> String {
        "the \(sender) sent HTTP/2 tv cannot read: \(reason); tv forwarded none of it and ended the connection with GOAWAY \(code) to the \(sender) and GOAWAY INTERNAL_ERROR to the \(other) (RFC 9113 §5.4.1)"
    }

    @Test("a server's DATA frame of 16,385 bytes: the client gets the response head and GOAWAY INTERNAL_ERROR, none of the frame; the server GOAWAY FRAME_SIZE_ERROR")
    func serverFrameTooLong() throws {
        let run = try hostileServer("oversize")
        #expect(run.client == "1 7\ngoaway 2 1\npings 0\nleftover 0\n")
        #expect(run.server == "goaway 6 0\n")
        #expect(run.error == Self.sentence("server", "a frame of 16385 bytes, longer than the receiver's SETTINGS_MAX_FRAME_SIZE of 16384 (RFC 9113 §4.2)",
                                           "FRAME_SIZE_ERROR", other: "client"))
    }

    @Test("a server's HEADERS on stream 0: PROTOCOL_ERROR to the server, the client only GOAWAY INTERNAL_ERROR")
    func serverHeadersOnStreamZero() throws {
        let run = try hostileServer("stream0")
        #expect(run.client == "7\ngoaway 2 1\npings 0\nleftover 0\n")
        #expect(run.server == "goaway 1 0\n")
        #expect(run.error == Self.sentence("server", "a header block on stream 0 (RFC 9113 §6.2)", "PROTOCOL_ERROR", other: "client"))
    }

    @Test("a server's header block HPACK cannot decode: COMPRESSION_ERROR to the server, named as the server's")
    func serverBlockUndecodable() throws {
        let run = try hostileServer("hpack")
        #expect(run.client == "7\ngoaway 2 1\npings 0\nleftover 0\n")
        #expect(run.server == "goaway 9 0\n")
        #expect(run.error?.hasPrefix("the server sent HTTP/2 tv cannot read: a header block HPACK cannot decode (RFC 7541: ") == true, "\(run.error ?? "nil")")
        #expect(run.error?.hasSuffix("GOAWAY COMPRESSION_ERROR to the server and GOAWAY INTERNAL_ERROR to the client (RFC 9113 §5.4.1)") == true)
    }

    @Test("a server's header block that never ends (20 empty CONTINUATIONs, CVE-2024-27316): the server named, ENHANCE_YOUR_CALM; the client gets none of the block")
    func serverEndlessContinuation() throws {
        let run = try hostileServer("continuation")
        #expect(run.client == "7\ngoaway 2 1\npings 0\nleftover 0\n")
        #expect(run.server == "goaway 11 0\n")
        #expect(run.error == Self.sentence("server", "a header block in more than 8 CONTINUATION frames, more than tv reads (RFC 9113 §6.10, §10.5)",
                                           "ENHANCE_YOUR_CALM", other: "client"))
    }

    @Test("a server's 10,001 PINGs after its response head: the client gets the head and 10,000 of them, then GOAWAY INTERNAL_ERROR; the server ENHANCE_YOUR_CALM")
    func serverPingFlood() throws {
        let run = try hostileServer("ping-flood")
        #expect(run.client == "1 7\ngoaway 2 1\npings 10000\nleftover 0\n", "\(run.client.prefix(200))")
        #expect(run.server == "goaway 11 0\n")
        #expect(run.error == "the server sent 10,001 PING frames without a request, response or DATA between them: tv forwarded the first 10,000 and ended the connection with GOAWAY ENHANCE_YOUR_CALM to the server and GOAWAY INTERNAL_ERROR to the client (RFC 9113 §10.5)")
    }

    /// The hostile client in front of tv, nginx behind it.
    private func hostileClient(_ mode: String) throws -> (client: String, error: String?) {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        defer { withExtendedLifetime((world, tv)) {} }
        let client = try box.python(Self.client, [String(tv.port), "localhost:\(world.nginx.tlsPort)", world.tvRoot, mode], timeout: 60)
        #expect(client.status == 0, "\(client)")
        let flow = try #require(try box.closedFlows(1).first)
        return (client.out, flow.string("error"))
    }

    /// (Sent after a GET, nginx's response between the PINGs starts the count again: progress,
    /// either side's, `HTTP2FloodPolicy`.)
    @Test("a client's 10,001 PINGs after its preface: GOAWAY ENHANCE_YOUR_CALM to it; the flow names the client")
    func clientPingFlood() throws {
        let run = try hostileClient("ping-flood")
        #expect(run.client.hasSuffix("goaway 11 0\npings 0\nleftover 0\n"), "\(run.client.suffix(300))")
        #expect(run.error == "the client sent 10,001 PING frames without a request, response or DATA between them: tv forwarded the first 10,000 and ended the connection with GOAWAY ENHANCE_YOUR_CALM to the client and GOAWAY INTERNAL_ERROR to the server (RFC 9113 §10.5)")
    }

    /// (A client's 16,385-byte DATA frame is no error here: nginx's SETTINGS allow frames of up
    /// to 16,777,215 bytes, and tv follows what the receiver said.)
    @Test("a client's SETTINGS frame of 7 bytes after its GET, to nginx: GOAWAY FRAME_SIZE_ERROR to it, the client named")
    func clientSettingsMalformed() throws {
        let run = try hostileClient("bad-settings")
        #expect(run.client.hasSuffix("goaway 6 1\npings 0\nleftover 0\n"), "\(run.client)")
        #expect(run.error == Self.sentence("client", "a SETTINGS frame of 7 bytes, not a multiple of 6 (RFC 9113 §6.5)", "FRAME_SIZE_ERROR", other: "server"))
    }

    @Test("h2load -m100, 2,000 requests on one connection through tv: all succeed, the flow says nothing")
    func h2loadUntouched() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect", "--mode", "reverse:https://localhost:\(world.nginx.tlsPort)")
        let load = try box.tool("h2load", ["-n", "2000", "-c", "1", "-m", "100", "https://localhost:\(tv.port)/index.html"], timeout: 300)
        #expect(load.out.contains("2000 succeeded"), "\(load)")
        let flow = try #require(try box.closedFlows(1, timeout: 60).first)
        #expect(flow["error"] is NSNull, "\(flow)")
    }
}
