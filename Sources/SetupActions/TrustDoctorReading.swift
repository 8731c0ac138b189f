import TVHome
import CertificateSetup
import Foundation
import LocalCA
import TrustStore
#if canImport(Glibc)
import Glibc
#endif

/// The I/O of `tv ca trust --doctor`: finds the places programs on this machine look for roots
/// (the system store, browser NSS databases under $HOME, the JVM on PATH, each Python on PATH
/// with certifi, node, go, curl) and asks each now whether it trusts the root. Each program is
/// run bounded (`BoundedProcess`); a place that cannot be read answers `.unknown`.
public enum TrustDoctorReading {
    /// What was found, and the system store's usable answer (`TrustDoctor.rows` needs both).
    public struct Found: Sendable {
        public let places: [TrustPlaceFacts]
        public let system: TrustAnswer
        /// The system store's bundle file, as named and with links resolved.
        public let systemBundles: Set<String>
    }

    /// Seconds each probe (an interpreter, node, keytool) may take.
    static let timeout: Double = 20

    /// Asks every place found, in the doctor's order.
    public static func read(ca: CertificateAuthority, environment: [String: String], now: Int64) -> Found {
        let systemFacts = TrustQuestions.ask(.system, about: ca, now: now, environment: environment)
        let paths = TrustQuestions.systemPaths(environment: environment)
        var places: [TrustPlaceFacts] = [.system(systemFacts, location: ([paths.file] + paths.dirs).joined(separator: ", "))]
        for (browser, dir) in nssDatabases(home: environment["HOME"]) {
            places.append(.nss(browser: browser, TrustQuestions.ask(.nss(dir), about: ca, now: now, environment: environment)))
        }
        func bundle(_ variable: String) -> NamedBundle? {
            guard let path = environment[variable], !path.isEmpty else { return nil }
            return NamedBundle(variable: variable, path: path, trusts: TrustQuestions.ask(.file(path), about: ca, now: now, environment: environment).usable)
        }
        if let java = java(environment: environment, root: ca.root) { places.append(java) }
        let named = bundle("REQUESTS_CA_BUNDLE") ?? bundle("CURL_CA_BUNDLE")
        for python in pythons(environment: environment) {
            places.append(.python(program: python.executable, version: python.version, certifi: python.certifi,
                                  certifiTrusts: TrustQuestions.ask(.file(python.certifi), about: ca, now: now, environment: environment).usable,
                                  named: named))
        }
        if let node = BoundedProcess.locate("node", environment: environment) {
            let script = "console.log(process.version); console.log(require('tls').rootCertificates.join('\\n'))"
            if let result = try? BoundedProcess.run(node, ["-e", script], environment: environment, timeout: timeout), result.status == 0 {
                let text = String(decoding: result.stdout, as: UTF8.self)
                let version = text.split(separator: "\n").first.map(String.init) ?? "?"
                let builtIn: TrustAnswer = Certificate.allFromPEM(result.stdout).contains { $0.der == ca.root.der } ? .yes : .no
                let options = (environment["NODE_OPTIONS"] ?? "").split(separator: " ")
                let readsSystem = options.contains("--use-openssl-ca") || options.contains("--use-system-ca") || environment["NODE_USE_SYSTEM_CA"] == "1"
                places.append(.node(program: node, version: version, builtInTrusts: builtIn, extra: bundle("NODE_EXTRA_CA_CERTS"),
                                    readsSystemStore: readsSystem))
            }
        }
        if let go = BoundedProcess.locate("go", environment: environment) {
            let out = (try? BoundedProcess.run(go, ["version"], environment: environment, timeout: timeout)).map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
            // "go version go1.19.8 linux/amd64"
            let version = out.split(separator: " ").dropFirst(2).first.map { String($0.dropFirst(2)) } ?? "?"
            places.append(.go(program: go, version: version, named: bundle("SSL_CERT_FILE")))
        }
        if let curl = BoundedProcess.locate("curl", environment: environment) {
            let out = (try? BoundedProcess.run(curl, ["--version"], environment: environment, timeout: timeout)).map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
            let version = out.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
            places.append(.curl(program: curl, version: version, named: bundle("CURL_CA_BUNDLE")))
        }
        return Found(places: places, system: systemFacts.usable, systemBundles: Set([paths.file] + [realPath(paths.file)].compactMap { $0 }))
    }

    /// NSS databases (a folder holding cert9.db) of Chromium and of each Firefox profile under `home`.
    static func nssDatabases(home: String?) -> [(String, String)] {
        guard let home else { return [] }
        let fm = FileManager.default
        var out: [(String, String)] = []
        for (name, dir) in [("Chromium", home + "/.pki/nssdb"), ("Chromium (snap)", home + "/snap/chromium/current/.pki/nssdb")]
        where fm.fileExists(atPath: dir + "/cert9.db") {
            out.append((name, dir))
        }
        for (label, profiles) in [("Firefox", home + "/.mozilla/firefox"), ("Firefox (snap)", home + "/snap/firefox/common/.mozilla/firefox"),
                                  ("Firefox (flatpak)", home + "/.var/app/org.mozilla.firefox/.mozilla/firefox")] {
            for profile in ((try? fm.contentsOfDirectory(atPath: profiles)) ?? []).sorted() where fm.fileExists(atPath: profiles + "/" + profile + "/cert9.db") {
                out.append(("\(label) profile \(profile)", profiles + "/" + profile))
            }
        }
        return out
    }

    /// The JVM on PATH: its trust store (`javax.net.ssl.trustStore` in JAVA_TOOL_OPTIONS, else
    /// `cacerts`) asked with its own keytool.
    static func java(environment: [String: String], root: Certificate) -> TrustPlaceFacts? {
        guard let java = BoundedProcess.locate("java", environment: environment),
              let real = realPath(java) else { return nil }
        let javaHome = PathText.folder(of: PathText.folder(of: real))
        let release = (try? String(contentsOfFile: javaHome + "/release", encoding: .utf8)) ?? ""
        let version = release.split(separator: "\n").first { $0.hasPrefix("JAVA_VERSION=") }
            .map { $0.dropFirst("JAVA_VERSION=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "?"
        let properties = JavaOptions.properties(environment["JAVA_TOOL_OPTIONS"] ?? "")
        let keystore: String
        let namedBy: String?
        if let named = properties["javax.net.ssl.trustStore"] {
            keystore = named
            namedBy = "JAVA_TOOL_OPTIONS"
        } else {
            let modern = javaHome + "/lib/security/cacerts"
            keystore = FileManager.default.fileExists(atPath: modern) ? modern : javaHome + "/jre/lib/security/cacerts"
            namedBy = nil
        }
        let check = JavaKeystoreCheck(keytool: javaHome + "/bin/keytool", keystore: keystore,
                                      password: properties["javax.net.ssl.trustStorePassword"],
                                      storeType: properties["javax.net.ssl.trustStoreType"], environment: environment)
        let target = realPath(keystore) ?? keystore
        return .java(program: java, version: version, keystore: keystore, namedBy: namedBy, trusts: check.trusts(root),
                     writable: access(target, W_OK) == 0)
    }

    /// `path` with every link resolved (realpath(3)), or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// One Python interpreter with certifi.
    struct Python: Equatable {
        let executable: String
        let version: String
        let certifi: String
    }

    /// Every python, python3 and python3.N on PATH that imports certifi, once per interpreter.
    static func pythons(environment: [String: String]) -> [Python] {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        var seen = Set<String>()
        var out: [Python] = []
        let script = "import sys, certifi; print(sys.executable); print(sys.version.split()[0]); print(certifi.where())"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: String(dir))) ?? []).filter(isPythonName).sorted()
            for name in names {
                let candidate = "\(dir)/\(name)"
                guard access(candidate, X_OK) == 0,
                      let result = try? BoundedProcess.run(candidate, ["-c", script], environment: environment, timeout: timeout),
                      result.status == 0 else { continue }
                let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
                guard lines.count >= 3 else { continue }
                let real = realPath(lines[0]) ?? lines[0]
                guard seen.insert(real + "\u{0}" + lines[2]).inserted else { continue }
                out.append(Python(executable: lines[0], version: lines[1], certifi: lines[2]))
            }
        }
        return out
    }

    /// `python`, `python3`, `python3.11`: not `python3-config` or `python3.11m-config`.
    static func isPythonName(_ name: String) -> Bool {
        guard name.hasPrefix("python") else { return false }
        let rest = name.dropFirst("python".count)
        return rest.isEmpty || rest == "3" || (rest.hasPrefix("3.") && rest.dropFirst(2).allSatisfy(\.isNumber) && rest.count > 2)
    }
}

/// The system properties a `JAVA_TOOL_OPTIONS` value sets (`-Dname=value`, white-space separated,
/// double quotes around a value kept together as the JVM reads them; later wins).
public enum JavaOptions {
    public static func properties(_ text: String) -> [String: String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var any = false
        for ch in text {
            if ch == "\"" { quoted.toggle(); any = true; continue }
            if ch.isWhitespace && !quoted {
                if any { words.append(current) }
                current = ""; any = false
                continue
            }
            current.append(ch); any = true
        }
        if any { words.append(current) }
        var out: [String: String] = [:]
        for word in words where word.hasPrefix("-D") {
            let body = word.dropFirst(2)
            guard let eq = body.firstIndex(of: "=") else { out[String(body)] = ""; continue }
            out[String(body[..<eq])] = String(body[body.index(after: eq)...])
        }
        return out
    }
}
