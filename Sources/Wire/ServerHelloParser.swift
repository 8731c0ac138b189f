/// Incremental reader of a TLS server's first handshake message: feed it the bytes the server
/// sends back, in any split, until it answers something other than `.needMoreData`.
///
/// Same shape as `ClientHelloParser`. The ServerHello may span records (RFC 8446 §5.1); what
/// follows it (Certificate, ChangeCipherSpec, encrypted records) is not buffered, and
/// `bytesConsumed` says where it starts. A server that refuses the ClientHello with a plaintext
/// alert record (RFC 8446 §6) gets `.alert`. Change_cipher_spec records (`14 03 03 00 01 01`)
/// before the ServerHello are dropped (RFC 8446 §5): after a HelloRetryRequest, feed a new parser
/// from `bytesConsumed` on and it skips the compatibility record that follows the retry request.
public struct ServerHelloParser: Sendable, IncrementalParser {
    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The ServerHello is not complete yet; feed more bytes.
        case needMoreData
        /// The first record is not a TLS handshake, alert or change_cipher_spec record (content
        /// type 22, 21 or 20, major version 3).
        case notTLS
        /// The bytes break RFC 8446 §5.1 / §4.1.3 or the buffering bound; one sentence.
        case malformed(reason: String)
        /// The server answered with a plaintext alert record (RFC 8446 §6): `level` 1 warning or
        /// 2 fatal, `description` e.g. 40 handshake_failure, 70 protocol_version, 112 unrecognized_name.
        case alert(level: UInt8, description: UInt8)
        /// The complete, well-formed ServerHello or HelloRetryRequest.
        case serverHello(ServerHello)
    }

    /// Default bound on the buffered handshake message: 64 KiB (65,536 bytes).
    public static let defaultMaxMessageBytes = 65_536

    private var reassembler: HandshakeReassembler
    private var result: Result = .needMoreData

    /// Creates a parser that refuses (`.malformed`) a ServerHello longer than `maxMessageBytes`
    /// bytes (4-byte handshake header included).
    public init(maxMessageBytes: Int = ServerHelloParser.defaultMaxMessageBytes) {
        reassembler = HandshakeReassembler(
            expectedType: 2, messageName: "ServerHello", maxMessageBytes: maxMessageBytes, acceptsAlert: true,
            skipsChangeCipherSpec: true)
    }

    /// Bytes of the stream read so far, record headers included. Once the answer is final, the
    /// offset just past the ServerHello (or alert): the rest of the server's flight starts there,
    /// possibly inside the same record.
    public var bytesConsumed: Int { reassembler.bytesConsumed }


    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Result {
        guard case .needMoreData = result else { return result }
        switch reassembler.feed(bytes) {
        case .needMoreData: return .needMoreData
        case .notTLS: result = .notTLS
        case .malformed(let reason): result = .malformed(reason: reason)
        case .alert(let level, let description): result = .alert(level: level, description: description)
        case .complete:
            do {
                result = .serverHello(try reassembler.message.withUnsafeBufferPointer { buffer throws(WireFormatError) in
                    try ServerHello(handshakeMessage: buffer)
                })
            } catch {
                result = .malformed(reason: error.reason)
            }
        }
        return result
    }

    /// Feeds the next bytes of the stream (any contiguous collection: `[UInt8]`, `ArraySlice`,

    /// Parses a buffer that should start with a whole ServerHello; `.needMoreData` means it is
    /// truncated.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maxMessageBytes: Int = defaultMaxMessageBytes) -> Result
    where Bytes.Element == UInt8 {
        var parser = ServerHelloParser(maxMessageBytes: maxMessageBytes)
        return parser.feed(bytes)
    }
}
