/// ALPN on the two legs (RFC 7301): the upstream leg offers exactly the client's list; the client
/// leg then selects exactly what the server chose, or nothing when the server chose nothing
/// (mitmproxy#7359, teamclaude PR #40: never give the client a protocol the server did not agree).
public enum ALPNSelection {
    /// The client's protocol list in wire form (each ID prefixed by its 1-byte length), for
    /// `SSL_set_alpn_protos`. IDs that are empty or longer than 255 bytes are dropped.
    public static func wireList(_ protocols: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for id in protocols where !id.isEmpty && id.count <= 255 {
            out.append(UInt8(id.count))
            out.append(contentsOf: id)
        }
        return out
    }

    /// Where, in the client's offered list (wire form), the server's choice sits: the range of
    /// the protocol's bytes, to hand back to OpenSSL; nil means "select nothing" (no ALPN
    /// extension in our ServerHello), which is right when the server chose nothing and which a
    /// client that offered other protocols can still proceed with.
    public static func select(serverChose chosen: [UInt8]?, clientOffered offered: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let chosen, !chosen.isEmpty else { return nil }
        var i = 0
        while i < offered.count {
            let length = Int(offered[i])
            let start = i + 1
            let end = start + length
            guard length > 0, end <= offered.count else { return nil }
            if length == chosen.count {
                var equal = true
                for k in 0..<length where offered[start + k] != chosen[k] { equal = false; break }
                if equal { return start..<end }
            }
            i = end
        }
        return nil
    }

    /// Convenience for tests and plans: the same on arrays.
    public static func select(serverChose chosen: [UInt8]?, clientOffered offered: [UInt8]) -> Range<Int>? {
        offered.withUnsafeBufferPointer { select(serverChose: chosen, clientOffered: $0) }
    }
}
