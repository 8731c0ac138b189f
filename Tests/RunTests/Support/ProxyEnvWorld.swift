import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An HTTPS server for `tv exec --proxy` tests: Python's http.server (HTTP/1.1, keep-alive) over
/// TLS with the test upstream CA's certificate (names localhost, a.test, IP 127.0.0.1), serving
/// `www` (files and a dumb git repository); each response waits 150 ms, so every client still
/// holds its socket when tv names the program behind the flow.
let slowHTTPSServer = #"""
import http.server, os, ssl, sys, time
port, cert, key, www = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.chdir(www)
class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.15)
        super().do_GET()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""#

/// One `tv exec --proxy` test's world: a sandbox with tv's CA, the slow HTTPS server above with
/// `hello.txt` ("hello through tv"), and the real `tv` binary run as `tv exec --proxy`.
final class ProxyEnvWorld {
    let sandbox: Sandbox
    let pki = TestPKI.shared
    let www: String
    let port: UInt16
    private let server: Background

    init() throws {
        sandbox = try Sandbox()
        www = sandbox.root + "/www"
        do {
            try sandbox.createCA()
            try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
            try "hello through tv\n".write(toFile: www + "/hello.txt", atomically: true, encoding: .utf8)
            let script = sandbox.root + "/server.py"
            try slowHTTPSServer.write(toFile: script, atomically: true, encoding: .utf8)
            port = Shell.freePort()
            server = try Background(["python3", script, String(port), pki.serverCert, pki.serverKey, www], logPath: script + ".log")
        } catch {
            sandbox.remove()
            throw error
        }
        guard Shell.waitForPort(port) else {
            server.stop()
            sandbox.remove()
            throw TestError("the HTTPS server did not start: \(server.log)")
        }
    }

    deinit {
        server.stop()
        sandbox.remove()
    }

    /// `https://HOST:<server>/PATH`.
    func url(_ path: String, host: String = "localhost") -> String { "https://\(host):\(port)\(path)" }

    /// `tv exec --proxy --upstream-ca <test CA> OPTIONS -- COMMAND…` in the sandbox's clean
    /// environment plus `environment`; `hosts`: a file bind-mounted over /etc/hosts for tv
    /// (and CMD) in a private mount namespace, so tv resolves a.test (needs root).
    func exec(_ command: [String], options: [String] = ["--proxy-loopback"], environment: [String: String] = [:],
              hosts: String? = nil, timeout: Double = 120, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let tv = try TVBinary.require()
        var arguments = [tv, "--data-dir", sandbox.dataDir, "exec", "--proxy", "--upstream-ca", pki.upstreamCA] + options + ["--"] + command
        if let hosts {
            arguments = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                         "mount --bind \"$0\" /etc/hosts && exec \"$@\"", hosts] + arguments
        }
        return try Run.process(arguments[0], Array(arguments.dropFirst()), in: sandbox.work,
                               environment: sandbox.environment.merging(environment) { $1 }, timeout: timeout, sourceLocation: sourceLocation)
    }

    /// A hosts file naming a.test as 127.0.0.1 (with localhost kept).
    func hostsFile() throws -> String {
        let path = sandbox.root + "/hosts"
        try "127.0.0.1 localhost\n127.0.0.1 a.test\n::1 localhost\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The flows recorded (all closed), oldest first.
    func flows(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> [JSON] {
        try sandbox.closedFlows(count, sourceLocation: sourceLocation)
    }

    /// Expects every flow in `rows` inspected, to `host`, and made by `command` (its program
    /// named: known, that command).
    func expectInspected(_ rows: [JSON], host: String = "localhost", by command: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!rows.isEmpty, sourceLocation: sourceLocation)
        for row in rows {
            let program = row["program"] as? [String: Any] ?? [:]
            #expect(row.string("status") == "inspected" && row.string("host") == host, "\(row)", sourceLocation: sourceLocation)
            #expect(program["known"] as? Bool == true && program["command"] as? String == command, "\(program)", sourceLocation: sourceLocation)
        }
    }

    /// Whether the machine can bind-mount a hosts file in a private mount namespace (root).
    static var canMapHosts: Bool { getuid() == 0 && (try? Run.resolve("unshare")) != nil }
}
