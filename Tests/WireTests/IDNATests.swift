import Testing
@testable import Wire

/// U-labels to A-labels once, through libidn2 (UTS #46, nontransitional): the vectors are from
/// Unicode's IdnaTestV2.txt and RFC 3492's examples, as browsers resolve them.
@Suite("IDNA: host names to their A-label form")
struct IDNATests {
    @Test("U-labels become A-labels; UTS #46 maps case and keeps ß and ς (nontransitional)", arguments: [
        ("bücher", "xn--bcher-kva"),
        ("bücher.test", "xn--bcher-kva.test"),
        ("BÜCHER.test", "xn--bcher-kva.test"),
        ("faß.de", "xn--fa-hia.de"),
        ("Faß.de", "xn--fa-hia.de"),
        ("ÖBB.at", "xn--bb-eka.at"),
        ("βόλος.com", "xn--nxasmm1c.com"),
        ("Ⅻ.ü", "xii.xn--tda"),
        ("ü.test.", "xn--tda.test."),
        ("a_b.ü.test", "a_b.xn--tda.test"),
        ("日本語.jp", "xn--wgv71a119e.jp"),
    ] as [(String, String)])
    func converts(_ unicode: String, _ ascii: String) throws {
        #expect(try IDNA.asciiHost(unicode) == ascii)
    }

    @Test("an ASCII host is returned as sent: case, underscores and xn-- labels untouched",
          arguments: ["a.test", "A.Test", "a_b.test", "xn--bcher-kva.test", "fass.de", "127.0.0.1", "::1"])
    func asciiUnchanged(_ host: String) throws {
        #expect(!IDNA.isInternational(host))
        #expect(try IDNA.asciiHost(host) == host)
    }

    @Test("what IDNA refuses is refused with libidn2's code and reason", arguments: [
        ("a☃.test", -304, "IDN2_DISALLOWED", "string contains a disallowed character"),
        ("⒈.ü", -304, "IDN2_DISALLOWED", "string contains a disallowed character"),
        ("a\u{200D}b.ü", -305, "IDN2_CONTEXTJ", "string contains a forbidden context-j character"),
        ("ü-.test", -302, "IDN2_HYPHEN_STARTEND", "string start/ends with forbidden hyphen"),
    ] as [(String, Int32, String, String)])
    func refuses(_ host: String, _ code: Int32, _ name: String, _ reason: String) {
        #expect(throws: IDNARefusal(host: host, code: code)) { try IDNA.asciiHost(host) }
        let refusal = IDNARefusal(host: host, code: code)
        #expect(refusal.codeName == name)
        #expect(refusal.reason == reason)
    }

    @Test("a search text or regex: each international run of label characters becomes its A-label, the rest stays", arguments: [
        ("bücher", "xn--bcher-kva"),
        ("Bücher.test", "xn--bcher-kva.test"),
        (#"^www\.bücher\.test$"#, #"^www\.xn--bcher-kva\.test$"#),
        ("(bücher|faß)\\.", "(xn--bcher-kva|xn--fa-hia)\\."),
        ("βόλος", "xn--nxasmm1c"),
    ] as [(String, String)])
    func aLabelRuns(_ text: String, _ expected: String) {
        #expect(IDNA.aLabelRuns(text) == expected)
    }

    @Test("nothing international, or a run IDNA refuses: no A-label form")
    func aLabelRunsNone() {
        #expect(IDNA.aLabelRuns("example.com") == nil)
        #expect(IDNA.aLabelRuns("ü-") == nil)
    }

    @Test("UTF-8 validity: valid text is read, a stray continuation byte is not")
    func utf8() {
        #expect(IDNA.utf8Text(Array("bücher".utf8)) == "bücher")
        #expect(IDNA.utf8Text([0x62, 0xFC, 0x63]) == nil)
    }
}

@Suite("International host names in the parsers (read as UTF-8, converted by the caller)")
struct InternationalHostParsingTests {
    @Test("CONNECT bücher.test:443 (raw UTF-8) is read with its U-label host")
    func connectUTF8() {
        guard let head = expectHead("CONNECT bücher.test:443 HTTP/1.1\r\nHost: bücher.test:443\r\n\r\n") else { return }
        #expect(head.requestTarget == .authority(HostPort(host: "bücher.test", port: 443)))
    }

    @Test("an absolute-form http://bücher.test/ is read; non-ASCII outside the authority is still refused")
    func absoluteUTF8() {
        guard let head = expectHead("GET http://bücher.test/x?q HTTP/1.1\r\nHost: bücher.test\r\n\r\n") else { return }
        #expect(head.destination == HostPort(host: "bücher.test", port: 80))
        #expect(expectMalformedHead("GET http://b.test/ü HTTP/1.1\r\nHost: b.test\r\n\r\n").contains("0xc3"))
        #expect(expectMalformedHead("GET /ü HTTP/1.1\r\nHost: b.test\r\n\r\n").contains("0xc3"))
    }

    @Test("a host that is not valid UTF-8 is refused in one sentence")
    func invalidUTF8() {
        let reason = expectMalformedHead(Array("CONNECT b".utf8) + [0xFC] + Array("cher.test:443 HTTP/1.1\r\n\r\n".utf8))
        #expect(reason == "The request target's host is neither ASCII nor valid UTF-8.")
    }

    @Test("the authority of a request target, by form", arguments: [
        ("bücher.test:443", 0 ..< 16), ("http://a.test/x", 7 ..< 13), ("http://a.test?q", 7 ..< 13),
        ("/path", 0 ..< 0), ("*", 0 ..< 0), ("a.test", 0 ..< 6),
    ] as [(String, Range<Int>)])
    func authority(_ target: String, _ range: Range<Int>) {
        let bytes = Array(target.utf8)
        #expect(bytes.withUnsafeBufferPointer { HTTP1HeadParser.authorityRange($0) } == range)
    }

    @Test("SOCKS5: a UTF-8 domain is read as sent; invalid UTF-8 and a space get REP 01")
    func socksDomain() {
        let name = Array("bücher.test".utf8)
        let request = socksSteps([5, 1, 0, 5, 1, 0, 3, UInt8(name.count)] + name + [1, 187]).last
        #expect(request == .request(SOCKS5Request(destination: .domain("bücher.test"), port: 443)))
        for bad in [[0x62, 0xFC], [0x62, 0x20, 0xC3, 0xBC]] as [[UInt8]] {
            guard case .refused(let reason, let reply) = socksSteps([5, 1, 0, 5, 1, 0, 3, UInt8(bad.count)] + bad + [1, 187]).last else {
                Issue.record("not refused: \(bad)")
                continue
            }
            #expect(reply == SOCKS5Reply.failure(.generalFailure))
            #expect(reason.hasSuffix("."))
        }
    }

    @Test("a ClientHello whose SNI is a UTF-8 U-label: read as sent, converted by withASCIIServerName")
    func sniUTF8() throws {
        var parts = ClientHelloParts()
        parts.extensions[0].data = TLSTestBytes.serverName("BÜCHER.test")
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.serverName == "BÜCHER.test")
        let converted = try hello.withASCIIServerName()
        #expect(converted.serverName == "xn--bcher-kva.test")
        #expect(converted.normalizedServerName == "xn--bcher-kva.test")
        parts.extensions[0].data = TLSTestBytes.serverName("a☃.test")
        guard let refused = expectClientHello(parts.stream) else { return }
        #expect(throws: IDNARefusal(host: "a☃.test", code: -304)) { try refused.withASCIIServerName() }
        parts.extensions[0].data = TLSTestBytes.serverName("a.test")
        guard let ascii = expectClientHello(parts.stream) else { return }
        #expect(try ascii.withASCIIServerName() == ascii)
    }
}
