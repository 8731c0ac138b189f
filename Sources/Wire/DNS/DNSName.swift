/// Domain names in DNS messages (RFC 1035 §3.1, compression §4.1.4), the one reader of them: the
/// tunnel's `DNSMessageParser` (UDP answers, `tv packet`) and `DNSOverTCPReader` (a relay's
/// DNS over TCP) both read names here.
public enum DNSName {
    /// Why a name cannot be read.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// Reads a possibly compressed name at `offset` in the message `b`, advancing `offset` past
    /// the name's own bytes. Lowercased, without the trailing dot (the root is "").
    ///
    /// Strict where a lie would matter: a name past 255 bytes, a label past 63 (its length byte's
    /// top bits are then a type, 01 and 10 undefined), pointers that point forward or loop.
    public static func read(_ b: UnsafeRawBufferPointer, _ offset: inout Int) throws(Failure) -> String {
        var labels: [String] = []
        var cursor = offset
        var jumped = false
        var wireLength = 0
        var jumps = 0
        while true {
            guard cursor < b.count else { throw Failure(reason: "a name runs past the end") }
            let length = Int(b[cursor])
            switch length & 0xc0 {
            case 0xc0:
                guard cursor + 1 < b.count else { throw Failure(reason: "a compression pointer runs past the end") }
                let target = (length & 0x3f) << 8 | Int(b[cursor + 1])
                // Pointers must go backwards (to an earlier occurrence), which also rules out loops.
                guard target < cursor, jumps < 64 else { throw Failure(reason: "a compression pointer points forward or loops") }
                jumps += 1
                if !jumped { offset = cursor + 2; jumped = true }
                cursor = target
            case 0x00:
                if length == 0 {
                    if !jumped { offset = cursor + 1 }
                    return labels.joined(separator: ".")
                }
                guard cursor + 1 + length <= b.count else { throw Failure(reason: "a label runs past the end") }
                wireLength += length + 1
                guard wireLength <= 255 else { throw Failure(reason: "a name is longer than 255 bytes") }
                let label = String(decoding: UnsafeRawBufferPointer(rebasing: b[(cursor + 1)..<(cursor + 1 + length)]), as: UTF8.self)
                labels.append(label.lowercased())
                cursor += 1 + length
            default:
                throw Failure(reason: "a label type \(length >> 6) is not defined")
            }
        }
    }
}
