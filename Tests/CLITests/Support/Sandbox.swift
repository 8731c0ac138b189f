import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Where the built `tv` is: next to the test bundle (on Linux the test runner is an executable
/// in `.build/<config>/`, and `tv` sits beside it), else `$TV_BIN`.
enum TVBinary {
    static let path: String? = {
        var candidates: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let argv0 = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: argv0).deletingLastPathComponent())
        }
        for folder in candidates {
            let tv = folder.appendingPathComponent("tv").path
            if FileManager.default.isExecutableFile(atPath: tv) { return tv }
        }
        if let env = ProcessInfo.processInfo.environment["TV_BIN"], FileManager.default.isExecutableFile(atPath: env) {
            return env
        }
        return nil
    }()

    static func require() throws -> String {
        guard let path else {
            throw NotFound()
        }
        return path
    }

    struct NotFound: Error, CustomStringConvertible {
        var description: String {
            "the built tv was not found next to the test bundle (\(Bundle.main.bundleURL.path)); run `swift build` first or set TV_BIN"
        }
    }
}

/// One test's private world: a temporary folder holding the data folder (`data/`), a working
/// folder (`work/`, the children's current folder) and HOME; removed by `remove()`.
struct Sandbox {
    let root: String
    var dataDir: String { root + "/data" }
    var work: String { root + "/work" }
    var caDir: String { dataDir + "/ca" }
    var rootPEM: String { caDir + "/root.pem" }
    var environment: [String: String] { Run.environment(home: root + "/home") }

    init() throws {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("tv-cli-XXXXXX")
        var bytes = Array(template.utf8CString)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw CocoaError(.fileWriteUnknown)
        }
        root = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for sub in ["/work", "/home"] {
            try FileManager.default.createDirectory(atPath: root + sub, withIntermediateDirectories: false)
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// `tv --data-dir <sandbox>/data ARGS…`
    @discardableResult
    func tv(_ arguments: String..., stdin: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try tvArgs(arguments, stdin: stdin, sourceLocation: sourceLocation)
    }

    @discardableResult
    func tvArgs(_ arguments: [String], dataDir: Bool = true, stdin: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try Run.process(try TVBinary.require(), (dataDir ? ["--data-dir", self.dataDir] : []) + arguments,
                        in: work, environment: environment, stdin: stdin, timeout: 30, sourceLocation: sourceLocation)
    }

    /// Runs another tool (openssl, curl, python3) in the working folder.
    @discardableResult
    func tool(_ name: String, _ arguments: [String], stdin: Data? = nil, timeout: Double = 20,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        try Run.process(name, arguments, in: work, environment: environment, stdin: stdin, timeout: timeout, sourceLocation: sourceLocation)
    }

    /// `tv ca create` (with `extra` options), which must succeed.
    func createCA(_ extra: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try tvArgs(["ca", "create"] + extra, sourceLocation: sourceLocation)
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        guard result.status == 0 else { throw Failed(output: result) }
    }

    /// `tv ca issue NAMES… --out-dir DIR`, which must succeed; returns the paths of the
    /// certificate, the chain a server sends (no root), the key and the CA's root.
    func issue(_ names: [String], key: String? = nil, outDir: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> (cert: String, chain: String, key: String, root: String) {
        let dir = outDir ?? work + "/issued"
        let result = try tvArgs(["ca", "issue"] + names + ["--out-dir", dir] + (key.map { ["--key", $0] } ?? []), sourceLocation: sourceLocation)
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        guard result.status == 0 else { throw Failed(output: result) }
        // tv names the files after the first name as normalised (lowercase, no trailing dot).
        var base = names[0].hasPrefix("[") ? String(names[0].dropFirst().dropLast()) : names[0].lowercased()
        if base.hasSuffix(".") { base.removeLast() }
        return (dir + "/\(base).pem", dir + "/\(base)-chain.pem", dir + "/\(base)-key.pem", dir + "/\(base)-root.pem")
    }

    func read(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }
    func text(_ path: String) -> String { String(decoding: read(path), as: UTF8.self) }
    func write(_ name: String, _ text: String) throws -> String {
        let path = work + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The permission bits of `path`.
    func mode(_ path: String) -> mode_t? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return st.st_mode & 0o7777
    }

    struct Failed: Error, CustomStringConvertible {
        let output: ProcessOutput
        var description: String { output.description }
    }
}

/// Every line trimmed, empty lines dropped: compares `openssl x509 -text` layout-independently.
func normalizedLines(_ text: String) -> String {
    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
}

/// Runs `body` with a fresh sandbox, removing it afterwards whatever happens.
func withSandbox<T>(_ body: (Sandbox) throws -> T) throws -> T {
    let sandbox = try Sandbox()
    defer { sandbox.remove() }
    return try body(sandbox)
}
