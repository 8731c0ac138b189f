import Testing
@testable import Tunnel

@Suite("resolv.conf, capabilities, the address plan")
struct SmallPartsTests {
    @Test("nameserver lines in order, zone ids dropped, duplicates and junk ignored")
    func resolvConf() {
        let text = """
            # systemd-resolved stub
            nameserver 127.0.0.53
            options edns0 trust-ad
            nameserver fe80::1%eth0
            nameserver   10.0.0.1
            nameserver 127.0.0.53
            nameserver not-an-address
            search lan
            """
        #expect(ResolvConf.nameservers(in: text).map(\.description) == ["127.0.0.53:53", "[fe80::1]:53", "10.0.0.1:53"])
    }

    @Test("CapEff: root's full set has both; a set without bit 21 lacks CAP_SYS_ADMIN")
    func capabilities() {
        #expect(Privileges.missing(status: "Name:\ttv\nCapEff:\t000001ffffffffff\n").isEmpty)
        #expect(Privileges.missing(status: "CapEff:\t0000000000001000\n") == ["CAP_SYS_ADMIN"])
        #expect(Privileges.missing(status: "CapEff:\t0000000000000000\n") == ["CAP_NET_ADMIN", "CAP_SYS_ADMIN"])
    }

    @Test("the default plan: fake pools inside the TUN's subnet, never its own address or the DNS address")
    func plan() {
        let plan = TunnelAddressPlan()
        #expect(plan.cidr4 == "10.77.0.1/24" && plan.cidr6 == "fd77::1/64")
        let pool = FakeEndpointPool(firstAddress: plan.fakePool4, addressCount: plan.fakePool4Count, ports: plan.fakePorts, startSlot: 0)
        #expect(pool.endpoint(atSlot: 125).address.description == "10.77.0.254")
        #expect(!pool.contains(PacketEndpoint(plan.address4, 10_000)) && !pool.contains(PacketEndpoint(plan.dns4, 10_000)))
        #expect(plan.fakePool4.isIn(plan.address4, prefixLength: plan.prefix4))
        #expect(plan.fakePool6.isIn(plan.address6!, prefixLength: plan.prefix6))
        #expect(plan.resolvConf.hasSuffix("nameserver 10.77.0.53\nnameserver fd77::53\n"))
    }
}

@Suite("ExecNamespace.leftoverSentence")
struct LeftoverSentenceTests {
    @Test("the leftovers named by their command names, each once with its count; none: no sentence")
    func sentences() {
        #expect(ExecNamespace.leftoverSentence([]) == nil)
        #expect(ExecNamespace.leftoverSentence(["sleep"]) == "1 process (sleep) left running inside the namespace was stopped")
        #expect(ExecNamespace.leftoverSentence(["sleep", "python3", "sleep"]) == "3 processes (sleep ×2, python3) left running inside the namespace were stopped")
    }
}

@Suite("What a UDP flow's first datagram says of it")
struct UDPFlowGuessTests {
    func encrypted(_ bytes: [UInt8], port: UInt16 = 4433) -> Bool {
        bytes.withUnsafeBytes { UDPEncryptionGuess.looksEncrypted($0, port: port) }
    }

    /// QUIC and DTLS are encrypted whatever the port (a trial's draft v2, version negotiation
    /// and DTLS read "not encrypted — plain bytes"); other datagrams are not guessed at.
    @Test func quicAndDTLSAreEncrypted() {
        // RFC 9001 Appendix A.2's client Initial (1,200 bytes), on a port other than 443.
        let initial = QUICVectors.v1.bytes("client_protected_packet")
        #expect(initial.count == 1_200 && encrypted(initial))
        // A version negotiation (version 0), short.
        #expect(encrypted([0xC0, 0, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1]))
        // A short datagram with a long-header-looking first byte is not taken for QUIC.
        #expect(!encrypted([0xC0, 0, 0, 0, 1, 0x68, 0x69]))
        // DTLS 1.2: a handshake record (22), version 0xFEFD, epoch, sequence, length.
        #expect(encrypted([22, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100] + Array(repeating: 0, count: 100)))
        #expect(!encrypted(Array("hello".utf8)) && !encrypted([1]))
        // UDP to 443, whatever it holds (as before).
        #expect(encrypted([1], port: 443))
    }

    /// An address in the SNI names no host (RFC 6066 §3): it read as if the flow went there.
    @Test func addressLiteralsAreNoNames() {
        #expect(EngineLoop.isAddressLiteral("10.1.2.3") && EngineLoop.isAddressLiteral("fd31::2"))
        #expect(!EngineLoop.isAddressLiteral("quic.test") && !EngineLoop.isAddressLiteral("10.1.2.3.nip.io"))
        // Forms inet_pton refuses, and what no host name holds (a re-check's `[10.1.2.3]`,
        // `010.001.002.003` and `192.168.1.1:443` still named flows).
        #expect(EngineLoop.isAddressLiteral("010.001.002.003") && EngineLoop.isAddressLiteral("10.1"))
        #expect(!EngineLoop.isHostName("[10.1.2.3]") && !EngineLoop.isHostName("192.168.1.1:443") && !EngineLoop.isHostName("a b"))
        #expect(EngineLoop.isHostName("xn--bcher-kva.test") && EngineLoop.isHostName("_dmarc.quic.test"))
    }
}
