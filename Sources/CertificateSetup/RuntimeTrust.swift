import TVHome

/// A language runtime that keeps its own list of trusted roots instead of reading the system
/// store, so trusting the root system-wide does not reach its programs.
public enum TrustRuntime: String, Sendable, Equatable, CaseIterable {
    /// Python's `requests` (and pip): certifi's bundle.
    case python
    /// Node.js: the Mozilla list compiled into the binary.
    case node
    /// Java: the JDK's `cacerts` keystore.
    case java
}

/// The one table of runtimes that keep their own list and what each needs to trust tv's root:
/// `tv setup`, `tv ca trust --platform python|node|java`, and a failed flow's reason all read it.
public struct RuntimeTrust: Sendable, Equatable {
    public let runtime: TrustRuntime
    /// The programs meant, as people name them: "Python requests (certifi)".
    public let programs: String
    /// The list it reads instead of the system store: "certifi's own bundle".
    public let ownList: String
    /// The variable or flag that makes it trust the root: `REQUESTS_CA_BUNDLE`.
    public let setting: String

    /// The exact command (or variable) that makes `runtime` trust the root at `rootPath`.
    public func command(rootPath: String) -> String {
        let root = ShellWord.quote(rootPath)
        switch runtime {
        // certifi's list plus the root, not the root alone: REQUESTS_CA_BUNDLE replaces the list,
        // and hosts tv passes through untouched were refused after the advice (a trial).
        case .python: return "cat \"$(python3 -m certifi)\" \(root) > \"$HOME/tv-python-roots.pem\" && export REQUESTS_CA_BUNDLE=\"$HOME/tv-python-roots.pem\""
        case .node: return "export NODE_EXTRA_CA_CERTS=\(root)"
        case .java: return "keytool -importcert -cacerts -alias tunnelvision -file \(root) -storepass changeit -noprompt"
        }
    }

    /// One line for a list: "Python requests (certifi) reads certifi's own bundle: export REQUESTS_CA_BUNDLE=/r.pem".
    public func line(rootPath: String) -> String { "\(programs) reads \(ownList): \(command(rootPath: rootPath))" }

    /// One sentence for a flow whose client is this runtime and refused tv's certificate.
    public func fixSentence(rootPath: String) -> String {
        "\(programs) reads \(ownList), not the system store; `\(command(rootPath: rootPath))` makes it trust tv's root."
    }

    /// The steps `tv ca trust --platform NAME` prints.
    public func guide(rootPath: String) -> TrustGuide {
        let root = ShellWord.quote(rootPath)
        switch runtime {
        case .python:
            return TrustGuide(title: programs, steps: [
                "\(command(rootPath: rootPath))   (in the shell that runs the program)",
            ], note: "REQUESTS_CA_BUNDLE replaces certifi's list, so the bundle holds certifi's roots and tv's (hosts tv passes through untouched still verify); make it again after certifi is upgraded. Python's own ssl module (urllib) reads the system store, or SSL_CERT_FILE.")
        case .node:
            return TrustGuide(title: programs, steps: [
                "\(command(rootPath: rootPath))   (read when node starts; it adds to Node's own list)",
            ])
        case .java:
            return TrustGuide(title: programs, steps: [
                "\(command(rootPath: rootPath))   (changes the JDK's cacerts: sudo for a system JDK)",
                "Or for one program: keytool -importcert -keystore ~/tv-truststore.p12 -storetype PKCS12 -alias tunnelvision -file \(root) -storepass changeit -noprompt, then java -Djavax.net.ssl.trustStore=$HOME/tv-truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit …",
            ])
        }
    }

    /// Every runtime tv knows to keep its own list, in the order they are said.
    public static let all: [RuntimeTrust] = [
        RuntimeTrust(runtime: .python, programs: "Python requests (certifi)", ownList: "certifi's own bundle", setting: "REQUESTS_CA_BUNDLE"),
        RuntimeTrust(runtime: .node, programs: "Node.js", ownList: "the list built into node", setting: "NODE_EXTRA_CA_CERTS"),
        RuntimeTrust(runtime: .java, programs: "Java", ownList: "the JDK's cacerts keystore", setting: "keytool -importcert -cacerts (or -Djavax.net.ssl.trustStore)"),
    ]

    /// The entry for `runtime`.
    public static func of(_ runtime: TrustRuntime) -> RuntimeTrust { all.first { $0.runtime == runtime }! }

    /// The sentence a system store's steps end with: who trusts it then, and who does not.
    public static let systemStoreSentence = "OpenSSL, curl, wget, Python's ssl module (urllib), Go programs and the distribution's own Java (its cacerts is made from this store) then trust it; Python requests (certifi), Node.js and a JDK installed by hand keep their own lists (`tv ca trust --platform python`, `node` or `java` prints what each needs)"
}
