/// The environment `tv exec --proxy -- CMD` gives CMD: the proxy named by the variables programs
/// read for it, and trust in tv's root through the variables each runtime reads for its roots.
/// Pure: the parent's environment and the facts in, the child's environment out.
///
/// What reads what (each checked on Debian 12 by `ExecProxyRunTests`):
/// - `http_proxy`/`https_proxy` and upper case: curl (lower-case `http_proxy` only), wget,
///   Python's urllib and `requests`, git (libcurl), Go's `net/http` (not for loopback hosts);
///   `NO_PROXY`/`no_proxy`: the hosts sent direct.
/// - `SSL_CERT_FILE`: OpenSSL's default file (curl, Python's `ssl`, Go); `REQUESTS_CA_BUNDLE` and
///   `CURL_CA_BUNDLE`: `requests`; `NODE_EXTRA_CA_CERTS`: Node (added to its own list);
///   `GIT_SSL_CAINFO`: git; `AWS_CA_BUNDLE`: the AWS CLI and SDKs; `PIP_CERT`: pip; `WGETRC`: a
///   wgetrc naming the bundle (`ca_certificate`), since Debian's wget (GnuTLS) reads no variable.
/// - `JAVA_TOOL_OPTIONS`: the JVM's trust store (`javax.net.ssl.trustStore*`) and proxy
///   (`http(s).proxyHost/Port`, `http.nonProxyHosts`) system properties.
public struct ProxyEnvironment: Sendable, Equatable {
    /// Where the proxy listens, as clients should dial it (a loopback address for a wildcard listen).
    public var proxyHost: String
    public var proxyPort: UInt16
    /// The PEM bundle: the system's anchors plus tv's root.
    public var bundlePath: String
    /// The PKCS#12 trust store for the JVM, and its integrity password.
    public var javaTrustStorePath: String
    public var javaTrustStorePassword: String
    /// The wgetrc naming the bundle (nil: WGETRC is left as it is).
    public var wgetrcPath: String?
    /// Send loopback hosts through the proxy too (`--proxy-loopback`); by default they go direct.
    public var proxyLoopback: Bool

    public init(proxyHost: String, proxyPort: UInt16, bundlePath: String, javaTrustStorePath: String,
                javaTrustStorePassword: String, wgetrcPath: String?, proxyLoopback: Bool) {
        self.proxyHost = proxyHost
        self.proxyPort = proxyPort
        self.bundlePath = bundlePath
        self.javaTrustStorePath = javaTrustStorePath
        self.javaTrustStorePassword = javaTrustStorePassword
        self.wgetrcPath = wgetrcPath
        self.proxyLoopback = proxyLoopback
    }

    /// The variables that name the CA bundle, in the order `tv exec --proxy` says them.
    public static let bundleVariables = ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                         "GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "PIP_CERT"]
    /// The variables that name the proxy (both cases: curl reads only lower-case `http_proxy`).
    public static let proxyVariables = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]
    /// Removed: they would send what the proxy variables do not cover to another proxy.
    public static let removedVariables = ["ALL_PROXY", "all_proxy"]
    /// The loopback hosts sent direct unless `proxyLoopback`, as `NO_PROXY` names them.
    public static let loopbackHosts = ["localhost", "127.0.0.1", "::1"]
    /// Spellings of loopback a `NO_PROXY` may already hold, removed under `proxyLoopback`.
    static let loopbackSpellings: Set<String> = ["localhost", ".localhost", "127.0.0.1", "::1", "[::1]", "127.0.0.0/8", "::1/128"]

    /// The proxy's URL: `http://127.0.0.1:8080`, `http://[::1]:8080`.
    public var proxyURL: String {
        "http://\(proxyHost.contains(":") ? "[\(proxyHost)]" : proxyHost):\(proxyPort)"
    }

    /// The JVM's `http.nonProxyHosts`: loopback direct (Java's own default list), or nothing.
    public var javaNonProxyHosts: String { proxyLoopback ? "" : "localhost|127.*|[::1]" }

    /// `-Dname=value` for each property the JVM needs, in order.
    public var javaOptions: [String] {
        let host = proxyHost
        let props: [(String, String)] = [
            ("javax.net.ssl.trustStore", javaTrustStorePath),
            ("javax.net.ssl.trustStoreType", "PKCS12"),
            ("javax.net.ssl.trustStorePassword", javaTrustStorePassword),
            ("http.proxyHost", host), ("http.proxyPort", String(proxyPort)),
            ("https.proxyHost", host), ("https.proxyPort", String(proxyPort)),
            ("http.nonProxyHosts", javaNonProxyHosts),
        ]
        // JAVA_TOOL_OPTIONS splits on white space; the JVM honours double quotes (JDK 9+).
        return props.map { name, value in value.contains(" ") ? "-D\(name)=\"\(value)\"" : "-D\(name)=\(value)" }
    }

    /// The `NO_PROXY` entries: the parent's (both spellings, first seen first, once each), then the
    /// loopback hosts, or without any loopback spelling under `proxyLoopback`.
    public func noProxyEntries(_ parent: [String: String]) -> [String] {
        var seen = Set<String>()
        var entries: [String] = []
        for name in ["NO_PROXY", "no_proxy"] {
            for raw in (parent[name] ?? "").split(separator: ",") {
                let entry = raw.trimmingCharacters(in: .whitespaces)
                guard !entry.isEmpty, seen.insert(entry.lowercased()).inserted else { continue }
                entries.append(entry)
            }
        }
        if proxyLoopback { return entries.filter { !Self.loopbackSpellings.contains($0.lowercased()) } }
        for host in Self.loopbackHosts where seen.insert(host).inserted { entries.append(host) }
        return entries
    }

    /// CMD's environment: `parent` with the proxy, `NO_PROXY`, the bundle variables, `WGETRC`,
    /// `JAVA_TOOL_OPTIONS` (the parent's options first, tv's after them, so tv's win),
    /// `NODE_USE_ENV_PROXY=1` and `TV_EXEC=proxy`.
    public func apply(to parent: [String: String]) -> [String: String] {
        var env = parent
        for name in Self.removedVariables { env[name] = nil }
        for name in Self.proxyVariables { env[name] = proxyURL }
        let noProxy = noProxyEntries(parent).joined(separator: ",")
        for name in ["NO_PROXY", "no_proxy"] { env[name] = noProxy.isEmpty ? nil : noProxy }
        for name in Self.bundleVariables { env[name] = bundlePath }
        if let wgetrcPath { env["WGETRC"] = wgetrcPath }
        let java = javaOptions.joined(separator: " ")
        let before = (parent["JAVA_TOOL_OPTIONS"] ?? "").trimmingCharacters(in: .whitespaces)
        env["JAVA_TOOL_OPTIONS"] = before.isEmpty ? java : before + " " + java
        // Node 24 (and 22.21) read the proxy variables in http/https only when asked.
        env["NODE_USE_ENV_PROXY"] = "1"
        env["TV_EXEC"] = "proxy"
        return env
    }

    /// The client's address for a listen address: a wildcard (`0.0.0.0`, `::`) is dialled on loopback.
    public static func dialHost(forListenHost host: String) -> String {
        switch host {
        case "0.0.0.0", "": return "127.0.0.1"
        case "::", "[::]": return "::1"
        default: return host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        }
    }
}
