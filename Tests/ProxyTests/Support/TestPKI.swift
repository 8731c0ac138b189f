import Foundation
import LocalCA

/// Certificates for the test servers, made with the openssl command (interop-cases.md recipes):
/// an upstream CA, server certificates it signs, and tv's own CA.
final class TestPKI: @unchecked Sendable {
    // `@unchecked Sendable`: immutable after init (paths and a finished CertificateAuthority).
    let dir: String
    let upstreamCA: String
    let serverCert: String
    let serverKey: String
    /// IP-only certificate (SAN IP:127.0.0.1, no DNS name).
    let ipCert: String
    let ipKey: String
    /// Self-signed, not from the upstream CA.
    let selfSignedCert: String
    let selfSignedKey: String
    /// tv's CA and its root certificate file.
    let authority: CertificateAuthority
    let tvRoot: String

    /// `xn--bcher-kva.test` is `bücher.test`'s A-label (an international SNI, issue 14 §4).
    static let names = ["localhost", "a.test", "pin.test", "pin2.test", "quiet.test", "vanish.test", "other.test", "xn--bcher-kva.test"]

    init() throws {
        dir = Shell.tempDirectory("pki")
        upstreamCA = dir + "/up-ca.pem"
        serverCert = dir + "/server.pem"
        serverKey = dir + "/server.key"
        ipCert = dir + "/ip.pem"
        ipKey = dir + "/ip.key"
        selfSignedCert = dir + "/self.pem"
        selfSignedKey = dir + "/self.key"
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        func openssl(_ args: [String]) throws {
            let r = Shell.run(["openssl"] + args, timeout: 30)
            guard r.status == 0 else { throw TestError("openssl \(args.joined(separator: " ")): \(r.err)") }
        }
        try openssl(["req", "-x509"] + ec + ["-keyout", dir + "/up-ca.key", "-out", upstreamCA, "-subj", "/CN=UpCA", "-days", "30",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
        let sans = (TestPKI.names.map { "DNS:\($0)" } + ["IP:127.0.0.1"]).joined(separator: ",")
        try openssl(["req"] + ec + ["-keyout", serverKey, "-subj", "/CN=localhost", "-days", "30",
                     "-addext", "subjectAltName=\(sans)", "-addext", "basicConstraints=CA:FALSE",
                     "-addext", "extendedKeyUsage=serverAuth", "-CA", upstreamCA, "-CAkey", dir + "/up-ca.key", "-out", serverCert])
        try openssl(["req"] + ec + ["-keyout", ipKey, "-subj", "/O=IP only", "-days", "30",
                     "-addext", "subjectAltName=IP:127.0.0.1", "-addext", "basicConstraints=CA:FALSE",
                     "-addext", "extendedKeyUsage=serverAuth", "-CA", upstreamCA, "-CAkey", dir + "/up-ca.key", "-out", ipCert])
        try openssl(["req", "-x509"] + ec + ["-keyout", selfSignedKey, "-out", selfSignedCert, "-subj", "/CN=localhost", "-days", "30",
                     "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        let folder = CAFolder(directory: dir + "/tvca")
        authority = try folder.create(now: Int64(Date().timeIntervalSince1970))
        tvRoot = folder.rootPath
    }

    /// Shared by every test in the process (made once: a few openssl runs).
    static let shared: TestPKI = try! TestPKI()
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}
