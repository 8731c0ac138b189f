/// Reassembles the first TLS handshake message of a connection from TLS plaintext records
/// (RFC 8446 §5.1), fed in whatever pieces the socket delivers.
///
/// Shared by `ClientHelloParser` and `ServerHelloParser`. It strips the 5-byte record headers
/// (content type, legacy_record_version, 16-bit length), concatenates handshake payloads across
/// records, reads the 4-byte handshake header (type, 24-bit length) and stops as soon as the
/// whole message is buffered. It never buffers more than `maxMessageBytes`: a longer declared
/// message is refused before its bytes arrive. Bytes after the message are not kept.
struct HandshakeReassembler: Sendable {
    /// What the bytes fed so far amount to.
    enum Step: Sendable, Equatable {
        /// The message is not complete yet.
        case needMoreData
        /// The first record is not a TLS handshake record (content type 22, major version 3).
        case notTLS
        /// The records or the handshake header break RFC 8446 §5.1 / §4; `reason` is one sentence.
        case malformed(reason: String)
        /// The first record is a plaintext alert (content type 21, RFC 8446 §6); only when
        /// `acceptsAlert` is set.
        case alert(level: UInt8, description: UInt8)
        /// The whole handshake message (header and body) is in `message`.
        case complete
    }

    /// TLS record content types (RFC 8446 §5.1).
    static let handshakeContentType: UInt8 = 22
    static let alertContentType: UInt8 = 21
    static let changeCipherSpecContentType: UInt8 = 20
    /// The largest plaintext record fragment, 2^14 bytes (RFC 8446 §5.1).
    static let maxRecordFragment = 16_384

    /// Handshake type wanted first: 1 client_hello, 2 server_hello (RFC 8446 §4).
    let expectedType: UInt8
    /// Name used in reasons, e.g. "ClientHello".
    let messageName: String
    /// Upper bound on the whole message, header included, in bytes.
    let maxMessageBytes: Int
    /// Whether a first record of content type alert is reported as `.alert` rather than `.notTLS`.
    let acceptsAlert: Bool
    /// Whether plaintext change_cipher_spec records (type 20, the single byte 0x01) before the
    /// message are dropped, as RFC 8446 §5 requires once the first ClientHello has been sent
    /// (middlebox compatibility, Appendix D.4), rather than answered `.notTLS`.
    let skipsChangeCipherSpec: Bool

    /// The handshake bytes gathered so far (message header first); exactly the message once complete.
    private(set) var message: [UInt8] = []
    /// Bytes of the stream consumed, record headers included; once complete, the offset just past
    /// the message's last byte.
    private(set) var bytesConsumed = 0
    /// Number of records (headers) seen so far.
    private(set) var recordCount = 0

    private var headerFill = 0
    private var contentType: UInt8 = 0
    private var recordLength = 0
    private var recordRemaining = 0
    private var messageLength: Int?
    private var alertLevel: UInt8?
    private var outcome: Step?

    init(expectedType: UInt8, messageName: String, maxMessageBytes: Int, acceptsAlert: Bool, skipsChangeCipherSpec: Bool) {
        self.expectedType = expectedType
        self.messageName = messageName
        self.maxMessageBytes = maxMessageBytes
        self.acceptsAlert = acceptsAlert
        self.skipsChangeCipherSpec = skipsChangeCipherSpec
    }

    /// Consumes `input` and says where the message stands. Once the answer is anything but
    /// `.needMoreData` it is final and later input is ignored.
    mutating func feed(_ input: UnsafeBufferPointer<UInt8>) -> Step {
        if let outcome { return outcome }
        var index = 0
        while index < input.count {
            if recordRemaining == 0 {
                if let step = readHeaderByte(input[index]) { return finish(step) }
                index += 1
                bytesConsumed += 1
                continue
            }
            let available = min(recordRemaining, input.count - index)
            if contentType == Self.changeCipherSpecContentType {
                guard input[index] == 1 else {
                    return finish(.malformed(reason: "A change_cipher_spec record carries 0x\(String(input[index], radix: 16)) instead of 0x01 (RFC 8446 §5)."))
                }
                index += 1
                bytesConsumed += 1
                recordRemaining -= 1
                continue
            }
            if contentType == Self.alertContentType {
                let byte = input[index]
                index += 1
                bytesConsumed += 1
                recordRemaining -= 1
                if let level = alertLevel { return finish(.alert(level: level, description: byte)) }
                alertLevel = byte
                continue
            }
            let wanted = (messageLength.map { $0 + 4 } ?? 4) - message.count
            let take = min(available, wanted)
            message.append(contentsOf: UnsafeBufferPointer(rebasing: input[index ..< index + take]))
            index += take
            bytesConsumed += take
            recordRemaining -= take
            if messageLength == nil, message.count == 4 {
                if let step = readHandshakeHeader() { return finish(step) }
            }
            if let length = messageLength, message.count == length + 4 { return finish(.complete) }
        }
        return .needMoreData
    }

    private mutating func finish(_ step: Step) -> Step {
        outcome = step
        return step
    }

    /// Handles one byte of a 5-byte record header; returns a final step when the header is refused.
    private mutating func readHeaderByte(_ byte: UInt8) -> Step? {
        // Before any handshake byte: the stream may still turn out not to be TLS.
        let first = message.isEmpty
        switch headerFill {
        case 0:
            contentType = byte
            let droppable = byte == Self.changeCipherSpecContentType && skipsChangeCipherSpec && first
            if byte != Self.handshakeContentType, !droppable {
                if first {
                    if !(acceptsAlert && byte == Self.alertContentType) { return .notTLS }
                } else {
                    return .malformed(reason: "A record of content type \(byte) arrived before the \(messageName) was complete; only handshake records (22) may carry it.")
                }
            }
        case 1:
            if byte != 3 {
                if first { return .notTLS }
                return .malformed(reason: "A record header carries major version \(byte), but TLS records always carry 3.")
            }
        case 2:
            break // legacy_record_version minor: any value is accepted (RFC 8446 §5.1 says ignore it).
        case 3:
            recordLength = Int(byte) << 8
        default:
            recordLength |= Int(byte)
            headerFill = 0
            recordCount += 1
            if contentType == Self.changeCipherSpecContentType {
                guard recordLength == 1 else {
                    return .malformed(reason: "A change_cipher_spec record is \(recordLength) bytes long, but RFC 8446 §5 allows only the single byte 0x01.")
                }
            } else if contentType == Self.alertContentType {
                guard recordLength == 2 else {
                    return .malformed(reason: "The first record is an alert of \(recordLength) bytes, but a plaintext alert is exactly 2 bytes (RFC 8446 §6).")
                }
            } else if recordLength == 0 {
                return .malformed(reason: "A handshake record is empty, which RFC 8446 §5.1 forbids.")
            } else if recordLength > Self.maxRecordFragment {
                return .malformed(reason: "A record declares \(recordLength) bytes, more than the 16,384 RFC 8446 §5.1 allows.")
            }
            recordRemaining = recordLength
            return nil
        }
        headerFill += 1
        return nil
    }

    /// Checks the 4-byte handshake header (RFC 8446 §4) once it is buffered.
    private mutating func readHandshakeHeader() -> Step? {
        let type = message[0]
        guard type == expectedType else {
            return .malformed(reason: "The first handshake message is of type \(type), not \(messageName) (\(expectedType)).")
        }
        let length = Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
        guard length + 4 <= maxMessageBytes else {
            return .malformed(reason: "The \(messageName) declares \(length + 4) bytes, more than the \(maxMessageBytes) this parser buffers.")
        }
        messageLength = length
        message.reserveCapacity(length + 4)
        return nil
    }
}
