import COpenSSL
import LocalCA
@testable import Proxy
import Testing
import Wire

/// Real ClientHellos, each the first record `openssl s_client -connect 127.0.0.1:PORT ARGS </dev/null`
/// sent to a python3 server on 127.0.0.1 that read one record and closed; captured 2026-12-01 on
/// Debian with OpenSSL 3.0.19. No SNI (the host is an IP). Do not edit the bytes.
enum LeafKeyHellos {
    /// `-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256`: suites c02f, 00ff; every default sigalg.
    static let rsaTLS12: [UInt8] = ProxyFixtures.hex(
        "16030100830100007f0303722886f6aa34e47875ec74f09352853a4fbcf85dbc0e66cdfca53bd7b0e68224000004c02f",
        "00ff01000052000b000403000102000a000c000a001d0017001e00190018002300000016000000170000000d002a0028",
        "040305030603080708080809080a080b080408050806040105010601030303010302040205020602"
    )

    /// `-tls1_3 -sigalgs rsa_pss_rsae_sha256`: TLS 1.3 suites only; sigalgs 0804 alone.
    static let rsaPSSTLS13: [UInt8] = ProxyFixtures.hex(
        "16030100c2010000be0303cdfed82d7439af25d68407e6d9173f14b2fa407a87278d41ea8afe04c4cb37ae208be112b9",
        "574ed68c42da7cea3cf4bee933182bc0bc05defab3f8daa4b5057086000813021303130100ff0100006d000b00040300",
        "0102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d000400020804",
        "002b0003020304002d00020101003300260024001d0020b2346dfae0ba9dab388ef6cbf2a21dec549953fdf4059f399b",
        "198ae7ffb7ae3a"
    )

    /// `-tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256`: suites c02b, 00ff; every default sigalg.
    static let ecdsaTLS12: [UInt8] = ProxyFixtures.hex(
        "16030100830100007f0303f19a475d6f602b3842e914814fa4136897be95d5945ef944dd48306ec6b4b64d000004c02b",
        "00ff01000052000b000403000102000a000c000a001d0017001e00190018002300000016000000170000000d002a0028",
        "040305030603080708080809080a080b080408050806040105010601030303010302040205020602"
    )

    /// `-tls1_3 -sigalgs ecdsa_secp256r1_sha256`: TLS 1.3 suites only; sigalgs 0403 alone.
    static let ecdsaTLS13: [UInt8] = ProxyFixtures.hex(
        "16030100c2010000be030321e82a84da53d67fe5ba01c1671cb99a972065273a1b699b41a2fe794817e47720dd83b7be",
        "1f5e0c8fca7edddfe8b02697145b18ad6ace2517a0d0b6034648ee3a000813021303130100ff0100006d000b00040300",
        "0102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d000400020403",
        "002b0003020304002d00020101003300260024001d0020de8bcf7fd81657a4354916a1d383a2e0609bfe456041ada626",
        "9432d97032cb37"
    )

    /// No options: TLS 1.3 and 1.2, both kinds of suites, every default sigalg.
    static let defaults: [UInt8] = ProxyFixtures.hex(
        "1603010124010001200303d6c51cefb0f9bb0c01781cc94ef7dadb9b53d92dcee5daab3b8314679b374f9320a6307d9a",
        "74bd0f7681f82e3efd9b4e0b002e15a97143ac5669b13c88dd891d65003e130213031301c02cc030009fcca9cca8ccaa",
        "c02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff01000099",
        "000b000403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d",
        "002a0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b0009",
        "080304030303020301002d00020101003300260024001d00208a0b4ccee78c6a204d9033a17501f4487e6f0f2ba8df06",
        "9415155fde72f6e958"
    )

    static func parsed(_ bytes: [UInt8]) throws -> ClientHello {
        guard case .clientHello(let hello) = ClientHelloParser.parse(bytes) else {
            throw CAError.noNames
        }
        return hello
    }
}

@Suite("Leaf key types (which leaves a client leg presents)")
struct LeafKeyPlanTests {
    /// The suites of the captured hellos, split as OpenSSL splits them (`TLSContexts.suiteKeys`).
    static let suites = LeafKeyPlan.CipherSuiteKeys(
        ecdsa: [0xC02B, 0xC02C, 0xCCA9, 0xC023, 0xC024, 0xC009, 0xC00A],
        rsa: [0xC02F, 0xC030, 0xCCA8, 0xCCAA, 0x009E, 0x009F, 0xC027, 0xC028, 0x0067, 0x006B, 0xC013, 0xC014,
              0x0033, 0x0039, 0x009C, 0x009D, 0x003C, 0x003D, 0x002F, 0x0035])
    static let ecdsaCA = LeafKeyPlan(primary: .ecdsaP256, suites: suites)
    static let rsaCA = LeafKeyPlan(primary: .rsa2048, suites: suites)

    @Test("the signature_algorithms of real ClientHellos are read in order; absent is nil")
    func signatureAlgorithmsParsed() throws {
        #expect(try LeafKeyHellos.parsed(LeafKeyHellos.rsaPSSTLS13).signatureAlgorithms == [0x0804])
        #expect(try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS13).signatureAlgorithms == [0x0403])
        #expect(try LeafKeyHellos.parsed(LeafKeyHellos.rsaTLS12).signatureAlgorithms == [
            0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0809, 0x080A, 0x080B, 0x0804, 0x0805, 0x0806,
            0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0302, 0x0402, 0x0502, 0x0602])
        #expect(try LeafKeyHellos.parsed(LeafKeyHellos.rsaTLS12).cipherSuites == [0xC02F, 0x00FF])
        #expect(try LeafKeyHellos.parsed(ProxyFixtures.hex("160301002d010000290303", String(repeating: "00", count: 32),
                                                              "000002c02f0100")).signatureAlgorithms == nil)
    }

    @Test("an ECDSA CA: RSA-only clients (TLS 1.2 suite, TLS 1.3 sigalg) get the RSA leaf too; ECDSA-capable ones only the ECDSA leaf")
    func ecdsaCA() throws {
        let plan = Self.ecdsaCA
        #expect(plan.other == .rsa2048)
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.rsaTLS12)) == [.ecdsaP256, .rsa2048])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.rsaPSSTLS13)) == [.ecdsaP256, .rsa2048])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS12)) == [.ecdsaP256])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS13)) == [.ecdsaP256])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.defaults)) == [.ecdsaP256])
    }

    @Test("an RSA CA (--leaf-key rsa-2048): the mirror image, ECDSA P-256 for ECDSA-only clients")
    func rsaCA() throws {
        let plan = Self.rsaCA
        #expect(plan.other == .ecdsaP256)
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS12)) == [.rsa2048, .ecdsaP256])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS13)) == [.rsa2048, .ecdsaP256])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.rsaTLS12)) == [.rsa2048])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.rsaPSSTLS13)) == [.rsa2048])
        #expect(plan.keyTypes(for: try LeafKeyHellos.parsed(LeafKeyHellos.defaults)) == [.rsa2048])
        #expect(LeafKeyPlan(primary: .rsa3072, suites: Self.suites).other == .ecdsaP256)
        #expect(LeafKeyPlan(primary: .ecdsaP384, suites: Self.suites).other == .rsa2048)
    }

    @Test("accepts: TLS 1.3 binds the curve to the scheme; RSA needs rsa_pss_rsae; TLS 1.2 needs a suite and, when listed, a scheme of the algorithm")
    func accepts() throws {
        let plan = Self.ecdsaCA
        let ecdsa13 = try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS13)
        #expect(plan.accepts(.ecdsaP256, ecdsa13) == true)
        #expect(plan.accepts(.ecdsaP384, ecdsa13) == false)
        #expect(plan.accepts(.rsa2048, ecdsa13) == false)
        let rsa13 = try LeafKeyHellos.parsed(LeafKeyHellos.rsaPSSTLS13)
        #expect(plan.accepts(.rsa3072, rsa13) == true)
        #expect(plan.accepts(.ecdsaP256, rsa13) == false)
        var pkcs1Only = rsa13
        pkcs1Only.signatureAlgorithms = [0x0401, 0x0501]
        #expect(plan.accepts(.rsa2048, pkcs1Only) == false)

        var tls12 = try LeafKeyHellos.parsed(LeafKeyHellos.rsaTLS12)
        #expect(plan.accepts(.rsa2048, tls12) == true)
        #expect(plan.accepts(.ecdsaP256, tls12) == false)
        tls12.signatureAlgorithms = nil
        #expect(plan.accepts(.rsa2048, tls12) == true, "no signature_algorithms: RFC 5246's defaults")
        tls12.signatureAlgorithms = [0x0403]
        #expect(plan.accepts(.rsa2048, tls12) == false, "an RSA suite but only an ECDSA scheme")
        tls12.signatureAlgorithms = [0x0804]
        #expect(plan.accepts(.rsa2048, tls12) == true)
        var ecdsa12 = try LeafKeyHellos.parsed(LeafKeyHellos.ecdsaTLS12)
        #expect(ecdsa12.supportedGroups == [0x001D, 0x0017, 0x001E, 0x0019, 0x0018])
        #expect(plan.accepts(.ecdsaP256, ecdsa12) == true)
        ecdsa12.supportedGroups = [0x001D, 0x0018]
        #expect(plan.accepts(.ecdsaP256, ecdsa12) == false, "TLS 1.2 ECDSA: the key's curve must be one the client lists")
        #expect(plan.accepts(.ecdsaP384, ecdsa12) == true)
        ecdsa12.supportedGroups = nil
        #expect(plan.accepts(.ecdsaP256, ecdsa12) == true, "no supported_groups: any curve (RFC 8422 §5.1.1)")
        var both12 = try LeafKeyHellos.parsed(LeafKeyHellos.defaults)
        both12.supportedVersions = []
        both12.supportedGroups = [0x001D]
        #expect(plan.keyTypes(for: both12) == [.ecdsaP256, .rsa2048], "a TLS 1.2 client listing only X25519 cannot take a P-256 leaf")

        tls12.cipherSuites = [0x00FF]
        #expect(plan.accepts(.rsa2048, tls12) == false, "no suite the server enables")
        #expect(plan.keyTypes(for: tls12) == [.ecdsaP256], "neither usable: the CA's own, and OpenSSL says why")
    }

    @Test("OpenSSL's table, read from a server context: which suites need which key")
    func suitesFromOpenSSL() throws {
        let ctx = try #require(SSL_CTX_new(TLS_server_method()))
        defer { SSL_CTX_free(ctx) }
        let keys = TLSContexts.suiteKeys(ctx)
        #expect(keys.ecdsa.isSuperset(of: [0xC02B, 0xC02C, 0xCCA9]))
        #expect(keys.rsa.isSuperset(of: [0xC02F, 0xC030, 0xCCA8, 0x009E, 0x002F]))
        #expect(keys.ecdsa.isDisjoint(with: keys.rsa))
        #expect(!keys.ecdsa.contains(0x1301) && !keys.rsa.contains(0x1301), "TLS 1.3 suites name no key type")
    }
}

@Suite("ConnectionMachine: the client leg's leaf key types and the dialled address")
struct ConnectionMachineLeafTests {
    typealias Machine = ConnectionMachine

    static func reverseMachine(dialled: IPAddress?, primary: KeyType) -> Machine {
        let policy = InterceptionPolicy(inspectionEnabled: true, caAvailable: true, ignoreHosts: [])
        let settings = Machine.Settings(
            frontEnd: .fixed(OriginalDestination(host: "localhost", port: 8443, origin: .reverse), upstreamTLS: true),
            policy: policy, handshakeTimeoutMillis: 10_000, connectTimeoutMillis: 5_000,
            leafKeys: LeafKeyPlan(primary: primary, suites: LeafKeyPlanTests.suites), dialledAddress: dialled)
        let facts = FlowFacts(id: 9, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000))
        return Machine(settings: settings, facts: facts, recall: { _, _ in nil })
    }

    /// Start, the ClientHello's first byte, resolve, connect, the whole ClientHello, the upstream
    /// handshake (the server's certificate names only localhost): the client leg's plan.
    static func clientPlan(_ m: inout Machine, hello: [UInt8]) -> [Machine.Command] {
        let address = SocketAddress(numericHost: "127.0.0.1", port: 8443)!
        _ = m.handle(.start)
        #expect(hello.withUnsafeBytes { m.handle(.clientBytes($0)) } == [.armTimer(millis: 5_000), .resolve(host: "localhost", port: 8443)])
        _ = m.handle(.resolved([address]))
        _ = m.handle(.connected(address))
        let upstream = hello.withUnsafeBytes { m.handle(.clientBytes($0)) }
        #expect(upstream.contains(.startUpstreamTLS(.init(serverName: nil, alpn: [], verifyHost: "localhost", sessionKey: "localhost:8443|"))), "\(upstream)")
        let done = Machine.UpstreamHandshake(version: .tls13, alpn: nil, certificateProblem: nil, certificate: nil,
                                             certificateSANs: [.dns("localhost")], resumed: false)
        return m.handle(.upstreamHandshakeDone(done))
    }

    @Test("reverse mode, RSA-only TLS 1.2 client without SNI dialling 127.0.0.1: leaf names localhost and 127.0.0.1, ECDSA and RSA presented")
    func rsaOnlyClientDialledIPv4() throws {
        var m = Self.reverseMachine(dialled: IPAddress("127.0.0.1")!, primary: .ecdsaP256)
        let out = Self.clientPlan(&m, hello: LeafKeyHellos.rsaTLS12)
        let identity = try LeafIdentity(dnsNames: ["localhost"], ipAddresses: [IPAddress("127.0.0.1")!])
        #expect(out == [.armTimer(millis: 10_000), .startClientTLS(.init(identity: identity, alpn: nil, keyTypes: [.ecdsaP256, .rsa2048])), .updateFlow])
    }

    @Test("reverse mode, ECDSA-capable TLS 1.3 client dialling ::1 under an RSA CA: ::1 named, RSA and ECDSA presented; default client: the CA's type only")
    func ecdsaOnlyClientDialledIPv6() throws {
        var m = Self.reverseMachine(dialled: IPAddress("::1")!, primary: .rsa2048)
        let out = Self.clientPlan(&m, hello: LeafKeyHellos.ecdsaTLS13)
        let identity = try LeafIdentity(dnsNames: ["localhost"], ipAddresses: [IPAddress("::1")!])
        #expect(out == [.armTimer(millis: 10_000), .startClientTLS(.init(identity: identity, alpn: nil, keyTypes: [.rsa2048, .ecdsaP256])), .updateFlow])

        var plain = Self.reverseMachine(dialled: IPAddress("::1")!, primary: .ecdsaP256)
        #expect(Self.clientPlan(&plain, hello: LeafKeyHellos.defaults)
                == [.armTimer(millis: 10_000), .startClientTLS(.init(identity: identity, alpn: nil, keyTypes: [.ecdsaP256])), .updateFlow])
    }

    @Test("only reverse mode's client dials tv's listener; CONNECT, SOCKS5, transparent and TUN clients dial the destination")
    func dialsListener() {
        #expect(FrontEndKind.fixed(OriginalDestination(host: "localhost", port: 1, origin: .reverse), upstreamTLS: true).dialsListener == true)
        #expect(FrontEndKind.fixed(OriginalDestination(host: "10.0.0.1", port: 1, origin: .none), upstreamTLS: nil).dialsListener == false)
        #expect(FrontEndKind.explicitHTTP.dialsListener == false)
        #expect(FrontEndKind.socks5.dialsListener == false)
    }
}
