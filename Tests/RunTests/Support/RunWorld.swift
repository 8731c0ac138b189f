import Foundation
import Testing

/// One test's world: a sandbox whose data folder has tv's CA (`tv ca create`, unless asked not
/// to), and an nginx (h2 + http/1.1 via ALPN) with a certificate from the test upstream CA
/// (`TestPKI`: names localhost, a.test, … and IP 127.0.0.1). Everything is removed afterwards.
final class RunWorld {
    let sandbox: Sandbox
    let nginx: TestNginx
    let pki = TestPKI.shared

    init(createCA: Bool = true, nginxLocations: String = "") throws {
        sandbox = try Sandbox()
        do {
            if createCA { try sandbox.createCA() }
            nginx = try TestNginx(tlsLocations: nginxLocations)
        } catch {
            sandbox.remove()
            throw error
        }
    }

    deinit {
        nginx.stop()
        try? FileManager.default.removeItem(atPath: nginx.dir)
        sandbox.remove()
    }

    /// tv's root certificate (what clients are given with --cacert).
    var tvRoot: String { sandbox.rootPEM }
    /// The folder nginx serves.
    var www: String { nginx.dir + "/www" }
    /// `https://localhost:<nginx>/PATH`
    func url(_ path: String) -> String { "https://localhost:\(nginx.tlsPort)\(path)" }

    /// `tv run --upstream-ca <test upstream CA> ARGS…`
    func run(_ arguments: String..., environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> TVSession {
        try TVSession(sandbox, ["--upstream-ca", pki.upstreamCA] + arguments, environment: environment, sourceLocation: sourceLocation)
    }

    /// curl through `session` as an explicit proxy, trusting tv's root.
    func curlThrough(_ session: TVSession, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try sandbox.curl(["-x", session.proxyURL, "--cacert", tvRoot] + arguments, sourceLocation: sourceLocation)
    }
}
