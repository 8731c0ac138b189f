import Testing
@testable import Wire

/// A captured ClientHello with its name, for parameterised tests.
struct CapturedClientHello: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    var testDescription: String { name }

    static let all: [CapturedClientHello] = [
        .init(name: "openssl s_client -servername a.test -alpn h2,http/1.1", bytes: CapturedClientHellos.openSSLWithSNIAndALPN),
        .init(name: "curl --http2", bytes: CapturedClientHellos.curlHTTP2),
        .init(name: "python ssl", bytes: CapturedClientHellos.pythonSSL),
        .init(name: "openssl s_client -noservername", bytes: CapturedClientHellos.openSSLNoServerName),
        .init(name: "openssl s_client -tls1_2", bytes: CapturedClientHellos.openSSLTLS12),
    ]
}

/// Parses a whole input and returns the ClientHello, recording an issue otherwise.
func expectClientHello(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> ClientHello? {
    let result = ClientHelloParser.parse(bytes)
    guard case .clientHello(let hello) = result else {
        Issue.record("expected a ClientHello, got \(result)", sourceLocation: sourceLocation)
        return nil
    }
    return hello
}

/// Parses a whole input and returns the malformed reason, recording an issue otherwise.
func expectMalformed(_ result: ClientHelloParser.Result, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    guard case .malformed(let reason) = result else {
        Issue.record("expected malformed, got \(result)", sourceLocation: sourceLocation)
        return ""
    }
    #expect(reason.first?.isUppercase == true && reason.hasSuffix("."), "a reason is one sentence: \(reason)", sourceLocation: sourceLocation)
    return reason
}

@Suite("ClientHelloParser: real ClientHellos")
struct ClientHelloCapturedTests {
    static let openSSLCipherSuites: [UInt16] = [
        0x1302, 0x1303, 0x1301, 0xC02C, 0xC030, 0x009F, 0xCCA9, 0xCCA8, 0xCCAA, 0xC02B, 0xC02F, 0x009E,
        0xC024, 0xC028, 0x006B, 0xC023, 0xC027, 0x0067, 0xC00A, 0xC014, 0x0039, 0xC009, 0xC013, 0x0033,
        0x009D, 0x009C, 0x003D, 0x003C, 0x0035, 0x002F, 0x00FF,
    ]

    @Test("openssl s_client -servername a.test -alpn h2,http/1.1")
    func openSSLWithSNIAndALPN() throws {
        var parser = ClientHelloParser()
        let result = parser.feed(CapturedClientHellos.openSSLWithSNIAndALPN)
        guard case .clientHello(let hello) = result else {
            Issue.record("got \(result)")
            return
        }
        #expect(hello.legacyVersion == 0x0303)
        #expect(hello.random.count == 32)
        #expect(hello.random.prefix(4) == [0xF5, 0xF8, 0x43, 0x25])
        #expect(hello.sessionIDLength == 32)
        #expect(hello.cipherSuites == Self.openSSLCipherSuites)
        #expect(hello.serverName == "a.test")
        #expect(hello.normalizedServerName == "a.test")
        #expect(hello.alpnProtocols == ["h2", "http/1.1"])
        #expect(hello.alpnProtocolIDs == [Array("h2".utf8), Array("http/1.1".utf8)])
        #expect(hello.supportedVersions == [0x0304, 0x0303, 0x0302, 0x0301])
        #expect(hello.offersTLS13)
        #expect(hello.offersSessionTicket)
        #expect(!hello.offersPreSharedKey)
        #expect(hello.keyShareGroups == [0x001D])
        #expect(hello.extensionTypes == [0, 11, 10, 35, 16, 22, 23, 13, 43, 45, 51])
        #expect(hello.handshakeLength == 325)
        #expect(parser.bytesConsumed == 330)
        #expect(parser.recordCount == 1)
    }

    @Test("curl --http2")
    func curlHTTP2() {
        guard let hello = expectClientHello(CapturedClientHellos.curlHTTP2) else { return }
        #expect(hello.serverName == "a.test")
        #expect(hello.alpnProtocols == ["h2", "http/1.1"])
        #expect(hello.cipherSuites == Self.openSSLCipherSuites)
        #expect(hello.supportedVersions == [0x0304, 0x0303, 0x0302, 0x0301])
        #expect(!hello.offersSessionTicket)
        #expect(hello.keyShareGroups == [0x001D])
        #expect(hello.extensionTypes == [0, 11, 10, 16, 22, 23, 49, 13, 43, 45, 51, 21])
        #expect(hello.handshakeLength == 512)
    }

    @Test("python ssl with server_hostname")
    func pythonSSL() {
        guard let hello = expectClientHello(CapturedClientHellos.pythonSSL) else { return }
        #expect(hello.serverName == "a.test")
        #expect(hello.alpnProtocolIDs.isEmpty)
        #expect(hello.cipherSuites == [
            0x1302, 0x1303, 0x1301, 0xC02C, 0xC030, 0xC02B, 0xC02F, 0xCCA9, 0xCCA8, 0xC024, 0xC028, 0xC023,
            0xC027, 0x009F, 0x009E, 0x006B, 0x0067, 0x00FF,
        ])
        #expect(hello.supportedVersions == [0x0304, 0x0303])
        #expect(hello.offersSessionTicket)
        #expect(hello.keyShareGroups == [0x001D])
        #expect(hello.extensionTypes == [0, 11, 10, 35, 22, 23, 13, 43, 45, 51, 21])
        #expect(hello.handshakeLength == 512)
    }

    @Test("openssl s_client -noservername")
    func openSSLNoServerName() {
        guard let hello = expectClientHello(CapturedClientHellos.openSSLNoServerName) else { return }
        #expect(hello.serverName == nil)
        #expect(hello.normalizedServerName == nil)
        #expect(hello.alpnProtocolIDs.isEmpty)
        #expect(hello.supportedVersions == [0x0304, 0x0303, 0x0302, 0x0301])
        #expect(hello.extensionTypes == [11, 10, 35, 22, 23, 13, 43, 45, 51])
        #expect(hello.handshakeLength == 292)
    }

    @Test("openssl s_client -tls1_2")
    func openSSLTLS12() {
        guard let hello = expectClientHello(CapturedClientHellos.openSSLTLS12) else { return }
        #expect(hello.legacyVersion == 0x0303)
        #expect(hello.sessionIDLength == 0)
        #expect(hello.serverName == "a.test")
        #expect(hello.cipherSuites == Array(Self.openSSLCipherSuites.dropFirst(3)))
        #expect(hello.supportedVersions.isEmpty)
        #expect(!hello.offersTLS13)
        #expect(hello.keyShareGroups.isEmpty)
        #expect(hello.offersSessionTicket)
        #expect(hello.extensionTypes == [0, 11, 10, 35, 22, 23, 13])
        #expect(hello.handshakeLength == 198)
    }

    @Test("every split into two pieces gives the same ClientHello", arguments: CapturedClientHello.all)
    func everySplitPoint(_ capture: CapturedClientHello) {
        let whole = ClientHelloParser.parse(capture.bytes)
        guard case .clientHello = whole else {
            Issue.record("whole input did not parse: \(whole)")
            return
        }
        for split in 0 ... capture.bytes.count {
            var parser = ClientHelloParser()
            let first = parser.feed(capture.bytes[..<split])
            if split < capture.bytes.count { #expect(first == .needMoreData, "prefix of \(split) bytes") }
            let second = parser.feed(capture.bytes[split...])
            #expect(second == whole, "split at \(split)")
        }
    }

    @Test("one byte at a time: needMoreData until the last byte", arguments: CapturedClientHello.all)
    func oneByteAtATime(_ capture: CapturedClientHello) {
        var parser = ClientHelloParser()
        for (index, byte) in capture.bytes.enumerated() {
            let result = parser.feed([byte])
            if index < capture.bytes.count - 1 {
                #expect(result == .needMoreData, "after \(index + 1) bytes")
            } else {
                #expect(result == ClientHelloParser.parse(capture.bytes))
                guard case .clientHello = result else {
                    Issue.record("got \(result)")
                    return
                }
            }
        }
    }

    @Test("every truncation is needMoreData", arguments: CapturedClientHello.all)
    func truncations(_ capture: CapturedClientHello) {
        for length in 0 ..< capture.bytes.count {
            #expect(ClientHelloParser.parse(capture.bytes.prefix(length)) == .needMoreData, "\(length) bytes")
        }
    }

    @Test("re-framed into two records at any point", arguments: CapturedClientHello.all)
    func twoRecords(_ capture: CapturedClientHello) {
        let message = TLSTestBytes.firstHandshakeMessage(capture.bytes)
        let expected = ClientHelloParser.parse(capture.bytes)
        for firstSize in [1, 2, 3, 4, 5, 38, 100, message.count - 1] {
            let stream = TLSTestBytes.records(message, fragmentSizes: [firstSize, message.count])
            var parser = ClientHelloParser()
            #expect(parser.feed(stream) == expected, "first record of \(firstSize) bytes")
            #expect(parser.recordCount == 2)
            #expect(parser.bytesConsumed == message.count + 10)
        }
    }

    @Test("re-framed into many small records, fed in TCP-sized reads")
    func manyRecords() {
        let message = TLSTestBytes.firstHandshakeMessage(CapturedClientHellos.curlHTTP2)
        let expected = ClientHelloParser.parse(CapturedClientHellos.curlHTTP2)
        for fragment in [1, 7, 64] {
            let stream = TLSTestBytes.records(message, fragmentSizes: [fragment])
            for read in [1, 5, 13, 1448] {
                var parser = ClientHelloParser()
                var result = ClientHelloParser.Result.needMoreData
                var offset = 0
                while offset < stream.count {
                    #expect(result == .needMoreData)
                    result = parser.feed(stream[offset ..< min(offset + read, stream.count)])
                    offset += read
                }
                #expect(result == expected, "records of \(fragment), reads of \(read)")
            }
        }
    }

    @Test("a ClientHello over 1,500 bytes (padding extension added to a real one) across TCP segments")
    func paddedBeyondOneSegment() {
        var parts = ClientHelloParts(message: TLSTestBytes.firstHandshakeMessage(CapturedClientHellos.openSSLWithSNIAndALPN))
        parts.extensions.append(TestExtension(type: 21, data: [UInt8](repeating: 0, count: 1_300)))
        let stream = parts.stream
        #expect(stream.count > 1_500)
        for segment in [1, 536, 1_448] {
            var parser = ClientHelloParser()
            var result = ClientHelloParser.Result.needMoreData
            var offset = 0
            while offset < stream.count {
                result = parser.feed(stream[offset ..< min(offset + segment, stream.count)])
                offset += segment
            }
            guard case .clientHello(let hello) = result else {
                Issue.record("segments of \(segment): \(result)")
                continue
            }
            #expect(hello.serverName == "a.test")
            #expect(hello.alpnProtocols == ["h2", "http/1.1"])
            #expect(hello.extensionTypes == [0, 11, 10, 35, 16, 22, 23, 13, 43, 45, 51, 21])
            #expect(hello.handshakeLength == 325 + 1_304)
            #expect(parser.bytesConsumed == stream.count)
        }
    }

    @Test("a 20,000-byte ClientHello needs two 16 KiB records")
    func largerThanOneRecord() {
        var parts = ClientHelloParts(message: TLSTestBytes.firstHandshakeMessage(CapturedClientHellos.pythonSSL))
        let padding = parts.extensions.firstIndex { $0.type == 21 }!
        parts.extensions[padding].data = [UInt8](repeating: 0, count: 20_000 - 512 + parts.extensions[padding].data.count)
        #expect(parts.message.count == 20_000)
        var parser = ClientHelloParser()
        guard case .clientHello(let hello) = parser.feed(parts.stream) else {
            Issue.record("did not parse")
            return
        }
        #expect(parser.recordCount == 2)
        #expect(hello.handshakeLength == 20_000)
        #expect(hello.serverName == "a.test")
    }

    @Test("bytes after the ClientHello are ignored and the answer is final")
    func trailingBytesAndStickyAnswer() {
        let capture = CapturedClientHellos.openSSLWithSNIAndALPN
        var parser = ClientHelloParser()
        let result = parser.feed(capture + [0x14, 0x03, 0x03, 0x00, 0x01, 0x01])
        guard case .clientHello = result else {
            Issue.record("got \(result)")
            return
        }
        #expect(parser.bytesConsumed == capture.count)
        #expect(parser.feed(Array("more".utf8)) == result)
        #expect(parser.bytesConsumed == capture.count)
    }

    @Test("a second ClientHello after a HelloRetryRequest may follow a change_cipher_spec record (RFC 8446 D.4)")
    func secondClientHello() {
        let changeCipherSpec: [UInt8] = [0x14, 0x03, 0x03, 0x00, 0x01, 0x01]
        let hello = CapturedClientHellos.openSSLWithSNIAndALPN
        #expect(ClientHelloParser.parse(changeCipherSpec + hello) == .notTLS)
        var parser = ClientHelloParser(afterHelloRetryRequest: true)
        let expected = ClientHelloParser.parse(hello)
        for byte in changeCipherSpec { #expect(parser.feed([byte]) == .needMoreData) }
        #expect(parser.feed(hello) == expected)
        #expect(parser.recordCount == 2)
        #expect(parser.bytesConsumed == 6 + hello.count)
        // Between two records of the ClientHello it is still an interruption.
        let message = TLSTestBytes.firstHandshakeMessage(hello)
        var split = ClientHelloParser(afterHelloRetryRequest: true)
        let stream = TLSTestBytes.record(Array(message.prefix(20))) + changeCipherSpec + TLSTestBytes.record(Array(message.dropFirst(20)))
        #expect(expectMalformed(split.feed(stream)).contains("content type 20"))
    }

    @Test("raw buffer and slice inputs give the same answer as arrays")
    func inputShapes() {
        let capture = CapturedClientHellos.openSSLTLS12
        let expected = ClientHelloParser.parse(capture)
        var raw = ClientHelloParser()
        #expect(capture.withUnsafeBytes { raw.feed($0) } == expected)
        var slice = ClientHelloParser()
        let padded = [0xAA] + capture
        #expect(slice.feed(padded[1...]) == expected)
        var sequence = ClientHelloParser()
        #expect(sequence.feed(capture.reversed().reversed()) == expected)
    }
}

@Suite("ClientHelloParser: not TLS")
struct ClientHelloNotTLSTests {
    @Test("an HTTP request is refused from its first byte")
    func httpRequest() {
        var parser = ClientHelloParser()
        #expect(parser.feed(Array("G".utf8)) == .notTLS)
        #expect(ClientHelloParser.parse(Array("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)) == .notTLS)
    }

    @Test("a handshake content type with a wrong major version is refused at the second byte")
    func wrongMajorVersion() {
        var parser = ClientHelloParser()
        #expect(parser.feed([0x16]) == .needMoreData)
        #expect(parser.feed([0x47]) == .notTLS)
    }

    @Test("other first bytes: SSLv2 hello, alert, application data, SSH banner", arguments: [
        [0x80, 0x2E, 0x01, 0x00, 0x02], [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28], [0x17, 0x03, 0x03],
        Array("SSH-2.0-OpenSSH_9.2\r\n".utf8),
    ] as [[UInt8]])
    func otherProtocols(_ bytes: [UInt8]) {
        #expect(ClientHelloParser.parse(bytes) == .notTLS)
    }

    @Test("no bytes yet is needMoreData")
    func empty() {
        var parser = ClientHelloParser()
        #expect(parser.feed([UInt8]()) == .needMoreData)
        #expect(parser.bytesConsumed == 0)
    }
}

@Suite("ClientHelloParser: malformed input")
struct ClientHelloMalformedTests {
    /// The default parts parse; each test breaks one thing.
    @Test("the test builder's default ClientHello parses")
    func baseline() {
        guard let hello = expectClientHello(ClientHelloParts().stream) else { return }
        #expect(hello.serverName == "a.test")
        #expect(hello.supportedVersions == [0x0304, 0x0303])
        #expect(hello.keyShareGroups == [0x001D])
        #expect(hello.cipherSuites == [0x1301, 0x1302])
    }

    @Test("a ClientHello longer than the buffering bound is refused from its header, before its body")
    func overBound() {
        var parser = ClientHelloParser()
        let header = TLSTestBytes.record(Array([1] + TLSTestBytes.u24(70_000))).prefix(9)
        let reason = expectMalformed(parser.feed(header))
        #expect(reason.contains("70004") && reason.contains("65536"))

        var small = ClientHelloParser(maxMessageBytes: 200)
        #expect(expectMalformed(small.feed(CapturedClientHellos.openSSLWithSNIAndALPN)).contains("325"))
    }

    @Test("an empty handshake record")
    func emptyRecord() {
        #expect(expectMalformed(ClientHelloParser.parse([0x16, 0x03, 0x01, 0x00, 0x00])).contains("empty"))
    }

    @Test("a record longer than 2^14 bytes")
    func oversizedRecord() {
        #expect(expectMalformed(ClientHelloParser.parse([0x16, 0x03, 0x01, 0x40, 0x01])).contains("16385"))
    }

    @Test("a first handshake message that is not a ClientHello")
    func wrongHandshakeType() {
        let reason = expectMalformed(ClientHelloParser.parse(ServerHelloParts().stream))
        #expect(reason.contains("type 2"))
    }

    @Test("a non-handshake record in the middle of the ClientHello")
    func interleavedRecord() {
        let message = ClientHelloParts().message
        let stream = TLSTestBytes.record(Array(message.prefix(10)))
            + TLSTestBytes.record(type: 23, Array(message.dropFirst(10)))
        #expect(expectMalformed(ClientHelloParser.parse(stream)).contains("content type 23"))
    }

    @Test("a second record with a wrong major version")
    func secondRecordVersion() {
        let message = ClientHelloParts().message
        let stream = TLSTestBytes.record(Array(message.prefix(10)))
            + TLSTestBytes.record(version: 0x0401, Array(message.dropFirst(10)))
        #expect(expectMalformed(ClientHelloParser.parse(stream)).contains("major version 4"))
    }

    @Test("an empty handshake body")
    func emptyBody() {
        #expect(expectMalformed(ClientHelloParser.parse(TLSTestBytes.record([1, 0, 0, 0]))).contains("legacy_version"))
    }

    @Test("a session id of 33 bytes")
    func longSessionID() {
        var parts = ClientHelloParts()
        parts.sessionID = [UInt8](repeating: 1, count: 33)
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("33 bytes"))
    }

    @Test("a session id length that overflows the message")
    func sessionIDOverflow() {
        let message = TLSTestBytes.handshake(type: 1, TLSTestBytes.u16(0x0303) + [UInt8](repeating: 0, count: 32) + [32, 1, 2])
        #expect(expectMalformed(ClientHelloParser.parse(TLSTestBytes.record(message))).contains("legacy_session_id"))
    }

    @Test("cipher suite lists that are empty or odd", arguments: [[], [0x13]] as [[UInt8]])
    func badCipherSuites(_ suites: [UInt8]) {
        var parts = ClientHelloParts()
        parts.cipherSuites = []
        var body = parts.body
        // Replace the empty vector (00 00) with the broken one.
        let at = 2 + 32 + 1 + parts.sessionID.count
        body.replaceSubrange(at ..< at + 2, with: TLSTestBytes.vector16(suites))
        let stream = TLSTestBytes.record(TLSTestBytes.handshake(type: 1, body))
        #expect(expectMalformed(ClientHelloParser.parse(stream)).contains("cipher_suites"))
    }

    @Test("a cipher suite length that overflows the message")
    func cipherSuitesOverflow() {
        var parts = ClientHelloParts()
        parts.rawTail = []
        parts.compressionMethods = []
        var body = parts.body
        body.removeLast() // the compression methods vector
        body.replaceSubrange(body.count - 6 ..< body.count - 4, with: TLSTestBytes.u16(0xFFFE))
        #expect(expectMalformed(ClientHelloParser.parse(TLSTestBytes.record(TLSTestBytes.handshake(type: 1, body)))).contains("cipher_suites"))
    }

    @Test("no compression method")
    func noCompression() {
        var parts = ClientHelloParts()
        parts.compressionMethods = []
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("compression"))
    }

    @Test("an extensions block that claims more bytes than the message holds")
    func extensionsBlockOverflow() {
        var parts = ClientHelloParts()
        parts.rawTail = TLSTestBytes.u16(500) + TestExtension(type: 0, data: TLSTestBytes.serverName("a.test")).encoded
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("extensions block"))
    }

    @Test("bytes after the extensions block")
    func bytesAfterExtensions() {
        var parts = ClientHelloParts()
        parts.rawTail = TLSTestBytes.vector16([]) + [0]
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("extensions block is followed"))
    }

    @Test("an extension whose length overflows the extensions block")
    func extensionOverflow() {
        var parts = ClientHelloParts()
        parts.rawTail = TLSTestBytes.vector16(TLSTestBytes.u16(0) + TLSTestBytes.u16(40) + [0, 4, 0, 0, 1, 0x61])
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("server_name"))
    }

    @Test("a truncated extension header")
    func extensionHeaderTruncated() {
        var parts = ClientHelloParts()
        parts.rawTail = TLSTestBytes.vector16([0, 0, 0])
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("server_name"))
    }

    static let brokenServerNames: [(String, [UInt8], String)] = [
        ("list overflows extension", TLSTestBytes.u16(20) + [0, 0, 1, 0x61], "server_name list"),
        ("name overflows list", TLSTestBytes.vector16([0, 0, 9, 0x61]), "server name"),
        ("empty list", TLSTestBytes.vector16([]), "empty list"),
        ("empty host name", TLSTestBytes.vector16([0, 0, 0]), "empty"),
        ("two host names", TLSTestBytes.vector16([0, 0, 1, 0x61, 0, 0, 1, 0x62]), "two host_name"),
        ("bytes after list", TLSTestBytes.serverName("a.test") + [0], "server_name list is followed"),
    ]

    @Test("broken server_name extensions (RFC 6066 §3)", arguments: brokenServerNames.indices)
    func brokenServerName(_ index: Int) {
        let (label, data, expected) = Self.brokenServerNames[index]
        var parts = ClientHelloParts()
        parts.extensions[0].data = data
        let reason = expectMalformed(ClientHelloParser.parse(parts.stream))
        #expect(reason.contains(expected), "\(label): \(reason)")
    }

    /// A host_name no DNS name can be (a control byte, a space, bytes that are not UTF-8): the
    /// hello is read without it, and says why (refusing the hello broke a passed-through
    /// connection nginx accepts: a trial).
    @Test("a host_name with a control byte, a space or bytes that are not UTF-8: no serverName, the hello read, the problem said",
          arguments: [([0x61, 0x00, 0x62], "the server_name host_name contains byte 0x0, a control character"),
                      ([0x78, 0x1B, 0x5B, 0x33, 0x31, 0x6D], "the server_name host_name contains byte 0x1b, a control character"),
                      ([0x61, 0x20, 0x62], "the server_name host_name contains byte 0x20, a space"),
                      ([0x61, 0xFF, 0x62], "the server_name host_name is neither ASCII nor valid UTF-8")] as [([UInt8], String)])
    func unusableHostName(_ name: [UInt8], _ problem: String) {
        var parts = ClientHelloParts()
        parts.extensions[0].data = TLSTestBytes.vector16([0] + TLSTestBytes.vector16(name))
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.serverName == nil && hello.normalizedServerName == nil)
        #expect(hello.serverNameProblem == problem)
    }

    @Test("a server_name with another name type before host_name is read")
    func otherNameTypeSkipped() {
        var parts = ClientHelloParts()
        parts.extensions[0].data = TLSTestBytes.vector16([7, 0, 2, 0x78, 0x79, 0, 0, 6] + Array("a.test".utf8))
        #expect(expectClientHello(parts.stream)?.serverName == "a.test")
    }

    static let brokenALPN: [(String, [UInt8], String)] = [
        ("empty list", TLSTestBytes.vector16([]), "empty"),
        ("empty name", TLSTestBytes.vector16([0]), "empty"),
        ("name overflows list", TLSTestBytes.vector16([5, 0x68, 0x32]), "ALPN protocol name"),
        ("list overflows extension", TLSTestBytes.u16(9) + [2, 0x68, 0x32], "ALPN protocol_name_list"),
    ]

    @Test("broken ALPN extensions (RFC 7301 §3.1)", arguments: brokenALPN.indices)
    func brokenALPNExtension(_ index: Int) {
        let (label, data, expected) = Self.brokenALPN[index]
        var parts = ClientHelloParts()
        parts.extensions.append(TestExtension(type: 16, data: data))
        let reason = expectMalformed(ClientHelloParser.parse(parts.stream))
        #expect(reason.contains(expected), "\(label): \(reason)")
    }

    @Test("supported_versions lists that are empty, odd or overflow", arguments: [[0], [3, 3, 4, 3], [8, 3, 4]] as [[UInt8]])
    func brokenSupportedVersions(_ data: [UInt8]) {
        var parts = ClientHelloParts()
        parts.extensions[1].data = data
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("supported_versions"))
    }

    @Test("a key share with an empty key_exchange")
    func emptyKeyShare() {
        var parts = ClientHelloParts()
        parts.extensions[2].data = TLSTestBytes.keyShare([(0x001D, 0)])
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("0x1d"))
    }

    @Test("a key share entry that overflows its list")
    func keyShareOverflow() {
        var parts = ClientHelloParts()
        parts.extensions[2].data = TLSTestBytes.vector16(TLSTestBytes.u16(0x1D) + TLSTestBytes.u16(33) + [1, 2])
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("key_exchange"))
    }

    @Test("an empty client_shares list is allowed (the client asks for a HelloRetryRequest)")
    func emptyClientShares() {
        var parts = ClientHelloParts()
        parts.extensions[2].data = TLSTestBytes.keyShare([])
        #expect(expectClientHello(parts.stream)?.keyShareGroups == [])
    }

    @Test("an extension sent twice")
    func duplicateExtension() {
        var parts = ClientHelloParts()
        parts.extensions.append(parts.extensions[1])
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("twice"))
    }

    @Test("pre_shared_key must be the last extension (RFC 8446 §4.2.11)")
    func pskPlacement() {
        var parts = ClientHelloParts()
        parts.extensions.append(TestExtension(type: 41, data: [0, 0, 0, 0]))
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.offersPreSharedKey)

        parts.extensions.append(TestExtension(type: 42, data: []))
        #expect(expectMalformed(ClientHelloParser.parse(parts.stream)).contains("pre_shared_key"))
    }

    @Test("a TLS 1.2 ClientHello without an extensions block parses")
    func noExtensions() {
        var parts = ClientHelloParts()
        parts.omitExtensionsBlock = true
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.extensionTypes.isEmpty)
        #expect(hello.serverName == nil)
    }
}

@Suite("ClientHelloParser: GREASE and names")
struct ClientHelloGREASETests {
    @Test("GREASE values are kept in every list and do not disturb parsing (RFC 8701)")
    func greaseKept() {
        var parts = ClientHelloParts()
        parts.cipherSuites = [0x0A0A, 0x1301]
        parts.extensions = [TestExtension(type: 0x1A1A, data: [])]
            + parts.extensions
            + [TestExtension(type: 16, data: TLSTestBytes.alpn(["h2"])), TestExtension(type: 0xFAFA, data: [0])]
        parts.extensions[2].data = TLSTestBytes.supportedVersions([0x4A4A, 0x0304])
        parts.extensions[3].data = TLSTestBytes.keyShare([(0x3A3A, 1), (0x001D, 32)])
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.cipherSuites == [0x0A0A, 0x1301])
        #expect(hello.extensionTypes == [0x1A1A, 0, 43, 51, 16, 0xFAFA])
        #expect(hello.supportedVersions == [0x4A4A, 0x0304])
        #expect(hello.keyShareGroups == [0x3A3A, 0x001D])
        #expect(hello.serverName == "a.test")
        #expect(hello.alpnProtocols == ["h2"])
        #expect(hello.cipherSuites.filter { !GREASE.isReserved($0) } == [0x1301])
    }

    @Test("GREASE.isReserved knows exactly the 16 values of RFC 8701 §2")
    func greaseValues() {
        let reserved = (0 ... 0xFFFF).map(UInt16.init).filter(GREASE.isReserved)
        let expected: [UInt16] = [
            0x0A0A, 0x1A1A, 0x2A2A, 0x3A3A, 0x4A4A, 0x5A5A, 0x6A6A, 0x7A7A,
            0x8A8A, 0x9A9A, 0xAAAA, 0xBABA, 0xCACA, 0xDADA, 0xEAEA, 0xFAFA,
        ]
        #expect(reserved == expected)
        #expect(!GREASE.isReserved(0x0A1A))
        #expect(!GREASE.isReserved(0x0303))
    }

    @Test("the SNI is kept as sent; normalizedServerName lowercases and drops one trailing dot",
          arguments: [("A.Test.", "a.test"), ("WWW.Example.COM", "www.example.com"), ("a.test", "a.test"), (".", nil)] as [(String, String?)])
    func normalizedName(_ sent: String, _ normalized: String?) {
        var parts = ClientHelloParts()
        parts.extensions[0].data = TLSTestBytes.serverName(sent)
        guard let hello = expectClientHello(parts.stream) else { return }
        #expect(hello.serverName == sent)
        #expect(hello.normalizedServerName == normalized)
    }
}

@Suite("ClientHelloParser: the session id bound")
struct ClientHelloSessionIDTests {
    @Test("a legacy_session_id of 33 bytes is malformed, in one sentence naming RFC 8446 §4.1.2")
    func sessionIDOver32() {
        var bytes = CapturedClientHellos.curlHTTP2
        // record header (5) + handshake header (4) + legacy_version (2) + random (32)
        #expect(bytes[43] == 32, "curl sends a 32-byte session id")
        bytes[43] = 33
        #expect(expectMalformed(ClientHelloParser.parse(bytes))
                == "The legacy_session_id is 33 bytes long, more than the 32 RFC 8446 §4.1.2 allows.")
    }
}
