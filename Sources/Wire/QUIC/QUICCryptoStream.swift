/// The client's Initial-level CRYPTO stream put back together (RFC 9000 §19.6, RFC 9001 §4):
/// frames arrive in any order, split anywhere, across packets and datagrams, possibly repeated;
/// the stream starts with the ClientHello as a bare handshake message (no TLS record layer).
///
/// Bounded: the stream is read no further than `maximumBytes`; a ClientHello declaring more, or
/// a frame reaching past the bound before the ClientHello's length is known, ends the reading.
public struct QUICCryptoStream: Sendable {
    /// What the frames given so far amount to.
    public enum Progress: Sendable, Hashable {
        /// Bytes of the ClientHello are still missing.
        case needMore
        /// The whole ClientHello: its 4-byte handshake header and body.
        case clientHello([UInt8])
        /// The stream cannot hold a ClientHello within the bound; one sentence.
        case malformed(String)
    }

    /// The default bound, 64 KiB: far above the ~1,800 bytes of a post-quantum ClientHello.
    public static let defaultMaximumBytes = 65_536

    /// How far into the stream tv reads, in bytes (the bound on memory for one read).
    public let maximumBytes: Int
    /// The stream's bytes from offset 0, as far as any frame reached (gaps are zeros).
    private var buffer: [UInt8] = []
    /// The byte ranges filled so far, sorted and merged.
    private var filled: [Range<Int>] = []
    private var result: Progress = .needMore

    /// An empty stream read up to `maximumBytes`.
    public init(maximumBytes: Int = QUICCryptoStream.defaultMaximumBytes) {
        self.maximumBytes = maximumBytes
    }

    /// Bytes held: the furthest offset any frame reached.
    public var bufferedBytes: Int { buffer.count }

    /// Adds one frame; the answer is final once it is not `.needMore`.
    public mutating func add(_ frame: QUICCryptoFrame) -> Progress {
        guard case .needMore = result else { return result }
        let start = frame.offset
        let end = frame.offset + UInt64(frame.data.count)
        // Past a known message end: the rest of the stream (after a HelloRetryRequest) is not read.
        if let need = declaredLength, start >= UInt64(need) { return result }
        guard end <= UInt64(maximumBytes) else {
            result = .malformed("The client's CRYPTO stream reaches offset \(end), past the \(maximumBytes) bytes tv reads of it (RFC 9000 §19.6).")
            return result
        }
        guard !frame.data.isEmpty else { return result }
        let range = Int(start)..<Int(end)
        if buffer.count < range.upperBound { buffer += repeatElement(0, count: range.upperBound - buffer.count) }
        buffer.replaceSubrange(range, with: frame.data)
        insert(range)
        return evaluate()
    }

    /// 4 + the ClientHello's uint24 length, once the header is in.
    private var declaredLength: Int? {
        guard let first = filled.first, first.lowerBound == 0, first.upperBound >= 4 else { return nil }
        return 4 + (Int(buffer[1]) << 16 | Int(buffer[2]) << 8 | Int(buffer[3]))
    }

    private mutating func evaluate() -> Progress {
        guard let first = filled.first, first.lowerBound == 0, first.upperBound >= 1 else { return result }
        guard buffer[0] == 1 else {
            result = .malformed("The client's CRYPTO stream starts with handshake message type \(buffer[0]), not a ClientHello (1) (RFC 9001 §4.1.3).")
            return result
        }
        guard let need = declaredLength else { return result }
        guard need <= maximumBytes else {
            result = .malformed("The ClientHello declares \(need) bytes, more than the \(maximumBytes) tv reads (RFC 8446 §4).")
            return result
        }
        if first.upperBound >= need { result = .clientHello(Array(buffer[0..<need])) }
        return result
    }

    /// Adds `range` to `filled`, merging what touches or overlaps it.
    private mutating func insert(_ range: Range<Int>) {
        var merged = range
        var kept: [Range<Int>] = []
        for r in filled {
            if r.upperBound < merged.lowerBound || r.lowerBound > merged.upperBound {
                kept.append(r)
            } else {
                merged = min(r.lowerBound, merged.lowerBound)..<max(r.upperBound, merged.upperBound)
            }
        }
        kept.append(merged)
        filled = kept.sorted { $0.lowerBound < $1.lowerBound }
    }
}
