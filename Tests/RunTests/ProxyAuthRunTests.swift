import Foundation
import Testing

/// `tv run --listen` beyond loopback warns while inspecting; `--proxy-auth USER:PASSFILE`
/// makes the explicit and SOCKS5 proxies ask real curl and Python clients for the password.
@Suite("Proxy authentication (tv run --proxy-auth)", .serialized)
struct ProxyAuthRunTests {
    static func warning(_ listen: String) -> String {
        "tv: warning: listening on \(listen) with inspection on: anyone who can reach that address can use this proxy, "
            + "also to reach this machine's own 127.0.0.1 services, and read what it decrypts; require a password with --proxy-auth USER:PASSFILE, or listen on 127.0.0.1."
    }

    static let missing = "the client gave no proxy credentials and this proxy requires them (tv run --proxy-auth); give the client the user name and password"
    static let wrong = "the client's proxy password for user 'u' is wrong (tv run --proxy-auth); give the client the user name and password"

    /// A 0600 password file holding `s3cret` and a line end.
    static func passwordFile(_ world: RunWorld) throws -> String {
        let path = world.sandbox.work + "/proxy-pass"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("s3cret\n".utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    @Test("--listen 0.0.0.0 warns once, even under --quiet (and says it decrypts while inspecting); not with --proxy-auth, not on loopback")
    func nonLoopbackWarning() throws {
        let world = try RunWorld()
        let port = freeLoopbackPort()
        let open = try TVSession(world.sandbox, ["--inspect", "--quiet"], listen: "0.0.0.0:\(port)")
        #expect(open.log() == Self.warning("0.0.0.0:\(port)") + "\n", "\(open.log())")
        try open.stop()
        let file = try Self.passwordFile(world)
        let guarded = try TVSession(world.sandbox, ["--inspect", "--quiet", "--proxy-auth", "u:\(file)"], listen: "0.0.0.0:\(port)")
        #expect(!guarded.log().contains("warning"), "\(guarded.log())")
        try guarded.stop()
        let loopback = try TVSession(world.sandbox, ["--inspect", "--quiet"])
        #expect(!loopback.log().contains("warning"), "\(loopback.log())")
        try loopback.stop()
        // Not inspecting, still an open proxy (and one into this machine's own loopback services).
        let plain = try TVSession(world.sandbox, ["--quiet"], listen: "0.0.0.0:\(port)")
        #expect(plain.log() == "tv: warning: listening on 0.0.0.0:\(port): anyone who can reach that address can use this proxy, "
                + "also to reach this machine's own 127.0.0.1 services; require a password with --proxy-auth USER:PASSFILE, or listen on 127.0.0.1.\n", "\(plain.log())")
        try plain.stop()
    }

    @Test("--proxy-auth is refused in reverse and transparent modes, and for a password file others can read")
    func refusals() throws {
        let world = try RunWorld()
        let file = try Self.passwordFile(world)
        let reverse = try world.sandbox.tv("run", "--mode", "reverse:http://127.0.0.1:9", "--proxy-auth", "u:\(file)")
        #expect(reverse.status == 2, "\(reverse)")
        #expect(reverse.err.contains("--proxy-auth is for --mode regular and socks5; in --mode reverse:http://127.0.0.1:9 clients do not know they use a proxy, so they cannot authenticate to it."), "\(reverse)")
        let transparent = try world.sandbox.tv("run", "--mode", "transparent", "--proxy-auth", "u:\(file)")
        #expect(transparent.err.contains("--proxy-auth is for --mode regular and socks5; in --mode transparent clients"), "\(transparent)")
        chmod(file, 0o644)
        let open = try world.sandbox.tv("run", "--proxy-auth", "u:\(file)")
        #expect(open.status == 1, "\(open)")
        #expect(open.err.contains("--proxy-auth's password file \(file) can be read by other users (mode 0644); make it yours and 0600 (`chmod 600 \(file)`)."), "\(open)")
    }

    @Test("explicit proxy: curl with the password works (CONNECT, inspected; absolute-form); without it or with a wrong one gets 407; Python urllib with credentials works")
    func explicitProxy() throws {
        let world = try RunWorld()
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: world.www + "/hello.txt"))
        let file = try Self.passwordFile(world)
        let session = try world.run("--inspect", "--proxy-auth", "u:\(file)")
        let proxy = "127.0.0.1:\(session.port)"
        let ok = try world.sandbox.curl(["-x", "http://u:s3cret@\(proxy)", "--cacert", world.tvRoot, world.url("/hello.txt")])
        #expect(ok.out == "hello\n", "\(ok)")
        let none = try world.sandbox.curl(["-x", "http://\(proxy)", "--cacert", world.tvRoot, "-w", "%{http_connect}", world.url("/hello.txt")])
        #expect(none.status != 0 && none.out == "407", "\(none)")
        let wrong = try world.sandbox.curl(["-x", "http://u:nope@\(proxy)", "--cacert", world.tvRoot, "-w", "%{http_connect}", world.url("/hello.txt")])
        #expect(wrong.status != 0 && wrong.out == "407", "\(wrong)")
        let plain = try world.sandbox.curl(["-x", "http://\(proxy)", "-i", "http://127.0.0.1:\(world.nginx.plainPort)/hello.txt"])
        #expect(plain.out.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"tv\", charset=\"UTF-8\"\r\n"), "\(plain)")
        #expect(plain.out.hasSuffix("\r\n\r\ntv: \(Self.missing)\n"), "\(plain)")
        let plainOK = try world.sandbox.curl(["-x", "http://u:s3cret@\(proxy)", "http://127.0.0.1:\(world.nginx.plainPort)/hello.txt"])
        #expect(plainOK.out == "hello\n", "\(plainOK)")
        let script = """
            import ssl, sys, urllib.request
            proxy = {"http": sys.argv[1], "https": sys.argv[1]}
            context = ssl.create_default_context(cafile=sys.argv[2])
            opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxy), urllib.request.HTTPSHandler(context=context))
            for url in sys.argv[3:]:
                print(opener.open(url).read().decode(), end="")
            """
        let python = try world.sandbox.python(script, ["http://u:s3cret@\(proxy)", world.tvRoot,
                                                       "http://127.0.0.1:\(world.nginx.plainPort)/hello.txt", world.url("/hello.txt")])
        #expect(python.out == "hello\nhello\n", "\(python)")
        let rows = try world.sandbox.closedFlows(7)
        #expect(rows.map { $0.string("status") } == ["inspected", "failed", "failed", "failed", "not_encrypted", "not_encrypted", "inspected"], "\(rows)")
        #expect(rows.map { $0.string("failureReason") ?? "" } == ["", Self.missing, Self.wrong, Self.missing, "", "", ""], "\(rows)")
        #expect(!session.log().contains("s3cret") && !session.log().contains("nope"))
        try session.stop()
    }

    @Test("SOCKS5: curl with user:password works; without it the handshake fails and the flow says why")
    func socks5() throws {
        let world = try RunWorld()
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: world.www + "/hello.txt"))
        let file = try Self.passwordFile(world)
        let session = try world.run("--mode", "socks5", "--inspect", "--proxy-auth", "u:\(file)")
        let proxy = "127.0.0.1:\(session.port)"
        let ok = try world.sandbox.curl(["-x", "socks5h://u:s3cret@\(proxy)", "--cacert", world.tvRoot, world.url("/hello.txt")])
        #expect(ok.out == "hello\n", "\(ok)")
        let none = try world.sandbox.curl(["-x", "socks5h://\(proxy)", "--cacert", world.tvRoot, world.url("/hello.txt")])
        #expect(none.status != 0 && none.out.isEmpty, "\(none)")
        let wrong = try world.sandbox.curl(["-x", "socks5h://u:nope@\(proxy)", "--cacert", world.tvRoot, world.url("/hello.txt")])
        #expect(wrong.status != 0 && wrong.out.isEmpty, "\(wrong)")
        let rows = try world.sandbox.closedFlows(3)
        #expect(rows.map { $0.string("status") } == ["inspected", "failed", "failed"], "\(rows)")
        #expect(rows.map { $0.string("failureReason") ?? "" } == ["", Self.missing, Self.wrong], "\(rows)")
        try session.stop()
    }
}
