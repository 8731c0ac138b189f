import Foundation
import LocalCA
import Testing
import TrustStore
#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder with a fresh CA in it, and helpers to build trust stores there; removed
/// when the test ends.
final class StoreFixture {
    let path: String
    let ca: CertificateAuthority
    let caFolder: CAFolder
    let now = Int64(Date().timeIntervalSince1970)
    /// PATH for openssl and certutil.
    let environment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]

    init() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("tv-trust-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        caFolder = CAFolder(directory: path + "/ca")
        ca = try caFolder.create(now: Int64(Date().timeIntervalSince1970))
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    var rootPEM: String { String(decoding: ca.root.pem, as: UTF8.self) }

    func write(_ name: String, _ text: String) {
        let full = path + "/" + name
        try? FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: full, contents: Data(text.utf8)), "could not write \(full)")
    }
    func read(_ name: String) -> String { String(decoding: FileManager.default.contents(atPath: path + "/" + name) ?? Data(), as: UTF8.self) }
    func mkdir(_ name: String) { try? FileManager.default.createDirectory(atPath: path + "/" + name, withIntermediateDirectories: true) }

    /// Runs a program (30 s limit) and requires exit status 0; returns standard output.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let result = try BoundedProcess.run(program, arguments, environment: environment, timeout: 30)
        try #require(result.status == 0, "\(program) \(arguments.joined(separator: " ")): \(result.firstErrorLine)")
        return String(decoding: result.stdout, as: UTF8.self)
    }

    /// The root as `openssl x509 … -trustout` writes it with extra trust options (e.g.
    /// ["-addreject", "serverAuth"]): a TRUSTED CERTIFICATE block.
    func trustedRoot(_ options: [String]) throws -> String {
        try run("openssl", ["x509", "-in", caFolder.rootPath] + options + ["-trustout"])
    }

    /// Another self-signed CA's certificate (PEM), not ours.
    func otherRoot() throws -> String {
        try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-keyout", path + "/other-key.pem", "-subj", "/CN=Other Root", "-days", "30",
                            "-addext", "basicConstraints=critical,CA:TRUE"])
    }

    /// A new NSS database in `name` (empty password).
    func makeNSS(_ name: String) throws -> String {
        mkdir(name)
        try run("certutil", ["-N", "--empty-password", "-d", "sql:" + path + "/" + name])
        return path + "/" + name
    }

    /// Adds our root to the NSS database with `trust` (e.g. ",," or "C,,"), or changes its trust.
    func nss(_ dir: String, trust: String, nickname: String = "TV Test Root") throws {
        try run("certutil", ["-A", "-d", "sql:" + dir, "-n", nickname, "-t", trust, "-a", "-i", caFolder.rootPath])
    }

    func ask(_ store: TrustStoreSpec, environment extra: [String: String] = [:]) -> TrustFacts {
        TrustQuestions.ask(store, about: ca, now: now, environment: environment.merging(extra) { _, new in new })
    }
}
