import Foundation
import Proxy
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

@Suite("Integration: engine behaviour", .serialized)
final class EngineBehaviourTests {
    let nginx: TestNginx
    let pki = TestPKI.shared

    init() throws { nginx = try TestNginx() }
    deinit { nginx.stop() }

    @Test("passed-through TLS is spliced after the first bytes; 10 MiB intact")
    func splicedPassThrough() throws {
        let harness = try Harness { $0.inspectionEnabled = false }
        let out = NSTemporaryDirectory() + "tv-splice-\(UUID().uuidString.prefix(6)).bin"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.upstreamCA, "-o", out,
                           "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
        #expect(r.status == 0, "\(r.err)")
        #expect(Shell.run(["sha256sum", out]).out.prefix(64) == nginx.bigFileSHA256)
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .encrypted)
        #expect(flow.bytesFromServer > 10_485_760)
        // At most 256 KiB are copied before the pipe, plus the read that crossed it (one 256 KiB
        // buffer): the rest is spliced, however the reads fall.
        #expect(harness.server.counters.splicedBytes > 9_900_000, "\(harness.server.counters.splicedBytes)")
        #expect(harness.waitIdle())
    }

    @Test("a slow reader: back-pressure holds the server side, bytes arrive intact (inspected and plain)")
    func slowReader() throws {
        let harness = try Harness()
        for (url, extra) in [("https://localhost:\(nginx.tlsPort)/10m.bin", ["--cacert", pki.tvRoot]),
                             ("http://localhost:\(nginx.plainPort)/10m.bin", ["-p"])] {
            let out = NSTemporaryDirectory() + "tv-slow-\(UUID().uuidString.prefix(6)).bin"
            defer { try? FileManager.default.removeItem(atPath: out) }
            let r = Shell.run(["curl", "-sS", "--http1.1", "--limit-rate", "8M", "-x", harness.proxyURL] + extra + ["-o", out, url], timeout: 60)
            #expect(r.status == 0, "\(r.err)")
            #expect(Shell.run(["sha256sum", out]).out.prefix(64) == nginx.bigFileSHA256)
        }
        #expect(harness.sink.waitForClosed(2).count == 2)
        #expect(harness.waitIdle())
    }

    @Test("the recorder sees every plaintext byte when recording, nothing when not")
    func recorder() throws {
        for on in [true, false] {
            let recorder = CountingRecorder(on: on)
            let harness = try Harness { $0.chunkRecorder = recorder }
            let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null",
                               "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
            #expect(r.status == 0, "\(r.err)")
            let flow = try #require(harness.sink.waitForClosed(1).first)
            let recorded = recorder.bytes.load(ordering: .relaxed)
            if on {
                #expect(UInt64(recorded) == flow.bytesFromClient + flow.bytesFromServer)
            } else {
                #expect(recorded == 0)
            }
            #expect(harness.waitIdle())
        }
    }

    @Test("a recorder that wants nothing more of a flow is handed none of its later chunks")
    func recorderDone() throws {
        let recorder = CountingRecorder(on: true, wanted: false)
        let harness = try Harness { $0.chunkRecorder = recorder }
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null",
                           "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
        #expect(r.status == 0, "\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.bytesFromServer > 10_000_000)
        // The request, the first chunk, was the last it was handed.
        #expect(recorder.chunks.load(ordering: .relaxed) == 1)
        #expect(UInt64(recorder.bytes.load(ordering: .relaxed)) == flow.bytesFromClient)
        #expect(harness.waitIdle())
    }

    @Test("a recorder that gives a flow its own recorder is asked once; every chunk goes to that one", arguments: [true, false])
    func heldFlowRecorder(wanted: Bool) throws {
        let recorder = CountingRecorder(on: true, wanted: wanted, holds: true)
        let harness = try Harness { $0.chunkRecorder = recorder }
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-o", "/dev/null",
                           "https://localhost:\(nginx.tlsPort)/10m.bin"], timeout: 60)
        #expect(r.status == 0, "\(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.bytesFromServer > 10_000_000)
        #expect(recorder.flowRecordersAsked.load(ordering: .relaxed) == 1)
        #expect(recorder.chunks.load(ordering: .relaxed) == 0)
        if wanted {
            #expect(UInt64(recorder.held.bytes.load(ordering: .relaxed)) == flow.bytesFromClient + flow.bytesFromServer)
        } else {
            // The request, the first chunk, was the last it was handed.
            #expect(recorder.held.chunks.load(ordering: .relaxed) == 1)
            #expect(UInt64(recorder.held.bytes.load(ordering: .relaxed)) == flow.bytesFromClient)
        }
        #expect(harness.waitIdle())
    }

    @Test("client-leg session resumption with a ticket; upstream sessions reused")
    func resumption() throws {
        let harness = try Harness(mode: .reverse(tls: true, host: "127.0.0.1", port: nginx.tlsPort))
        let session = NSTemporaryDirectory() + "tv-sess-\(UUID().uuidString.prefix(6)).pem"
        defer { try? FileManager.default.removeItem(atPath: session) }
        let base = ["openssl", "s_client", "-connect", "127.0.0.1:\(harness.port)", "-servername", "a.test", "-ign_eof"]
        let request = Data("GET /index.html HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".utf8)
        let first = Shell.run(base + ["-sess_out", session], timeout: 20, stdin: request)
        #expect(first.out.contains("hello from nginx"), "\(first.err)")
        let second = Shell.run(base + ["-sess_in", session], timeout: 20, stdin: request)
        #expect(second.out.contains("Reused, TLSv1.3"), "\(second.out)")
        #expect(second.out.contains("hello from nginx"))
        let third = Shell.run(base + ["-sess_in", session], timeout: 20, stdin: request)
        #expect(third.out.contains("Reused, TLSv1.3"), "\(third.out)")
        let flows = harness.sink.waitForClosed(3).sorted { $0.id < $1.id }
        #expect(flows.count == 3)
        let counters = harness.server.counters
        #expect(counters.clientResumptions == 2)
        // The first connection stored the origin's ticket; the next two resumed with it.
        #expect(counters.upstreamResumptions == 2)
        #expect(flows.map(\.clientResumed) == [false, true, true])
        #expect(flows.map(\.upstreamResumed) == [false, true, true])
        #expect(harness.waitIdle())
    }

    @Test("TLS 1.3 suites on the client leg: the client's order decides (AES-256, AES-128 or ChaCha20 first), as with the real server")
    func suiteOrder() throws {
        let harness = try Harness(mode: .reverse(tls: true, host: "127.0.0.1", port: nginx.tlsPort))
        let base = ["openssl", "s_client", "-connect", "127.0.0.1:\(harness.port)", "-servername", "a.test", "-ign_eof"]
        let request = Data("GET /index.html HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".utf8)
        let aesFirst = Shell.run(base + ["-ciphersuites", "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256"], timeout: 20, stdin: request)
        #expect(aesFirst.out.contains("Cipher is TLS_AES_256_GCM_SHA384"), "\(aesFirst.out)")
        #expect(aesFirst.out.contains("hello from nginx"))
        let aes128First = Shell.run(base + ["-ciphersuites", "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"], timeout: 20, stdin: request)
        #expect(aes128First.out.contains("Cipher is TLS_AES_128_GCM_SHA256"), "\(aes128First.out)")
        let chachaFirst = Shell.run(base + ["-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"], timeout: 20, stdin: request)
        #expect(chachaFirst.out.contains("Cipher is TLS_CHACHA20_POLY1305_SHA256"), "\(chachaFirst.out)")
        let only256 = Shell.run(base + ["-ciphersuites", "TLS_AES_256_GCM_SHA384"], timeout: 20, stdin: request)
        #expect(only256.out.contains("Cipher is TLS_AES_256_GCM_SHA384"), "\(only256.out)")
        #expect(harness.sink.waitForClosed(4).count == 4)
        #expect(harness.waitIdle())
    }

    @Test("half-close is carried (FIN one way, the other keeps flowing); a reset is carried as a reset")
    func halfCloseAndReset() throws {
        let server = try PythonServer("""
        import socket, sys, struct
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
        while True:
            c, _ = s.accept()
            data = b""
            while True:
                chunk = c.recv(4096)
                if not chunk: break
                data += chunk
            if data == b"RESET":
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.close(); continue
            c.sendall(b"got %d bytes after your FIN" % len(data))
            c.close()
        """)
        defer { server.stop() }
        let harness = try Harness()
        let client = """
        import socket, sys
        def tunnel():
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
            s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
            head = b""
            while b"\\r\\n\\r\\n" not in head: head += s.recv(1)
            return s
        s = tunnel()
        s.sendall(b"x" * 5000)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while True:
            chunk = s.recv(4096)
            if not chunk: break
            reply += chunk
        print(reply.decode())
        s = tunnel()
        s.sendall(b"RESET"); s.shutdown(socket.SHUT_WR)
        try:
            s.recv(100); print("no reset")
        except ConnectionResetError:
            print("reset")
        """
        let r = Clients.python(client, [String(harness.port), String(server.port)], timeout: 20)
        #expect(r.out == "got 5000 bytes after your FIN\nreset\n", "\(r.out) \(r.err)")
        let flows = harness.sink.waitForClosed(2)
        #expect(flows.first?.status == .notEncrypted)
        #expect(flows.last?.error == "the server reset the connection")
        #expect(harness.waitIdle())
    }

    @Test("idle connections are closed after the idle timeout")
    func idleTimeout() throws {
        let harness = try Harness { $0.idleTimeout = 1 }
        let script = """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += s.recv(1)
        s.sendall(b"GET /index.html HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        time.sleep(0.2); s.recv(4096)
        t = time.time()
        print(s.recv(10) == b"", round(time.time() - t))
        """
        let r = Clients.python(script, [String(harness.port), String(nginx.plainPort)])
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "True 1", "\(r.out) \(r.err)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.error?.contains("without traffic") == true)
    }

    @Test("an inspected HTTP/1 request the server never answers: tv answers 504 at the idle timeout, the row is tv's answer, the flow says why (a trial's got a bare close)")
    func silentServerAnswered504() throws {
        let harness = try Harness { $0.idleTimeout = 1 }
        let silent = try PythonServer("""
            import socket, ssl, sys, time
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[2], sys.argv[3])
            l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
            c, _ = l.accept(); s = ctx.wrap_socket(c, server_side=True); s.recv(65536); time.sleep(30)
            """, arguments: [pki.serverCert, pki.serverKey])
        defer { silent.stop() }
        let r = Shell.run(["curl", "-sS", "--http1.1", "-x", harness.proxyURL, "--cacert", pki.tvRoot, "-w", "%{http_code}",
                           "https://localhost:\(silent.port)/slow"], timeout: 20)
        #expect(r.status == 0 && r.out == "tv: no response from the server within 1 s of the request\n504", "\(r)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .inspected && flow.error == "no response from the server within 1 s of the request", "\(flow)")
        let row = harness.sink.exchanges.last
        #expect(row?.path == "/slow" && row?.status == 504 && row?.state == .answered, "\(String(describing: row))")
        #expect(harness.waitIdle())
    }

    /// A Python client (argv: tv's port, the server's port) that opens a CONNECT tunnel through
    /// tv, reads its 200's head, then runs `then` (Python lines, `s` the socket).
    static func tunnelClient(then: String) -> String {
        """
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
        s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += s.recv(1)

        """ + then + "\n"
    }

    @Test("a CONNECT tunnel whose server closes before anything was said: failed with that said, not a plain-text relay of nothing (a trial)")
    func serverClosesFirst() throws {
        let harness = try Harness()
        let closer = try PythonServer("""
            import socket, sys, time
            l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
            c, _ = l.accept(); time.sleep(0.3); c.close(); time.sleep(5)
            """)
        defer { closer.stop() }
        let script = Self.tunnelClient(then: "print(s.recv(10) == b\"\")")
        let r = Clients.python(script, [String(harness.port), String(closer.port)])
        #expect(r.out == "True\n", "\(r)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.status == .failed && flow.error == "the server closed the connection before either side said anything", "\(flow)")
        #expect(harness.waitIdle())
    }

    @Test("a client that stops reading what the server sends: closed at the idle timeout with that said, not 'without traffic' (a trial)")
    func clientStoppedReading() throws {
        let harness = try Harness { $0.idleTimeout = 1 }
        let talker = try PythonServer("""
            import socket, sys, time
            l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(8)
            c, _ = l.accept(); c.settimeout(20)
            try:
                while True: c.sendall(b"x" * 65536)
            except OSError:
                pass
            time.sleep(5)
            """)
        defer { talker.stop() }
        let script = Self.tunnelClient(then: "time.sleep(4)\nprint(\"done\")")
        let r = Clients.python(script, [String(harness.port), String(talker.port)])
        #expect(r.out == "done\n", "\(r)")
        let flow = try #require(harness.sink.waitForClosed(1).first)
        #expect(flow.error == "closed after 1 s in which the client took nothing of what tv held for it (it stopped reading)", "\(String(describing: flow.error))")
        #expect(harness.waitIdle())
    }

    @Test("a port already in use is a sentence; stop() resets open connections and joins; adopt() takes a connection")
    func lifecycle() throws {
        let first = try Harness()
        var configuration = ProxyConfiguration()
        configuration.listenPort = first.port
        let second = ProxyServer(configuration: configuration)
        #expect(throws: ProxyError.portInUse(host: "127.0.0.1", port: first.port)) { try second.start() }

        // adopt(): a TCP connection with its original destination, as the transparent front-end will pass it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        _ = Glibc.listen(listener, 4)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        let port = UInt16(bigEndian: address.sin_port)
        let clientDone = DispatchSemaphore(value: 0)
        let output = Mutex<Shell.Output?>(nil)
        Thread {
            let r = Shell.run(["curl", "-sS", "--cacert", TestPKI.shared.tvRoot, "--resolve", "a.test:\(port):127.0.0.1",
                               "https://a.test:\(port)/index.html"], timeout: 20)
            output.withLock { $0 = r }
            clientDone.signal()
        }.start()
        let accepted = accept(listener, nil, nil)
        close(listener)
        #expect(first.server.adopt(clientFD: accepted, client: SocketAddress(numericHost: "127.0.0.1", port: 1)!,
                                   destination: OriginalDestination(host: "127.0.0.1", port: nginx.tlsPort, origin: .none)) == nil)
        clientDone.wait()
        #expect(output.withLock { $0?.out } == "hello from nginx\n")
        let adopted = try #require(first.sink.waitForClosed(1).first)
        #expect(adopted.status == .inspected)
        #expect(adopted.host == "a.test")

        // stop(): an open tunnel is reset, the threads joined, counters still readable.
        let holder = Background.python("""
        import socket, sys, time
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % sys.argv[2].encode())
        time.sleep(0.3)
        s.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        time.sleep(30)
        """, [String(first.port), String(nginx.plainPort)])
        defer { holder.stop() }
        let deadline = Date().addingTimeInterval(5)
        while first.server.counters.openConnections == 0 && Date() < deadline { usleep(10_000) }
        #expect(first.server.counters.openConnections == 1)
        first.server.stop()
        #expect(first.server.counters.openConnections == 0)
        #expect(first.sink.waitForClosed(2).last?.error == "tv stopped")
        #expect(first.server.address == nil)
    }
}
