import Foundation

/// permessage-deflate as the server accepted it in its 101's `Sec-WebSocket-Extensions`
/// (RFC 7692 §7.1): the server's answer is what both sides use, so only it is read.
public struct PerMessageDeflate: Sendable, Equatable {
    /// The server starts each message with a fresh compressor (§7.1.1.1), so a server message
    /// inflates without the ones before it.
    public var serverNoContextTakeover = false
    /// The same for the client's messages (§7.1.1.2).
    public var clientNoContextTakeover = false
    /// The server's LZ77 window, 8–15 bits (§7.1.2.1); nil: 15.
    public var serverMaxWindowBits: Int?
    /// The client's LZ77 window, 8–15 bits (§7.1.2.2); nil: 15.
    public var clientMaxWindowBits: Int?

    public init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false,
                serverMaxWindowBits: Int? = nil, clientMaxWindowBits: Int? = nil) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// Whether `direction`'s sender resets its compressor per message.
    func noContextTakeover(fromClient: Bool) -> Bool {
        fromClient ? clientNoContextTakeover : serverNoContextTakeover
    }

    /// permessage-deflate from the 101's `Sec-WebSocket-Extensions` values, nil when the server
    /// did not accept it. The header is a comma-separated list of extensions, each a name and
    /// `;`-separated parameters, a value plain or quoted (RFC 6455 §9.1); the first
    /// permessage-deflate is the one in use (RFC 7692 §5). Parameters it does not know are left
    /// alone: reading does not depend on them.
    public static func accepted(_ values: [String]) -> PerMessageDeflate? {
        for value in values {
            for offer in value.split(separator: ",") {
                let parts = offer.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                guard let name = parts.first, name.lowercased() == "permessage-deflate" else { continue }
                var deflate = PerMessageDeflate()
                for parameter in parts.dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")) }
                    let bits = pair.count == 2 ? Int(pair[1]) : nil
                    switch pair[0].lowercased() {
                    case "server_no_context_takeover": deflate.serverNoContextTakeover = true
                    case "client_no_context_takeover": deflate.clientNoContextTakeover = true
                    case "server_max_window_bits": deflate.serverMaxWindowBits = bits
                    case "client_max_window_bits": deflate.clientMaxWindowBits = bits
                    default: break
                    }
                }
                return deflate
            }
        }
        return nil
    }
}
