/// One TCP option (RFC 9293 §3.2), decoded where tv names it.
public enum TCPOption: Sendable, Equatable, CustomStringConvertible {
    /// Kind 0: End of Option List.
    case endOfList
    /// Kind 1: No-Operation (padding).
    case noOperation
    /// Kind 2: Maximum Segment Size, in bytes (RFC 9293 §3.7.1).
    case maximumSegmentSize(UInt16)
    /// Kind 3: Window Scale shift count (RFC 7323 §2).
    case windowScale(UInt8)
    /// Kind 4: SACK permitted (RFC 2018 §2).
    case sackPermitted
    /// Kind 5: SACK blocks, left and right edges (RFC 2018 §3).
    case sack([SACKBlock])
    /// Kind 8: Timestamps, TSval and TSecr (RFC 7323 §3).
    case timestamps(value: UInt32, echoReply: UInt32)
    /// Any other kind, with its length byte's value (0 when it had none).
    case other(kind: UInt8, length: Int)
    /// An option whose length byte is wrong or runs past the header: reading stopped there.
    case malformed(kind: UInt8)
    /// An option the capture's snap length cut: its bytes end where the kept bytes do (a trial
    /// read a SYN's cut timestamps as "malformed length"). Reading stopped there.
    case cut(kind: UInt8)

    /// The left and right edges of one SACK block.
    public struct SACKBlock: Sendable, Equatable {
        public var left: UInt32
        public var right: UInt32
        public init(left: UInt32, right: UInt32) {
            self.left = left
            self.right = right
        }
    }

    /// Short words in the order tcpdump and Wireshark use: `mss 1460`, `wscale 7`, `sackOK`,
    /// `TS val 1 ecr 0`, `nop`, `eol`, `sack 1 {1:2}`, `kind 30 (length 4)`.
    public var description: String {
        switch self {
        case .endOfList: return "eol"
        case .noOperation: return "nop"
        case .maximumSegmentSize(let v): return "mss \(v)"
        case .windowScale(let v): return "wscale \(v)"
        case .sackPermitted: return "sackOK"
        case .sack(let blocks): return "sack \(blocks.count) " + blocks.map { "{\($0.left):\($0.right)}" }.joined(separator: " ")
        case .timestamps(let value, let echo): return "TS val \(value) ecr \(echo)"
        case .other(let kind, let length): return "kind \(kind) (length \(length))"
        case .malformed(let kind): return "kind \(kind) (malformed length)"
        case .cut(let kind): return "kind \(kind) (cut short by the snap length)"
        }
    }
}

/// Reads the options area of a TCP header (the bytes between the fixed 20 and Data Offset × 4).
public enum TCPOptionReader {
    /// Every option in `bytes`, in order; stops after End of Option List or at a malformed
    /// length (which it reports as `.malformed`). `truncated`: the header's options area goes on
    /// past `bytes` (the capture kept fewer bytes), so an option running past them is `.cut`.
    public static func read(_ bytes: [UInt8], truncated: Bool = false) -> [TCPOption] {
        var out: [TCPOption] = []
        var i = 0
        while i < bytes.count {
            let kind = bytes[i]
            switch kind {
            case 0: out.append(.endOfList); return out
            case 1: out.append(.noOperation); i += 1; continue
            default: break
            }
            guard i + 1 < bytes.count else { out.append(truncated ? .cut(kind: kind) : .malformed(kind: kind)); return out }
            let length = Int(bytes[i + 1])
            guard length >= 2 else { out.append(.malformed(kind: kind)); return out }
            guard i + length <= bytes.count else { out.append(truncated ? .cut(kind: kind) : .malformed(kind: kind)); return out }
            let body = Array(bytes[(i + 2)..<(i + length)])
            func u32(_ j: Int) -> UInt32 { body[j..<(j + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
            switch (kind, length) {
            case (2, 4): out.append(.maximumSegmentSize(UInt16(body[0]) << 8 | UInt16(body[1])))
            case (3, 3): out.append(.windowScale(body[0]))
            case (4, 2): out.append(.sackPermitted)
            case (5, _) where (length - 2) % 8 == 0 && length > 2:
                out.append(.sack(stride(from: 0, to: body.count, by: 8).map { TCPOption.SACKBlock(left: u32($0), right: u32($0 + 4)) }))
            case (8, 10): out.append(.timestamps(value: u32(0), echoReply: u32(4)))
            case (2, _), (3, _), (4, _), (5, _), (8, _): out.append(.malformed(kind: kind)); return out
            default: out.append(.other(kind: kind, length: length))
            }
            i += length
        }
        return out
    }
}
