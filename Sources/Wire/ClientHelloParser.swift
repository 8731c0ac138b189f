/// Incremental reader of the first flight of a TLS client: feed it the bytes of a new TCP
/// connection as they arrive, in any split, until it answers something other than
/// `.needMoreData`.
///
/// The ClientHello may span several TLS records and several reads (RFC 8446 §5.1 allows a
/// handshake message to be fragmented across records). The parser decides `.notTLS` from the
/// first two bytes (content type 22, major version 3), buffers only the handshake message (at
/// most `maxMessageBytes`, header included) and never the caller's bytes after it. The caller
/// keeps its own copy of the stream to forward.
///
/// ```swift
/// var parser = ClientHelloParser()
/// switch parser.feed(bytesFromSocket) {
/// case .needMoreData: break                      // read more, feed again
/// case .clientHello(let hello): route(hello.normalizedServerName)
/// case .notTLS: passThrough()
/// case .malformed(let reason): refuse(reason)
/// }
/// ```
public struct ClientHelloParser: Sendable, IncrementalParser {
    /// What the bytes fed so far amount to. Every answer but `.needMoreData` is final.
    public enum Result: Sendable, Hashable {
        /// The ClientHello is not complete yet; feed more bytes.
        case needMoreData
        /// The first record is not a TLS handshake record (content type 22, major version 3);
        /// decided from the first byte or two.
        case notTLS
        /// The bytes break RFC 8446 §5.1 / §4.1.2 or the buffering bound; one sentence.
        case malformed(reason: String)
        /// The complete, well-formed ClientHello.
        case clientHello(ClientHello)
    }

    /// Default bound on the buffered handshake message: 64 KiB (65,536 bytes).
    public static let defaultMaxMessageBytes = 65_536

    private var reassembler: HandshakeReassembler
    private var result: Result = .needMoreData

    /// Creates a parser that refuses (`.malformed`) a ClientHello longer than `maxMessageBytes`
    /// bytes (4-byte handshake header included).
    ///
    /// Set `afterHelloRetryRequest` to read the client's *second* ClientHello: a
    /// change_cipher_spec record (`14 03 03 00 01 01`) before it is then dropped, as RFC 8446 §5
    /// and Appendix D.4 require, instead of making the stream `.notTLS`.
    public init(maxMessageBytes: Int = ClientHelloParser.defaultMaxMessageBytes, afterHelloRetryRequest: Bool = false) {
        reassembler = HandshakeReassembler(
            expectedType: 1, messageName: "ClientHello", maxMessageBytes: maxMessageBytes, acceptsAlert: false,
            skipsChangeCipherSpec: afterHelloRetryRequest)
    }

    /// Bytes of the stream read so far, record headers included. Once the answer is
    /// `.clientHello`, the offset just past the ClientHello's last byte.
    public var bytesConsumed: Int { reassembler.bytesConsumed }

    /// Number of TLS records read so far (including any dropped change_cipher_spec record).
    public var recordCount: Int { reassembler.recordCount }


    /// Feeds the next bytes of the stream (any length, including zero) and returns the answer.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Result {
        guard case .needMoreData = result else { return result }
        switch reassembler.feed(bytes) {
        case .needMoreData: return .needMoreData
        case .notTLS: result = .notTLS
        case .malformed(let reason): result = .malformed(reason: reason)
        case .alert: result = .notTLS // not produced: the reassembler is told not to accept alerts
        case .complete:
            do {
                result = .clientHello(try reassembler.message.withUnsafeBufferPointer { buffer throws(WireFormatError) in
                    try ClientHello(handshakeMessage: buffer)
                })
            } catch {
                result = .malformed(reason: error.reason)
            }
        }
        return result
    }

    /// Feeds the next bytes of the stream (any contiguous collection: `[UInt8]`, `ArraySlice`,

    /// Parses a buffer that should hold a whole ClientHello; `.needMoreData` means it is truncated.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maxMessageBytes: Int = defaultMaxMessageBytes) -> Result
    where Bytes.Element == UInt8 {
        var parser = ClientHelloParser(maxMessageBytes: maxMessageBytes)
        return parser.feed(bytes)
    }
}
