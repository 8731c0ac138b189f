import Foundation

/// Client programs the integration tests drive.
enum Clients {
    /// The subject/issuer/SAN text of the certificate a TLS server (through `proxy` if given)
    /// presents, as `openssl x509 -text` prints it.
    static func presentedCertificate(connect: String, proxy: String? = nil, serverName: String?, extra: [String] = []) -> String {
        var args = ["openssl", "s_client", "-connect", connect, "-showcerts"]
        if let proxy { args += ["-proxy", proxy] }
        if let serverName { args += ["-servername", serverName] } else { args += ["-noservername"] }
        let r = Shell.run(args + extra, timeout: 20, stdin: Data())
        guard let start = r.out.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = r.out.range(of: "-----END CERTIFICATE-----", range: start.upperBound..<r.out.endIndex) else {
            return "NO CERTIFICATE\n" + r.out + r.err
        }
        let pem = String(r.out[start.lowerBound..<end.upperBound]) + "\n"
        let text = Shell.run(["openssl", "x509", "-noout", "-text"], timeout: 10, stdin: Data(pem.utf8))
        return text.out
    }

    /// Runs a Python script (given as text) with arguments.
    static func python(_ script: String, _ arguments: [String] = [], timeout: Double = 60) -> Shell.Output {
        let path = NSTemporaryDirectory() + "tvpy-\(UUID().uuidString.prefix(8)).py"
        try? script.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Shell.run(["python3", path] + arguments, timeout: timeout)
    }
}

/// An `openssl s_server` upstream (`-www`: answers GET with a status page), always killed.
final class OpenSSLServer {
    let port: UInt16
    private let background: Background

    init(cert: String, key: String, extra: [String]) throws {
        port = Shell.freePort()
        let log = NSTemporaryDirectory() + "tvsrv-\(port).log"
        background = try Background(["openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert", cert, "-key", key, "-www", "-quiet"] + extra, logPath: log)
        guard Shell.waitForPort(port) else {
            background.stop()
            throw TestError("s_server did not start: \(background.log)")
        }
    }

    func stop() { background.stop() }
    deinit { background.stop() }
}

/// A Python TCP server running `script` (it receives the port as argv[1]), always killed.
final class PythonServer {
    let port: UInt16
    private let background: Background
    private let path: String

    /// `arguments` follow the port (argv[2]…); `python` is the interpreter (a venv's, say).
    init(_ script: String, arguments: [String] = [], python: String = "python3") throws {
        port = Shell.freePort()
        path = NSTemporaryDirectory() + "tvpysrv-\(port).py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        background = try Background([python, path, String(port)] + arguments, logPath: path + ".log")
        // Ready once the listener shows in /proc, without connecting: a server that speaks first
        // would write its banner to a probe that has already gone, and die of the reset.
        guard Shell.waitForListener(port) else {
            background.stop()
            throw TestError("python server did not start: \(background.log)")
        }
    }

    func stop() { background.stop() }
    deinit {
        background.stop()
        try? FileManager.default.removeItem(atPath: path)
    }
}
