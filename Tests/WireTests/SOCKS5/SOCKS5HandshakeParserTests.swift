import Testing
@testable import Wire

/// Feeds a whole handshake (greeting then request) and returns the request step.
func socksSteps(_ bytes: [UInt8]) -> [SOCKS5HandshakeParser.Step] {
    var parser = SOCKS5HandshakeParser()
    var steps = [parser.feed(bytes)]
    while case .greeting = steps.last! { steps.append(parser.feed([UInt8]())) }
    return steps
}

@Suite("SOCKS5HandshakeParser: real curl handshakes")
struct SOCKS5CapturedTests {
    static let cases: [(String, [UInt8], [UInt8], SOCKS5Request, String)] = [
        ("curl --socks5-hostname http://a.test/", CapturedSOCKS5.curlGreetingHostname, CapturedSOCKS5.curlRequestHostname,
         SOCKS5Request(destination: .domain("a.test"), port: 80), "a.test:80"),
        ("curl --socks5 http://127.0.0.1:8080/", CapturedSOCKS5.curlGreetingIPv4, CapturedSOCKS5.curlRequestIPv4,
         SOCKS5Request(destination: .ipv4([127, 0, 0, 1]), port: 8080), "127.0.0.1:8080"),
        ("curl --socks5 http://[::1]:8443/", CapturedSOCKS5.curlGreetingIPv6, CapturedSOCKS5.curlRequestIPv6,
         SOCKS5Request(destination: .ipv6([UInt8](repeating: 0, count: 15) + [1]), port: 8443), "[::1]:8443"),
    ]

    @Test("greeting, then request, as curl sent them", arguments: cases.indices)
    func greetingThenRequest(_ index: Int) {
        let (_, greeting, request, expected, hostPort) = Self.cases[index]
        var parser = SOCKS5HandshakeParser()
        #expect(parser.feed(greeting) == .greeting(SOCKS5Greeting(methods: [0x00, 0x01]), reply: [0x05, 0x00]))
        #expect(parser.feed(request) == .request(expected))
        guard case .request(let parsed) = parser.feed([UInt8]()) else {
            Issue.record("the request step is not final")
            return
        }
        #expect(parsed.hostPort.description == hostPort)
        #expect(parsed.encoded == request)
        #expect(parser.unconsumedBytes.isEmpty)
    }

    @Test("every split of greeting + request, including both in one read", arguments: cases.indices)
    func everySplit(_ index: Int) {
        let (_, greeting, request, expected, _) = Self.cases[index]
        let bytes = greeting + request
        for split in 0 ... bytes.count {
            var parser = SOCKS5HandshakeParser()
            var steps: [SOCKS5HandshakeParser.Step] = []
            for piece in [bytes[..<split], bytes[split...], []] {
                var step = parser.feed(piece)
                while step != .needMoreData, !steps.contains(step) {
                    steps.append(step)
                    step = parser.feed([UInt8]())
                }
            }
            #expect(steps == [.greeting(SOCKS5Greeting(methods: [0, 1]), reply: [5, 0]), .request(expected)], "split at \(split)")
        }
    }

    @Test("one byte at a time")
    func oneByteAtATime() {
        let bytes = CapturedSOCKS5.curlGreetingHostname + CapturedSOCKS5.curlRequestHostname
        var parser = SOCKS5HandshakeParser()
        var steps: [SOCKS5HandshakeParser.Step] = []
        for byte in bytes {
            let step = parser.feed([byte])
            if step != .needMoreData { steps.append(step) }
        }
        #expect(steps == [.greeting(SOCKS5Greeting(methods: [0, 1]), reply: [5, 0]), .request(SOCKS5Request(destination: .domain("a.test"), port: 80))])
    }

    @Test("bytes pipelined after the request are handed back")
    func pipelined() {
        let tls = CapturedClientHellos.openSSLTLS12
        let steps = socksSteps(CapturedSOCKS5.curlGreetingHostname + CapturedSOCKS5.curlRequestHostname + tls)
        #expect(steps.count == 2)
        var parser = SOCKS5HandshakeParser()
        _ = parser.feed(CapturedSOCKS5.curlGreetingHostname)
        _ = parser.feed(CapturedSOCKS5.curlRequestHostname + tls)
        #expect(parser.unconsumedBytes == tls)
    }
}

@Suite("SOCKS5HandshakeParser: refusals")
struct SOCKS5RefusalTests {
    @Test("a greeting without method 0x00 is answered 05 FF")
    func noAcceptableMethod() {
        var parser = SOCKS5HandshakeParser()
        guard case .refused(let reason, let reply) = parser.feed([5, 2, 0x02, 0x01]) else {
            Issue.record("not refused")
            return
        }
        #expect(reply == [0x05, 0xFF])
        #expect(reason.contains("0x2, 0x1"))
        #expect(parser.feed([5, 1, 0, 1]) == .refused(reason: reason, reply: reply))
    }

    @Test("a greeting with no methods is answered 05 FF")
    func emptyMethods() {
        guard case .refused(_, let reply) = socksSteps([5, 0]).last else {
            Issue.record("not refused")
            return
        }
        #expect(reply == SOCKS5Greeting.refuseReply)
    }

    @Test("commands other than CONNECT get REP 07 at once", arguments: [2, 3, 9] as [UInt8])
    func unsupportedCommand(_ command: UInt8) {
        var parser = SOCKS5HandshakeParser()
        _ = parser.feed([5, 1, 0])
        guard case .refused(let reason, let reply) = parser.feed([5, command]) else {
            Issue.record("not refused")
            return
        }
        #expect(reply == [5, 7, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(reason.contains("CONNECT"))
    }

    @Test("an unknown address type gets REP 08")
    func unsupportedAddressType() {
        guard case .refused(let reason, let reply) = socksSteps([5, 1, 0, 5, 1, 0, 2, 1]).last else {
            Issue.record("not refused")
            return
        }
        #expect(reply == [5, 8, 0, 1, 0, 0, 0, 0, 0, 0])
        #expect(reason.contains("address type 2"))
    }

    @Test("an empty or non-printable domain gets REP 01", arguments: [[0], [3, 0x61, 0x00, 0x62], [1, 0x20]] as [[UInt8]])
    func badDomain(_ name: [UInt8]) {
        guard case .refused(let reason, let reply) = socksSteps([5, 1, 0, 5, 1, 0, 3] + name + [0, 80]).last else {
            Issue.record("not refused")
            return
        }
        #expect(reply == SOCKS5Reply.failure(.generalFailure))
        #expect(reason.hasSuffix("."))
    }

    @Test("a version other than 5 is malformed, decided from the first byte", arguments: [[4], [5, 1, 0, 4]] as [[UInt8]])
    func wrongVersion(_ bytes: [UInt8]) {
        guard case .malformed(let reason) = socksSteps(bytes).last else {
            Issue.record("not malformed")
            return
        }
        #expect(reason.contains("version 4"))
    }

    @Test("SOCKS4 and HTTP are malformed at once", arguments: [[4, 1, 0, 80, 127, 0, 0, 1, 0], Array("CONNECT a:1 HTTP/1.1".utf8)] as [[UInt8]])
    func otherProtocols(_ bytes: [UInt8]) {
        var parser = SOCKS5HandshakeParser()
        guard case .malformed = parser.feed(bytes.prefix(1)) else {
            Issue.record("not malformed")
            return
        }
    }

    @Test("truncated greetings and requests need more data")
    func truncations() {
        let bytes = CapturedSOCKS5.curlGreetingIPv6 + CapturedSOCKS5.curlRequestIPv6
        for length in [0, 1, 2, 3, 4, 5, 7, 8, 25] {
            #expect(socksSteps(Array(bytes.prefix(length))).last == .needMoreData, "\(length) bytes")
        }
        #expect(socksSteps([5, 1, 0, 5, 1, 0, 3]).last == .needMoreData)
        #expect(socksSteps([5, 1, 0, 5, 1, 0, 3, 6, 0x61]).last == .needMoreData)
    }
}

@Suite("SOCKS5 replies and addresses")
struct SOCKS5ReplyTests {
    @Test("success bytes with an IPv4, IPv6 or domain bound address")
    func success() {
        #expect(SOCKS5Reply.success(boundAddress: .ipv4([127, 0, 0, 1]), boundPort: 54321)
            == [0x05, 0x00, 0x00, 0x01, 0x7F, 0x00, 0x00, 0x01, 0xD4, 0x31])
        #expect(SOCKS5Reply.success(boundAddress: .ipv6([UInt8](repeating: 0, count: 15) + [1]), boundPort: 443)
            == [5, 0, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0x01, 0xBB])
        #expect(SOCKS5Reply.success(boundAddress: .domain("a.test"), boundPort: 80)
            == [5, 0, 0, 3, 6] + Array("a.test".utf8) + [0, 80])
    }

    @Test("failure bytes for every RFC 1928 §6 code", arguments: SOCKS5Reply.Code.allCases)
    func failure(_ code: SOCKS5Reply.Code) {
        #expect(SOCKS5Reply.failure(code) == [5, code.rawValue, 0, 1, 0, 0, 0, 0, 0, 0])
    }

    @Test("the failure codes the proxy uses have their RFC values")
    func codeValues() {
        #expect(SOCKS5Reply.Code.generalFailure.rawValue == 1)
        #expect(SOCKS5Reply.Code.connectionNotAllowed.rawValue == 2)
        #expect(SOCKS5Reply.Code.networkUnreachable.rawValue == 3)
        #expect(SOCKS5Reply.Code.hostUnreachable.rawValue == 4)
        #expect(SOCKS5Reply.Code.connectionRefused.rawValue == 5)
        #expect(SOCKS5Reply.Code.commandNotSupported.rawValue == 7)
        #expect(SOCKS5Reply.Code.addressTypeNotSupported.rawValue == 8)
    }

    @Test("IPv6 text follows RFC 5952", arguments: [
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8::1"),
        ([UInt8](repeating: 0, count: 16), "::"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8:0:1::1"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1], "2001:db8::1:0:0:1"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], "2001:db8:1:1:1:1:1:1"),
        ([0xfe, 0x80] + [UInt8](repeating: 0, count: 14), "fe80::"),
    ] as [([UInt8], String)])
    func ipv6Text(_ bytes: [UInt8], _ text: String) {
        #expect(SOCKS5Address.ipv6(bytes).description == text)
    }
}
