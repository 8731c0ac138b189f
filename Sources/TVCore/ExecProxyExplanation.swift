/// What `tv exec --proxy` says as CMD starts: where its proxy is, what its environment names, and
/// plainly which programs that leaves out. Pure.
public struct ExecProxyExplanation: Sendable, Equatable {
    public var command: [String]
    public var environment: ProxyEnvironment
    public var joined: ExecProxySession.Joined

    public init(command: [String], environment: ProxyEnvironment, joined: ExecProxySession.Joined) {
        self.command = command
        self.environment = environment
        self.joined = joined
    }

    /// Programs that ignore the variables, as checked on Debian 12 (Go 1.19, OpenJDK 17, Node 20:
    /// `fetch` too, a trial) by `ExecProxyRunTests`; one line each.
    public static let notIntercepted = [
        "Go programs, for localhost and loopback addresses (net/http never proxies them);",
        "Java code that sets its own proxy or trust (HttpClient.Builder.NO_PROXY, Proxy.NO_PROXY, its own SSLContext); HttpClient and HttpURLConnection otherwise follow the properties tv sets;",
        "Node before 24 (before 22.21 on the 22 line): its http and https modules and its fetch ignore HTTP(S)_PROXY (tv sets NODE_USE_ENV_PROXY=1, which the versions since need);",
        "browsers (their own proxy settings and NSS certificate database), and programs that bring their own CA list or pin certificates.",
    ]

    public var lines: [String] {
        let name = command.first ?? "the command"
        let session: String
        switch joined {
        case .started: session = "a session started for it, inspecting"
        case .joined(let inspecting):
            session = inspecting ? "the running session, inspecting"
                : "the running session, which does not inspect: its connections are recorded, not decrypted (`tv inspect on`, or stop it and tv exec --proxy starts its own)"
        }
        let noProxy = environment.proxyLoopback ? "loopback hosts go through tv too" : "NO_PROXY sends \(ProxyEnvironment.loopbackHosts.joined(separator: ", ")) direct (--proxy-loopback sends them through tv)"
        return [
            "running \(name) with tv as its proxy at \(environment.proxyURL) (\(session)).",
            "its environment names the proxy (HTTP_PROXY, HTTPS_PROXY and lower case; \(noProxy)), the CA bundle \(environment.bundlePath) (\(ProxyEnvironment.bundleVariables.joined(separator: ", ")), and WGETRC) and, in JAVA_TOOL_OPTIONS, a trust store and the proxy for the JVM; nothing outside the data folder changes.",
            "programs that ignore these variables are not intercepted:",
        ] + Self.notIntercepted.map { "  • " + $0 } + [
            "`sudo tv exec -- \(name)` (a network namespace) catches everything.",
        ]
    }
}
