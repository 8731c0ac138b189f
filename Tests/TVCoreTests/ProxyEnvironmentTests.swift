import Testing
@testable import TVCore

/// `tv exec --proxy`'s environment and its join-or-start decision, exact values.
@Suite struct ProxyEnvironmentTests {
    static func env(loopback: Bool = false, host: String = "127.0.0.1") -> ProxyEnvironment {
        ProxyEnvironment(proxyHost: host, proxyPort: 8080, bundlePath: "/d/proxy-env/ca-bundle.pem",
                         javaTrustStorePath: "/d/proxy-env/truststore.p12", javaTrustStorePassword: "pw",
                         wgetrcPath: "/d/proxy-env/wgetrc", proxyLoopback: loopback)
    }

    @Test("the child's environment from a parent with its own proxy, NO_PROXY and JAVA_TOOL_OPTIONS")
    func applied() {
        let parent = ["PATH": "/usr/bin", "https_proxy": "http://corp:3128", "ALL_PROXY": "socks5://x:1", "all_proxy": "socks5://x:1",
                      "NO_PROXY": "corp.example, .internal", "no_proxy": "CORP.example,localhost", "JAVA_TOOL_OPTIONS": " -Xmx64m "]
        let child = Self.env().apply(to: parent)
        let java = "-Xmx64m -Djavax.net.ssl.trustStore=/d/proxy-env/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=pw -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=8080 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=8080 -Dhttp.nonProxyHosts=localhost|127.*|[::1]"
        let b = "/d/proxy-env/ca-bundle.pem"
        #expect(child == [
            "PATH": "/usr/bin",
            "HTTP_PROXY": "http://127.0.0.1:8080", "HTTPS_PROXY": "http://127.0.0.1:8080",
            "http_proxy": "http://127.0.0.1:8080", "https_proxy": "http://127.0.0.1:8080",
            "NO_PROXY": "corp.example,.internal,localhost,127.0.0.1,::1", "no_proxy": "corp.example,.internal,localhost,127.0.0.1,::1",
            "SSL_CERT_FILE": b, "REQUESTS_CA_BUNDLE": b, "CURL_CA_BUNDLE": b, "NODE_EXTRA_CA_CERTS": b,
            "GIT_SSL_CAINFO": b, "AWS_CA_BUNDLE": b, "PIP_CERT": b,
            "WGETRC": "/d/proxy-env/wgetrc", "JAVA_TOOL_OPTIONS": java, "NODE_USE_ENV_PROXY": "1", "TV_EXEC": "proxy",
        ])
    }

    @Test("--proxy-loopback: no loopback spelling stays in NO_PROXY (none at all: unset); the JVM's nonProxyHosts is empty")
    func loopback() {
        let e = Self.env(loopback: true)
        #expect(e.noProxyEntries(["NO_PROXY": "localhost,[::1],127.0.0.0/8,a.test", "no_proxy": "::1,.localhost"]) == ["a.test"])
        let child = e.apply(to: ["NO_PROXY": "localhost", "no_proxy": "127.0.0.1"])
        #expect(child["NO_PROXY"] == nil && child["no_proxy"] == nil)
        #expect(child["JAVA_TOOL_OPTIONS"]?.hasSuffix(" -Dhttps.proxyPort=8080 -Dhttp.nonProxyHosts=") == true)
        #expect(Self.env().noProxyEntries([:]) == ["localhost", "127.0.0.1", "::1"])
    }

    @Test("an IPv6 proxy is bracketed in the URL; a wildcard listen is dialled on loopback; a path with a space is quoted for the JVM")
    func addresses() {
        #expect(Self.env(host: "::1").proxyURL == "http://[::1]:8080")
        #expect(ProxyEnvironment.dialHost(forListenHost: "0.0.0.0") == "127.0.0.1")
        #expect(ProxyEnvironment.dialHost(forListenHost: "::") == "::1")
        #expect(ProxyEnvironment.dialHost(forListenHost: "[::1]") == "::1")
        #expect(ProxyEnvironment.dialHost(forListenHost: "192.0.2.7") == "192.0.2.7")
        var e = Self.env()
        e.javaTrustStorePath = "/home/a b/p.p12"
        #expect(e.javaOptions[0] == "-Djavax.net.ssl.trustStore=\"/home/a b/p.p12\"")
    }

    @Test("join or start: no session starts one; an explicit session is joined where it listens; other modes, credentials and a bad address are refused")
    func plan() throws {
        #expect(try ExecProxyPlan.decide(status: nil) == .start)
        #expect(try ExecProxyPlan.decide(status: ["mode": "regular", "listen": "127.0.0.1:8080", "inspection": "on", "proxyAuth": "off"])
                == .join(host: "127.0.0.1", port: 8080, inspecting: true))
        #expect(try ExecProxyPlan.decide(status: ["mode": "regular", "listen": "[::]:9000", "inspection": "off"])
                == .join(host: "::1", port: 9000, inspecting: false))
        #expect(throws: ExecProxyError.sessionNotExplicit(mode: "socks5")) {
            try ExecProxyPlan.decide(status: ["mode": "socks5", "listen": "127.0.0.1:1080"])
        }
        #expect(throws: ExecProxyError.sessionAsksCredentials) {
            try ExecProxyPlan.decide(status: ["mode": "regular", "listen": "127.0.0.1:8080", "proxyAuth": "on"])
        }
        #expect(throws: ExecProxyError.sessionAddressUnknown(listen: "tv0")) {
            try ExecProxyPlan.decide(status: ["mode": "regular", "listen": "tv0"])
        }
        #expect(ExecProxyError.sessionNotExplicit(mode: "tun").message
                == "The running `tv run` session is in --mode tun, and `tv exec --proxy` needs an explicit proxy; stop it with `tv stop` (tv exec --proxy then starts its own), or run `sudo tv exec -- CMD`.")
    }

    @Test("what is said as CMD starts: the proxy, the session, the variables, and plainly what is not intercepted")
    func explanation() {
        let lines = ExecProxyExplanation(command: ["python3", "app.py"], environment: Self.env(), joined: .joined(inspecting: false)).lines
        #expect(lines == [
            "running python3 with tv as its proxy at http://127.0.0.1:8080 (the running session, which does not inspect: its connections are recorded, not decrypted (`tv inspect on`, or stop it and tv exec --proxy starts its own)).",
            "its environment names the proxy (HTTP_PROXY, HTTPS_PROXY and lower case; NO_PROXY sends localhost, 127.0.0.1, ::1 direct (--proxy-loopback sends them through tv)), the CA bundle /d/proxy-env/ca-bundle.pem (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, AWS_CA_BUNDLE, PIP_CERT, and WGETRC) and, in JAVA_TOOL_OPTIONS, a trust store and the proxy for the JVM; nothing outside the data folder changes.",
            "programs that ignore these variables are not intercepted:",
            "  • Go programs, for localhost and loopback addresses (net/http never proxies them);",
            "  • Java code that sets its own proxy or trust (HttpClient.Builder.NO_PROXY, Proxy.NO_PROXY, its own SSLContext); HttpClient and HttpURLConnection otherwise follow the properties tv sets;",
            "  • Node before 24 (before 22.21 on the 22 line): its http and https modules and its fetch ignore HTTP(S)_PROXY (tv sets NODE_USE_ENV_PROXY=1, which the versions since need);",
            "  • browsers (their own proxy settings and NSS certificate database), and programs that bring their own CA list or pin certificates.",
            "`sudo tv exec -- python3` (a network namespace) catches everything.",
        ])
    }
}
