import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A temporary world for running the built `tv`: its own `$TV_HOME`, an OpenSSL "system" store
/// made of `bundle.pem` (SSL_CERT_FILE) and `certs/` (SSL_CERT_DIR), HOME pointing inside, and
/// TV_NO_SYSTEM_TRUST_CHANGES=1 so no command can touch this machine's real trust store.
/// Everything is removed when the test ends.
final class TVSandbox {
    let path: String
    var home: String { path + "/home" }
    var ca: String { home + "/ca" }
    var bundle: String { path + "/bundle.pem" }
    var certs: String { path + "/certs" }
    var environment: [String: String]

    init() {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("tv-setup-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        environment = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": path,
            "TV_HOME": path + "/home",
            "SSL_CERT_FILE": path + "/bundle.pem",
            "SSL_CERT_DIR": path + "/certs",
            "TV_NO_SYSTEM_TRUST_CHANGES": "1",
            "LANG": "C.UTF-8",
        ]
        _ = FileManager.default.createFile(atPath: bundle, contents: Data())
        try? FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The built `tv`, next to the test bundle in `.build/<config>/`.
    static let binary: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tv").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent(".build/debug/tv").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return beside
    }()

    struct Result {
        let status: Int32
        let out: String
        let err: String
    }

    /// Runs `tv ARGS` with standard input from /dev/null (not a terminal), at most 60 s.
    @discardableResult
    func tv(_ arguments: String...) -> Result { run(TVSandbox.binary, arguments) }

    /// Runs `program` (a `Child`: see there why not Foundation's `Process`) with its output in
    /// files, at most `timeout` seconds (then killed: status -9).
    func run(_ program: String, _ arguments: [String], timeout: Double = 60) -> Result {
        let finished = Child.run(program, arguments, environment: environment, timeout: timeout)
        let out = String(decoding: finished.stdout, as: UTF8.self), err = String(decoding: finished.stderr, as: UTF8.self)
        if let failure = finished.startFailure { return Result(status: -1, out: "", err: "could not start \(program): \(failure)") }
        guard !finished.timedOut else { return Result(status: -9, out: out, err: err + "\n[killed after \(timeout) s]") }
        return Result(status: finished.status, out: out, err: err)
    }

    /// Runs a helper program (openssl, certutil) and requires success.
    @discardableResult
    func sh(_ program: String, _ arguments: String...) throws -> String {
        let path = ["/usr/bin/", "/bin/", "/usr/sbin/"].map { $0 + program }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? program
        let result = run(path, arguments)
        try #require(result.status == 0, "\(program) \(arguments.joined(separator: " ")): \(result.err)")
        return result.out
    }

    func write(_ path: String, _ text: String) {
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), "could not write \(path)")
    }
    func read(_ path: String) -> String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
    func bytes(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { [UInt8]($0) } }
    var rootPEM: String { read(ca + "/root.pem") }

    /// The saved settings as text.
    var settings: String { read(home + "/settings.json") }
    /// Whether the saved settings say inspection is on.
    var inspectionOn: Bool { settings.contains("\"inspection.enabled\": true") }

    /// `tv ca status --json` (plus ARGS) parsed.
    func statusJSON(_ extra: String...) throws -> [String: Any] {
        let result = run(TVSandbox.binary, ["ca", "status", "--json"] + extra)
        let object = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any]
        return try #require(object, "not JSON: \(result.out) \(result.err)")
    }

    /// The root as a TRUSTED CERTIFICATE whose trust settings reject serverAuth.
    func rejectedRoot() throws -> String {
        try sh("openssl", "x509", "-in", ca + "/root.pem", "-addreject", "serverAuth", "-trustout")
    }
}

/// Bytes collected from a reader thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ d: Data) { lock.lock(); data.append(d); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}

extension Dictionary where Key == String, Value == Any {
    /// `json["stage"]["step"]`-style access for tests.
    subscript(path keys: String...) -> Any? {
        var current: Any? = self
        for key in keys { current = (current as? [String: Any])?[key] }
        return current
    }
}
