import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `openssl s_server` serving a leaf from `tv ca issue` on 127.0.0.1, with the listener always stopped.
final class TLSServer {
    let process: Child
    let port: UInt16
    let logPath: String

    /// Starts the server on a free loopback port and waits (≤ 5 s) until it accepts connections.
    init(cert: String, key: String, sandbox: Sandbox) throws {
        var lastError = "no attempt"
        for attempt in 0..<5 {
            let port = freeLoopbackPort()
            let log = sandbox.root + "/s_server-\(attempt).log"
            let process = try Child("openssl", ["s_server", "-cert", cert, "-key", key, "-accept", "127.0.0.1:\(port)", "-www", "-quiet"],
                                    environment: sandbox.environment, directory: sandbox.work, log: log)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline && !isListening(port) { usleep(10_000) }
            if process.isRunning && isListening(port) {
                self.process = process
                self.port = port
                self.logPath = log
                return
            }
            process.stop()
            lastError = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
        }
        throw StartFailed(log: lastError)
    }

    /// Stops the server and waits for it (also when the object goes away: `Child`'s deinit).
    func stop() { process.stop() }

    struct StartFailed: Error, CustomStringConvertible {
        let log: String
        var description: String { "openssl s_server did not start listening: \(log)" }
    }
}

/// Python's `ssl` client: verify against the root only, connect, send a request, report.
let pythonClient = #"""
import json, socket, ssl, sys
cafile, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=cafile)
ctx.verify_flags |= ssl.VERIFY_X509_STRICT
try:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname=name) as tls:
            tls.sendall(b"GET / HTTP/1.0\r\n\r\n")
            data = b""
            while len(data) < 65536:
                chunk = tls.recv(4096)
                if not chunk:
                    break
                data += chunk
            cert = tls.getpeercert()
            print(json.dumps({"version": tls.version(), "status": data.split(b"\r\n", 1)[0].decode(),
                              "san": [list(x) for x in cert["subjectAltName"]],
                              "verify_mode": int(ctx.verify_mode), "check_hostname": ctx.check_hostname}))
except ssl.SSLCertVerificationError as e:
    print(json.dumps({"verify_error": e.verify_code, "message": e.verify_message}))
    sys.exit(3)
"""#

/// A real TLS handshake with a leaf from `tv ca issue`, verified by curl and Python (issue 2).
/// Serialized: each test runs a listener on a loopback port.
@Suite("CLI: TLS handshake with a minted leaf", .serialized, .timeLimit(.minutes(5)))
struct TLSHandshakeTests {
    /// A sandbox with a CA and `tv ca issue a.test 127.0.0.1` served by s_server.
    func withServer(_ body: (Sandbox, TLSServer) throws -> Void) throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = try s.issue(["a.test", "127.0.0.1"])
            let server = try TLSServer(cert: leaf.cert, key: leaf.key, sandbox: s)
            defer { server.stop() }
            try body(s, server)
        }
    }

    func curl(_ s: Sandbox, cacert: String, name: String, port: UInt16, resolve: Bool = true) throws -> ProcessOutput {
        let url = name.contains(":") ? "https://[\(name)]:\(port)/" : "https://\(name):\(port)/"
        return try s.tool("curl", ["-sS", "--max-time", "10", "--cacert", cacert]
                          + (resolve ? ["--resolve", "\(name):\(port):127.0.0.1"] : []) + [url])
    }

    @Test("curl --cacert root.pem --resolve a.test:PORT:127.0.0.1 succeeds")
    func curlByName() throws {
        try withServer { s, server in
            let result = try curl(s, cacert: s.rootPEM, name: "a.test", port: server.port)
            #expect(result.status == 0, "\(result)")
            #expect(result.out.contains("s_server"), "the -www page came back")
        }
    }

    @Test("curl to https://127.0.0.1:PORT/ verifies the IPv4 SAN")
    func curlByAddress() throws {
        try withServer { s, server in
            let result = try curl(s, cacert: s.rootPEM, name: "127.0.0.1", port: server.port, resolve: false)
            #expect(result.status == 0, "\(result)")
        }
    }

    @Test("curl refuses a name not in the SAN, and the leaf under another root (exit 60)")
    func curlRefuses() throws {
        try withServer { s, server in
            let wrongName = try curl(s, cacert: s.rootPEM, name: "b.test", port: server.port)
            #expect(wrongName.status == 60, "\(wrongName)")
            #expect(wrongName.err.contains("b.test"), "\(wrongName)")
            try withSandbox { other in
                try other.createCA()
                let wrongRoot = try curl(other, cacert: other.rootPEM, name: "a.test", port: server.port)
                #expect(wrongRoot.status == 60, "\(wrongRoot)")
            }
        }
    }

    @Test("python3 ssl.create_default_context(cafile=root) verifies and connects, by name and by IP")
    func python() throws {
        try withServer { s, server in
            let script = try s.write("client.py", pythonClient)
            for name in ["a.test", "127.0.0.1"] {
                let result = try s.tool("python3", [script, s.rootPEM, String(server.port), name])
                #expect(result.status == 0, "\(name): \(result)")
                let report = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
                #expect(report?["status"] as? String == "HTTP/1.0 200 ok", "\(result)")
                #expect((report?["version"] as? String)?.hasPrefix("TLSv1.") == true)
                #expect(report?["verify_mode"] as? Int == 2)  // CERT_REQUIRED
                #expect(report?["check_hostname"] as? Bool == true)
                #expect((report?["san"] as? [[String]]) == [["DNS", "a.test"], ["IP Address", "127.0.0.1"]])
            }
            // A name the leaf does not carry: Python refuses it (hostname mismatch, code 62).
            let refused = try s.tool("python3", [script, s.rootPEM, String(server.port), "b.test"])
            #expect(refused.status == 3, "\(refused)")
            let report = try JSONSerialization.jsonObject(with: refused.stdout) as? [String: Any]
            #expect(report?["verify_error"] as? Int == 62, "\(refused)")
        }
    }
}
