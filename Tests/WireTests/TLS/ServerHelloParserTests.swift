import Testing
@testable import Wire

/// A captured server flight with its name, for parameterised tests.
struct CapturedServerFlight: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    var testDescription: String { name }

    static let all: [CapturedServerFlight] = [
        .init(name: "openssl s_server -tls1_2 -alpn h2", bytes: CapturedServerHellos.openSSLTLS12WithALPN),
        .init(name: "openssl s_server -tls1_2", bytes: CapturedServerHellos.openSSLTLS12),
        .init(name: "openssl s_server -tls1_3", bytes: CapturedServerHellos.openSSLTLS13),
        .init(name: "openssl s_server -tls1_3 -groups P-256 (HelloRetryRequest)", bytes: CapturedServerHellos.openSSLTLS13HelloRetryRequest),
    ]
}

/// Parses a whole input and returns the ServerHello, recording an issue otherwise.
func expectServerHello(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> ServerHello? {
    let result = ServerHelloParser.parse(bytes)
    guard case .serverHello(let hello) = result else {
        Issue.record("expected a ServerHello, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    return hello
}

/// Returns the malformed reason of a ServerHello parse, recording an issue otherwise.
func expectMalformed(_ result: ServerHelloParser.Result, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    guard case .malformed(let reason) = result else {
        Issue.record("expected malformed, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    #expect(reason.first?.isUppercase == true && reason.hasSuffix("."), "a reason is one sentence: \(reason)", sourceLocation: sourceLocation)
    return reason
}

@Suite("ServerHelloParser: real server flights")
struct ServerHelloCapturedTests {
    @Test("openssl s_server -tls1_2 -alpn h2: TLS 1.2 with ALPN in the ServerHello")
    func tls12WithALPN() {
        var parser = ServerHelloParser()
        guard case .serverHello(let hello) = parser.feed(CapturedServerHellos.openSSLTLS12WithALPN) else {
            Issue.record("did not parse")
            return
        }
        #expect(hello.legacyVersion == 0x0303)
        #expect(hello.selectedVersion == nil)
        #expect(hello.negotiatedVersion == TLSVersion.tls12)
        #expect(hello.cipherSuite == 0xC02C)
        #expect(hello.compressionMethod == 0)
        #expect(hello.sessionIDLength == 0)
        #expect(hello.alpnProtocol == "h2")
        #expect(hello.alpnProtocolID == Array("h2".utf8))
        #expect(hello.keyShareGroup == nil)
        #expect(!hello.isHelloRetryRequest)
        #expect(hello.extensionTypes == [0xFF01, 11, 35, 16, 23])
        #expect(hello.handshakeLength == 74)
        // The Certificate record starts right after the ServerHello record.
        #expect(parser.bytesConsumed == 79)
        #expect(CapturedServerHellos.openSSLTLS12WithALPN[79] == 22)
    }

    @Test("openssl s_server -tls1_2: TLS 1.2 without ALPN")
    func tls12() {
        guard let hello = expectServerHello(CapturedServerHellos.openSSLTLS12) else { return }
        #expect(hello.negotiatedVersion == TLSVersion.tls12)
        #expect(hello.cipherSuite == 0xC02C)
        #expect(hello.alpnProtocolID == nil)
        #expect(hello.alpnProtocol == nil)
        #expect(hello.extensionTypes == [0xFF01, 11, 35, 23])
        #expect(hello.handshakeLength == 65)
    }

    @Test("openssl s_server -tls1_3: selected_version 0x0304, x25519")
    func tls13() {
        var parser = ServerHelloParser()
        guard case .serverHello(let hello) = parser.feed(CapturedServerHellos.openSSLTLS13) else {
            Issue.record("did not parse")
            return
        }
        #expect(hello.legacyVersion == 0x0303)
        #expect(hello.selectedVersion == 0x0304)
        #expect(hello.negotiatedVersion == TLSVersion.tls13)
        #expect(hello.cipherSuite == 0x1302)
        #expect(hello.sessionIDLength == 32)
        #expect(hello.keyShareGroup == 0x001D)
        #expect(hello.alpnProtocolID == nil)
        #expect(!hello.isHelloRetryRequest)
        #expect(hello.extensionTypes == [43, 51])
        #expect(hello.handshakeLength == 122)
        #expect(parser.bytesConsumed == 127)
        #expect(CapturedServerHellos.openSSLTLS13[127] == 20) // ChangeCipherSpec follows
    }

    @Test("openssl s_server -tls1_3 -groups P-256: a HelloRetryRequest for secp256r1")
    func helloRetryRequest() {
        guard let hello = expectServerHello(CapturedServerHellos.openSSLTLS13HelloRetryRequest) else { return }
        #expect(hello.isHelloRetryRequest)
        #expect(hello.random == ServerHello.helloRetryRequestRandom)
        #expect(hello.selectedVersion == 0x0304)
        #expect(hello.keyShareGroup == 0x0017)
        #expect(hello.cipherSuite == 0x1302)
        #expect(hello.extensionTypes == [43, 51])
    }

    @Test("every split into two pieces gives the same answer", arguments: CapturedServerFlight.all)
    func everySplitPoint(_ capture: CapturedServerFlight) {
        let whole = ServerHelloParser.parse(capture.bytes)
        guard case .serverHello = whole else {
            Issue.record("whole input did not parse: \(whole)")
            return
        }
        for split in 0 ... capture.bytes.count {
            var parser = ServerHelloParser()
            _ = parser.feed(capture.bytes[..<split])
            #expect(parser.feed(capture.bytes[split...]) == whole, "split at \(split)")
        }
    }

    @Test("one byte at a time: needMoreData until the ServerHello's last byte", arguments: CapturedServerFlight.all)
    func oneByteAtATime(_ capture: CapturedServerFlight) {
        var reference = ServerHelloParser()
        let whole = reference.feed(capture.bytes)
        var parser = ServerHelloParser()
        for index in 0 ..< reference.bytesConsumed {
            let result = parser.feed([capture.bytes[index]])
            #expect(result == (index == reference.bytesConsumed - 1 ? whole : .needMoreData), "after \(index + 1) bytes")
        }
    }

    @Test("after a HelloRetryRequest, a fresh parser skips the compatibility change_cipher_spec (RFC 8446 §5)")
    func afterHelloRetryRequest() {
        let flight = CapturedServerHellos.openSSLTLS13HelloRetryRequest
        var first = ServerHelloParser()
        guard case .serverHello(let retry) = first.feed(flight), retry.isHelloRetryRequest else {
            Issue.record("no HelloRetryRequest")
            return
        }
        #expect(Array(flight[first.bytesConsumed...]) == [0x14, 0x03, 0x03, 0x00, 0x01, 0x01])
        var second = ServerHelloParser()
        #expect(second.feed(flight[first.bytesConsumed...]) == .needMoreData)
        let realHello = TLSTestBytes.firstHandshakeMessage(CapturedServerHellos.openSSLTLS13)
        guard case .serverHello(let hello) = second.feed(TLSTestBytes.records(realHello, fragmentSizes: [50, 1000], version: 0x0303)) else {
            Issue.record("the real ServerHello did not parse")
            return
        }
        #expect(!hello.isHelloRetryRequest)
        #expect(hello.keyShareGroup == 0x001D)
        #expect(second.bytesConsumed == 6 + 10 + realHello.count)
    }

    @Test("a change_cipher_spec record that is not the single byte 0x01", arguments: [
        [0x14, 0x03, 0x03, 0x00, 0x01, 0x02], [0x14, 0x03, 0x03, 0x00, 0x02, 0x01, 0x01],
    ] as [[UInt8]])
    func badChangeCipherSpec(_ bytes: [UInt8]) {
        #expect(expectMalformed(ServerHelloParser.parse(bytes)).contains("change_cipher_spec"))
    }

    @Test("an alert after the compatibility change_cipher_spec is still an alert")
    func alertAfterChangeCipherSpec() {
        #expect(ServerHelloParser.parse([0x14, 0x03, 0x03, 0x00, 0x01, 0x01, 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]) == .alert(level: 2, description: 40))
    }

    @Test("a ServerHello re-framed into two records")
    func twoRecords() {
        let message = TLSTestBytes.firstHandshakeMessage(CapturedServerHellos.openSSLTLS13)
        let expected = ServerHelloParser.parse(CapturedServerHellos.openSSLTLS13)
        for firstSize in [1, 3, 4, 40, message.count - 1] {
            let stream = TLSTestBytes.records(message, fragmentSizes: [firstSize, message.count], version: 0x0303)
            #expect(ServerHelloParser.parse(stream) == expected, "first record of \(firstSize) bytes")
        }
    }
}

@Suite("ServerHelloParser: alerts, not TLS, malformed")
struct ServerHelloRefusalTests {
    @Test("a plaintext alert record instead of a ServerHello", arguments: [1, 3, 5, 6, 7])
    func alert(_ split: Int) {
        let bytes: [UInt8] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]
        var parser = ServerHelloParser()
        _ = parser.feed(bytes[..<split])
        #expect(parser.feed(bytes[split...]) == .alert(level: 2, description: 70))
        #expect(parser.bytesConsumed == 7)
    }

    @Test("an alert record that is not 2 bytes long")
    func longAlert() {
        #expect(expectMalformed(ServerHelloParser.parse([0x15, 0x03, 0x03, 0x00, 0x03, 2, 40, 0])).contains("exactly 2 bytes"))
    }

    @Test("an HTTP response is not TLS")
    func httpResponse() {
        #expect(ServerHelloParser.parse(Array("HTTP/1.1 400 Bad Request\r\n".utf8)) == .notTLS)
    }

    @Test("a ClientHello where a ServerHello belongs")
    func wrongType() {
        #expect(expectMalformed(ServerHelloParser.parse(CapturedClientHellos.openSSLTLS12)).contains("type 1, not ServerHello (2)"))
    }

    @Test("a TLS 1.2 ServerHello without extensions parses")
    func noExtensions() {
        var parts = ServerHelloParts()
        parts.omitExtensionsBlock = true
        parts.sessionID = []
        guard let hello = expectServerHello(parts.stream) else { return }
        #expect(hello.extensionTypes.isEmpty)
        #expect(hello.negotiatedVersion == 0x0303)
    }

    @Test("supported_versions that is not exactly one version")
    func badSelectedVersion() {
        var parts = ServerHelloParts()
        parts.extensions[0].data = [3, 4, 3, 3]
        #expect(expectMalformed(ServerHelloParser.parse(parts.stream)).contains("exactly one 2-byte version"))
    }

    @Test("an ALPN answer naming two protocols (RFC 7301 §3.1 wants exactly one)")
    func twoALPNProtocols() {
        var parts = ServerHelloParts()
        parts.extensions.append(TestExtension(type: 16, data: TLSTestBytes.alpn(["h2", "http/1.1"])))
        #expect(expectMalformed(ServerHelloParser.parse(parts.stream)).contains("exactly one"))
    }

    @Test("a HelloRetryRequest key_share carrying a key")
    func retryKeyShareWithKey() {
        var parts = ServerHelloParts()
        parts.random = ServerHello.helloRetryRequestRandom
        #expect(expectMalformed(ServerHelloParser.parse(parts.stream)).contains("selected_group"))
        parts.extensions[1].data = TLSTestBytes.u16(0x0017)
        #expect(expectServerHello(parts.stream)?.keyShareGroup == 0x0017)
    }

    @Test("a ServerHello key_share with an empty key")
    func emptyServerShare() {
        var parts = ServerHelloParts()
        parts.extensions[1].data = TLSTestBytes.u16(0x001D) + TLSTestBytes.vector16([])
        #expect(expectMalformed(ServerHelloParser.parse(parts.stream)).contains("key_share"))
    }

    @Test("an extension length that overflows the ServerHello")
    func extensionOverflow() {
        var parts = ServerHelloParts()
        parts.extensions = []
        var body = parts.body
        body.removeLast(2)
        body += TLSTestBytes.u16(6) + TLSTestBytes.u16(43) + TLSTestBytes.u16(9) + [3, 4]
        #expect(expectMalformed(ServerHelloParser.parse(TLSTestBytes.record(TLSTestBytes.handshake(type: 2, body)))).contains("supported_versions"))
    }

    @Test("a session id echo of 33 bytes")
    func longSessionID() {
        var parts = ServerHelloParts()
        parts.sessionID = [UInt8](repeating: 0, count: 33)
        #expect(expectMalformed(ServerHelloParser.parse(parts.stream)).contains("33 bytes"))
    }

    @Test("a ServerHello longer than the bound is refused from its header")
    func overBound() {
        var parser = ServerHelloParser(maxMessageBytes: 100)
        #expect(expectMalformed(parser.feed(CapturedServerHellos.openSSLTLS13.prefix(9))).contains("122"))
    }
}

@Suite("ServerHelloParser: the session id bound")
struct ServerHelloSessionIDTests {
    @Test("a legacy_session_id_echo of 33 bytes is malformed, in one sentence naming RFC 8446 §4.1.3")
    func sessionIDOver32() {
        var bytes = CapturedServerHellos.openSSLTLS13
        // record header (5) + handshake header (4) + legacy_version (2) + random (32)
        #expect(bytes[43] == 32, "the TLS 1.3 ServerHello echoes a 32-byte session id")
        bytes[43] = 33
        #expect(expectMalformed(ServerHelloParser.parse(bytes))
                == "The legacy_session_id_echo is 33 bytes long, more than the 32 RFC 8446 §4.1.3 allows.")
    }
}
