/// Byte builders for TLS test inputs: record framing, handshake headers and hellos assembled
/// from parts, so tests can re-frame captured messages and break one length at a time.
enum TLSTestBytes {
    static func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func u24(_ value: Int) -> [UInt8] { [UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    /// A vector with a one-byte length prefix.
    static func vector8(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count)] + bytes }
    /// A vector with a two-byte length prefix.
    static func vector16(_ bytes: [UInt8]) -> [UInt8] { u16(bytes.count) + bytes }

    /// One TLS plaintext record (RFC 8446 §5.1).
    static func record(type: UInt8 = 22, version: UInt16 = 0x0301, _ payload: [UInt8]) -> [UInt8] {
        [type] + u16(Int(version)) + u16(payload.count) + payload
    }

    /// Frames `message` into handshake records whose payloads have the given sizes in turn (the
    /// last size repeats until the message is used up).
    static func records(_ message: [UInt8], fragmentSizes: [Int], version: UInt16 = 0x0301) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        var index = 0
        while offset < message.count {
            let size = min(fragmentSizes[min(index, fragmentSizes.count - 1)], message.count - offset)
            out += record(version: version, Array(message[offset ..< offset + size]))
            offset += size
            index += 1
        }
        return out
    }

    /// The first handshake message carried by a run of records: record headers stripped, payloads
    /// joined, cut to the length in the handshake header.
    static func firstHandshakeMessage(_ stream: [UInt8]) -> [UInt8] {
        var payload: [UInt8] = []
        var offset = 0
        while offset + 5 <= stream.count {
            let length = Int(stream[offset + 3]) << 8 | Int(stream[offset + 4])
            if stream[offset] == 22 { payload += stream[offset + 5 ..< offset + 5 + length] }
            offset += 5 + length
        }
        let length = Int(payload[1]) << 16 | Int(payload[2]) << 8 | Int(payload[3])
        return Array(payload[0 ..< 4 + length])
    }

    /// A handshake message: type, 24-bit length, body (RFC 8446 §4).
    static func handshake(type: UInt8, _ body: [UInt8]) -> [UInt8] { [type] + u24(body.count) + body }

    // Extension bodies.

    static func serverName(_ host: String) -> [UInt8] {
        vector16([0] + vector16(Array(host.utf8)))
    }

    static func alpn(_ protocols: [String]) -> [UInt8] {
        vector16(protocols.flatMap { vector8(Array($0.utf8)) })
    }

    static func supportedVersions(_ versions: [UInt16]) -> [UInt8] {
        vector8(versions.flatMap { u16(Int($0)) })
    }

    static func keyShare(_ groups: [(UInt16, Int)]) -> [UInt8] {
        vector16(groups.flatMap { u16(Int($0.0)) + vector16([UInt8](repeating: 0x42, count: $0.1)) })
    }
}

/// One extension: type and body.
struct TestExtension: Sendable {
    var type: UInt16
    var data: [UInt8]

    var encoded: [UInt8] { TLSTestBytes.u16(Int(type)) + TLSTestBytes.vector16(data) }
}

/// A ClientHello assembled from parts (RFC 8446 §4.1.2); `rawTail` replaces everything after the
/// compression methods when a test needs a broken extensions block.
struct ClientHelloParts: Sendable {
    var legacyVersion: UInt16 = 0x0303
    var random = [UInt8](repeating: 0x11, count: 32)
    var sessionID = [UInt8](repeating: 0x22, count: 32)
    var cipherSuites: [UInt16] = [0x1301, 0x1302]
    var compressionMethods: [UInt8] = [0]
    var extensions: [TestExtension] = [
        TestExtension(type: 0, data: TLSTestBytes.serverName("a.test")),
        TestExtension(type: 43, data: TLSTestBytes.supportedVersions([0x0304, 0x0303])),
        TestExtension(type: 51, data: TLSTestBytes.keyShare([(0x001D, 32)])),
    ]
    var omitExtensionsBlock = false
    var rawTail: [UInt8]?

    init() {}

    /// Splits a real ClientHello handshake message back into parts.
    init(message: [UInt8]) {
        var offset = 4
        func take(_ count: Int) -> [UInt8] {
            defer { offset += count }
            return Array(message[offset ..< offset + count])
        }
        func length(_ size: Int) -> Int { take(size).reduce(0) { $0 << 8 | Int($1) } }
        legacyVersion = UInt16(length(2))
        random = take(32)
        sessionID = take(length(1))
        let suites = take(length(2))
        cipherSuites = stride(from: 0, to: suites.count, by: 2).map { UInt16(suites[$0]) << 8 | UInt16(suites[$0 + 1]) }
        compressionMethods = take(length(1))
        extensions = []
        let end = offset + length(2)
        while offset < end {
            let type = UInt16(length(2))
            extensions.append(TestExtension(type: type, data: take(length(2))))
        }
    }

    var body: [UInt8] {
        var out = TLSTestBytes.u16(Int(legacyVersion)) + random + TLSTestBytes.vector8(sessionID)
        out += TLSTestBytes.vector16(cipherSuites.flatMap { TLSTestBytes.u16(Int($0)) })
        out += TLSTestBytes.vector8(compressionMethods)
        if let rawTail { return out + rawTail }
        if !omitExtensionsBlock { out += TLSTestBytes.vector16(extensions.flatMap(\.encoded)) }
        return out
    }

    var message: [UInt8] { TLSTestBytes.handshake(type: 1, body) }

    /// The message in one record (when it fits) or in 16,384-byte records.
    var stream: [UInt8] { TLSTestBytes.records(message, fragmentSizes: [16_384]) }
}

/// A ServerHello assembled from parts (RFC 8446 §4.1.3).
struct ServerHelloParts: Sendable {
    var legacyVersion: UInt16 = 0x0303
    var random = [UInt8](repeating: 0x33, count: 32)
    var sessionID = [UInt8](repeating: 0x22, count: 32)
    var cipherSuite: UInt16 = 0x1301
    var compressionMethod: UInt8 = 0
    var extensions: [TestExtension] = [
        TestExtension(type: 43, data: TLSTestBytes.u16(0x0304)),
        TestExtension(type: 51, data: TLSTestBytes.u16(0x001D) + TLSTestBytes.vector16([UInt8](repeating: 7, count: 32))),
    ]
    var omitExtensionsBlock = false

    var body: [UInt8] {
        var out = TLSTestBytes.u16(Int(legacyVersion)) + random + TLSTestBytes.vector8(sessionID)
        out += TLSTestBytes.u16(Int(cipherSuite)) + [compressionMethod]
        if !omitExtensionsBlock { out += TLSTestBytes.vector16(extensions.flatMap(\.encoded)) }
        return out
    }

    var message: [UInt8] { TLSTestBytes.handshake(type: 2, body) }
    var stream: [UInt8] { TLSTestBytes.records(message, fragmentSizes: [16_384], version: 0x0303) }
}
