/// Reads the application_layer_protocol_negotiation extension body (RFC 7301 §3.1):
/// `ProtocolName protocol_name_list<2..2^16-1>`, each `opaque ProtocolName<1..2^8-1>`.
enum ALPNList {
    /// Returns the protocol identifiers in order. With `exactlyOne` (a ServerHello, RFC 7301 §3.1:
    /// "MUST contain exactly one ProtocolName") any other count is refused.
    static func read(_ data: inout ByteCursor, exactlyOne: Bool) throws(WireFormatError) -> [[UInt8]] {
        var list = try data.readVector16("the ALPN protocol_name_list")
        guard data.isAtEnd else {
            throw WireFormatError("The ALPN protocol_name_list is followed by \(WireFormatError.count(data.remaining, "extra byte")) inside its extension.")
        }
        guard !list.isAtEnd else {
            throw WireFormatError("The ALPN protocol_name_list is empty, which RFC 7301 §3.1 forbids.")
        }
        var protocols: [[UInt8]] = []
        while !list.isAtEnd {
            let name = try list.readVector8("an ALPN protocol name")
            guard name.remaining > 0 else {
                throw WireFormatError("An ALPN protocol name is empty, which RFC 7301 §3.1 forbids.")
            }
            protocols.append(name.remainingBytes)
        }
        if exactlyOne, protocols.count != 1 {
            throw WireFormatError("The server's ALPN extension names \(protocols.count) protocols, but RFC 7301 §3.1 requires exactly one.")
        }
        return protocols
    }
}
