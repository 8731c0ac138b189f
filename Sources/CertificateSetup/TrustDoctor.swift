import TVHome
import TrustStore

/// A bundle an environment variable names instead of a program's own list (`REQUESTS_CA_BUNDLE`,
/// `NODE_EXTRA_CA_CERTS`, `CURL_CA_BUNDLE`, `SSL_CERT_FILE`), and whether it trusts the root now.
public struct NamedBundle: Sendable, Equatable {
    public let variable: String
    public let path: String
    public let trusts: TrustAnswer

    public init(variable: String, path: String, trusts: TrustAnswer) {
        self.variable = variable
        self.path = path
        self.trusts = trusts
    }
}

/// What `tv ca trust --doctor` found about one place a program on this machine looks for its
/// roots, each asked now (`SetupActions`' `TrustDoctorReading` gathers them).
public enum TrustPlaceFacts: Sendable, Equatable {
    /// OpenSSL's default verify paths (`location`: the file and folders asked).
    case system(TrustFacts, location: String)
    /// An NSS database of a browser profile (`browser`: "Firefox profile x.default", "Chromium").
    case nss(browser: String, TrustFacts)
    /// A JVM's trust store: `cacerts`, or the one `JAVA_TOOL_OPTIONS` names (`namedBy`), read with
    /// keytool; `writable`: whether this user can change the file.
    case java(program: String, version: String, keystore: String, namedBy: String?, trusts: TrustAnswer, writable: Bool)
    /// One Python interpreter's certifi bundle (what `requests` and pip read), unless a variable
    /// names another (`named`).
    case python(program: String, version: String, certifi: String, certifiTrusts: TrustAnswer, named: NamedBundle?)
    /// Node: its built-in list, `NODE_EXTRA_CA_CERTS` (`extra`), and with `--use-openssl-ca` or
    /// `--use-system-ca` in `NODE_OPTIONS` (`readsSystemStore`) the system store.
    case node(program: String, version: String, builtInTrusts: TrustAnswer, extra: NamedBundle?, readsSystemStore: Bool)
    /// Go: the system store's files, or the bundle `SSL_CERT_FILE` names (`named`).
    case go(program: String, version: String, named: NamedBundle?)
    /// curl: the system store's bundle, or the one `CURL_CA_BUNDLE` names (`named`).
    case curl(program: String, version: String, named: NamedBundle?)
}

/// Whether `tv exec --proxy -- CMD` makes a place's programs trust the root without changing it.
public enum ExecProxyCoverage: Sendable, Equatable {
    /// Yes: `sentence` says through which variable.
    case covers(String)
    /// Trust yes, but the proxy variables are ignored in part: `sentence` says where.
    case partly(String)
    /// No: `sentence` says why.
    case no(String)

    /// `covers`, `partly` or `no`, for JSON.
    public var word: String {
        switch self {
        case .covers: return "covers"
        case .partly: return "partly"
        case .no: return "no"
        }
    }

    public var sentence: String {
        switch self {
        case .covers(let s), .partly(let s), .no(let s): return s
        }
    }
}

/// One row of `tv ca trust --doctor`: a place, whether it trusts tv's root now, and what fixes it.
public struct TrustDoctorRow: Sendable, Equatable {
    /// `system`, `nss`, `java`, `python`, `node`, `go` or `curl`.
    public let kind: String
    /// What people call it: "Python 3.11.2 (certifi)".
    public let name: String
    /// The program found on PATH (nil for stores).
    public let program: String?
    /// The file, folder or database asked.
    public let store: String
    public let trusted: TrustAnswer
    /// One sentence: what was found.
    public let reason: String
    /// The exact command that makes it trust the root (nil when it does).
    public let fix: String?
    public let execProxy: ExecProxyCoverage

    public init(kind: String, name: String, program: String?, store: String, trusted: TrustAnswer, reason: String,
                fix: String?, execProxy: ExecProxyCoverage) {
        self.kind = kind
        self.name = name
        self.program = program
        self.store = store
        self.trusted = trusted
        self.reason = reason
        self.fix = fix
        self.execProxy = execProxy
    }
}

/// Facts in, rows out: whether each place trusts the root now, the exact fix, and whether
/// `tv exec --proxy` avoids the need. Pure.
public enum TrustDoctor {
    /// - Parameters:
    ///   - system: the system store's usable answer (Go and curl read its files unless a variable names others).
    ///   - distribution: whose system-store steps the fix names.
    ///   - systemBundles: the system store's bundle file, as named and with links resolved: a
    ///     variable naming it is fixed through the system store's steps (which rewrite that file).
    public static func rows(_ places: [TrustPlaceFacts], root: RootDescription, system: TrustAnswer,
                            distribution: LinuxDistribution?, systemBundles: Set<String> = []) -> [TrustDoctorRow] {
        let rootWord = ShellWord.quote(root.path)
        // Shell commands only: not a step with a remark, nor the guide's closing `tv pinned forget`
        // (said once, after the rows: `TrustDoctorPresentation`).
        let systemFix = TrustGuides.install(TrustTarget.forStore(.system, distribution: distribution), root: root).steps
            .filter { !$0.contains("   (") && $0 != TrustGuides.forgetLacksRootStep }.joined(separator: " && ")
        /// The fix for a bundle a variable names: the system store's steps for the system's own bundle.
        func append(_ named: NamedBundle) -> String {
            systemBundles.contains(named.path) ? systemFix : "cat \(rootWord) >> \(ShellWord.quote(named.path))"
        }
        func fix(_ trusted: TrustAnswer, _ command: String) -> String? { trusted == .yes ? nil : command }
        func said(_ answer: TrustAnswer, yes: String, no: String) -> String {
            switch answer {
            case .yes: return yes
            case .no: return no
            case .unknown(let because): return because
            }
        }
        return places.map { place in
            switch place {
            case let .system(facts, location):
                return TrustDoctorRow(kind: "system", name: "OpenSSL system store", program: nil, store: location, trusted: facts.usable,
                                      reason: facts.usable == .yes ? "a fresh leaf verifies for TLS against it" : FindingWords.sentence(facts.finding),
                                      fix: fix(facts.usable, systemFix),
                                      execProxy: .covers("SSL_CERT_FILE names a bundle with tv's root for OpenSSL programs (curl, Python's ssl, Go)"))
            case let .nss(browser, facts):
                let dir: String
                if case .nss(let d) = facts.store { dir = d } else { dir = facts.store.description }
                let db = ShellWord.quote("sql:" + dir)
                let command: String
                if case .nssNotTrustedForTLS(let nickname, _) = facts.finding {
                    command = "certutil -M -d \(db) -n \(ShellWord.quote(nickname)) -t C,,"
                } else {
                    command = "certutil -A -d \(db) -n \(ShellWord.quote(root.commonName)) -t C,, -a -i \(rootWord)"
                }
                return TrustDoctorRow(kind: "nss", name: browser, program: nil, store: dir, trusted: facts.usable,
                                      reason: FindingWords.sentence(facts.finding), fix: fix(facts.usable, command + "   (then restart the browser)"),
                                      execProxy: .no("a browser trusts only its own NSS database and takes its proxy from its own settings"))
            case let .java(program, version, keystore, namedBy, trusts, writable):
                let sudo = writable ? "" : "sudo "
                let password = namedBy == nil ? " -storepass changeit" : ""
                let source = namedBy.map { "the trust store \($0) names" } ?? "the JDK's cacerts"
                return TrustDoctorRow(kind: "java", name: "Java \(version)", program: program, store: keystore, trusted: trusts,
                                      reason: said(trusts, yes: "tv's root is a trusted entry of \(source)", no: "tv's root is not an entry of \(source)"),
                                      fix: fix(trusts, "\(sudo)keytool -importcert -keystore \(ShellWord.quote(keystore))\(password) -alias tunnelvision -file \(rootWord) -noprompt"),
                                      execProxy: .covers("JAVA_TOOL_OPTIONS names a trust store with tv's root and the proxy properties, which HttpClient and HttpURLConnection follow"))
            case let .python(program, version, certifi, certifiTrusts, named):
                let trusted = named?.trusts ?? certifiTrusts
                let reason: String
                let command: String
                if let named {
                    reason = said(named.trusts, yes: "\(named.variable) names \(named.path), which holds tv's root",
                                  no: "\(named.variable) names \(named.path), which lacks tv's root")
                    command = append(named)
                } else {
                    reason = said(certifiTrusts, yes: "certifi's bundle holds tv's root", no: "requests and pip read certifi's bundle, which lacks tv's root")
                    // This interpreter's certifi bundle plus the root (the root alone replaced
                    // the list: hosts passed through untouched were refused then, a trial).
                    command = "cat \(ShellWord.quote(certifi)) \(ShellWord.quote(root.path)) > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\""
                }
                return TrustDoctorRow(kind: "python", name: "Python \(version) (certifi)", program: program, store: named?.path ?? certifi,
                                      trusted: trusted, reason: reason, fix: fix(trusted, command),
                                      execProxy: .covers("REQUESTS_CA_BUNDLE, PIP_CERT and SSL_CERT_FILE name a bundle with tv's root"))
            case let .node(program, version, builtInTrusts, extra, readsSystemStore):
                var answers = [builtInTrusts]
                if let extra { answers.append(extra.trusts) }
                if readsSystemStore { answers.append(system) }
                let trusted: TrustAnswer = answers.contains(.yes) ? .yes : (answers.first { if case .unknown = $0 { return true } else { return false } } ?? .no)
                let reason: String
                if trusted == .yes {
                    reason = builtInTrusts == .yes ? "node's built-in list holds tv's root"
                        : extra?.trusts == .yes ? "NODE_EXTRA_CA_CERTS names \(extra!.path), which holds tv's root"
                        : "NODE_OPTIONS makes node read the system store, which trusts tv's root"
                } else if case .unknown(let because) = trusted {
                    reason = because
                } else {
                    reason = extra.map { "NODE_EXTRA_CA_CERTS names \($0.path), which lacks tv's root; node's built-in list lacks it too" }
                        ?? "node reads its built-in list, which lacks tv's root, and NODE_EXTRA_CA_CERTS is not set"
                }
                let command = extra.map(append) ?? RuntimeTrust.of(.node).command(rootPath: root.path)
                let major = Int(version.drop { !$0.isNumber }.prefix { $0.isNumber }) ?? 0
                let coverage: ExecProxyCoverage = major >= 24
                    ? .covers("NODE_EXTRA_CA_CERTS adds tv's root and NODE_USE_ENV_PROXY=1 makes http/https use the proxy")
                    : .partly("NODE_EXTRA_CA_CERTS adds tv's root, but node \(version)'s http/https ignore the proxy variables (Node 24 reads them with NODE_USE_ENV_PROXY=1)")
                return TrustDoctorRow(kind: "node", name: "Node \(version)", program: program, store: extra?.path ?? "node's built-in list",
                                      trusted: trusted, reason: reason, fix: fix(trusted, command), execProxy: coverage)
            case let .go(program, version, named):
                return readsSystem(kind: "go", name: "Go \(version)", program: program, named: named, system: system, fix: named.map(append) ?? systemFix,
                                   coverage: .partly("SSL_CERT_FILE names a bundle with tv's root; Go sends localhost and loopback addresses direct, whatever the variables say"))
            case let .curl(program, version, named):
                return readsSystem(kind: "curl", name: "curl \(version)", program: program, named: named, system: system, fix: named.map(append) ?? systemFix,
                                   coverage: .covers("CURL_CA_BUNDLE and SSL_CERT_FILE name a bundle with tv's root"))
            }
        }
    }

    /// A program that reads the system store's files unless a variable names a bundle.
    private static func readsSystem(kind: String, name: String, program: String, named: NamedBundle?, system: TrustAnswer,
                                    fix command: String, coverage: ExecProxyCoverage) -> TrustDoctorRow {
        let trusted = named?.trusts ?? system
        let reason: String
        switch (named, trusted) {
        case (_, .unknown(let because)): reason = because
        case (let named?, .yes): reason = "\(named.variable) names \(named.path), which holds tv's root"
        case (let named?, _): reason = "\(named.variable) names \(named.path), which lacks tv's root"
        case (nil, .yes): reason = "it reads the system store, which trusts tv's root"
        case (nil, _): reason = "it reads the system store, which does not trust tv's root"
        }
        return TrustDoctorRow(kind: kind, name: name, program: program, store: named?.path ?? "the system store",
                              trusted: trusted, reason: reason, fix: trusted == .yes ? nil : command, execProxy: coverage)
    }
}
