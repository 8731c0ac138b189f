/// One direction of DNS over TCP cut into its messages (RFC 1035 §4.2.2, RFC 7766 §8): each
/// message is sent as a 2-byte length and then the message, and the stream's bursts (a relay's
/// reads, a capture's segments) fall anywhere: a burst may end inside the length or the message,
/// or hold several messages (a stub resolver's A and AAAA queries, pipelined answers).
///
/// Bounded: a message is at most 65,535 bytes (its length is 16 bits), and only a message begun
/// in an earlier burst is kept (its bytes so far, at most 65,537 with the length); whole messages
/// inside a burst are handed on in place, without a copy. Nothing is allocated for a burst made
/// of whole messages.
public struct DNSTCPFraming: Sendable {
    /// The largest message: the 16-bit length's limit.
    public static let maximumMessage = 65_535

    /// A message begun in an earlier burst: its bytes so far, the length first; empty when the
    /// last burst ended on a message's end.
    private var partial: [UInt8] = []
    /// Whole messages handed on.
    public private(set) var messages: UInt64 = 0

    public init() {}

    /// Bytes of a message begun and not yet finished (what the stream's end would drop).
    public var bytesPending: Int { partial.count }

    /// Feeds one burst; `body` gets each whole message it completes or holds (without its length),
    /// in order, as a view valid only during the call.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var i = 0
        if !partial.isEmpty {
            while partial.count < 2 && i < chunk.count {
                partial.append(chunk[i])
                i += 1
            }
            guard partial.count >= 2 else { return }
            let whole = 2 + (Int(partial[0]) << 8 | Int(partial[1]))
            if partial.count == 2 { partial.reserveCapacity(whole) }
            let take = min(whole - partial.count, chunk.count - i)
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[i..<(i + take)]))
            i += take
            guard partial.count == whole else { return }
            messages &+= 1
            partial.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[2...])) }
            // Released, not kept: a connection holds nothing between messages.
            partial = []
        }
        while chunk.count - i >= 2 {
            let length = Int(chunk[i]) << 8 | Int(chunk[i + 1])
            guard chunk.count - i - 2 >= length else { break }
            messages &+= 1
            body(UnsafeRawBufferPointer(rebasing: chunk[(i + 2)..<(i + 2 + length)]))
            i += 2 + length
        }
        if i < chunk.count {
            if chunk.count - i >= 2 { partial.reserveCapacity(2 + (Int(chunk[i]) << 8 | Int(chunk[i + 1]))) }
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[i...]))
        }
    }
}
