import COpenSSL

/// Whether a 101 Switching Protocols answers the upgrade its request asked for: after a 101 tv
/// reads the connection no more as HTTP (the rest is WebSocket or another protocol, relayed
/// unread), so a 101 nobody asked for would let a server carry bytes past tv's reading that the
/// client then reads as HTTP (a hostile-input trial). Pure.
///
/// Follows RFC 9110 §7.8 (a server that sends 101 MUST name the protocols in Upgrade, and MUST
/// NOT switch to one the client's Upgrade did not name; §15.2.2) and RFC 6455 §4.1 (a WebSocket
/// client fails the connection when Sec-WebSocket-Accept is not base64(SHA-1(key + the GUID)),
/// §1.3). Protocol names are compared without ASCII case (RFC 6455 §4.1 reads "websocket" so).
public enum SwitchingProtocols {
    /// Why a 101 is refused (`ConnectionFailure.switchRefused`), said in `sentence`.
    public enum Refusal: Equatable, Sendable {
        /// The request had no Upgrade field (RFC 9110 §15.2.2).
        case notAsked
        /// The 101 names no protocol (no Upgrade field, RFC 9110 §7.8).
        case noProtocolNamed(asked: String)
        /// The 101 names a protocol the request did not (`chosen`, as sent; `asked`, the request's).
        case notOffered(chosen: String, asked: String)
        /// A WebSocket 101 whose Sec-WebSocket-Accept (`sent`, nil when absent) is not the one the
        /// client's key calls for (`expected`, RFC 6455 §4.1).
        case wrongWebSocketAccept(sent: String?, expected: String)

        /// One sentence, for the flow's error after "the server's 101 Switching Protocols was refused: ".
        public var sentence: String {
            switch self {
            case .notAsked:
                return "the request asked for no upgrade, and RFC 9110 §15.2.2 forbids a server to switch to a protocol the client did not ask for"
            case .noProtocolNamed(let asked):
                return "it names no protocol (no Upgrade field, which RFC 9110 §7.8 requires) where the client asked for '\(asked)'"
            case let .notOffered(chosen, asked):
                return "it switches to '\(chosen)', which the client did not ask for ('\(asked)'; RFC 9110 §15.2.2)"
            case let .wrongWebSocketAccept(sent, expected):
                let what = sent.map { "Sec-WebSocket-Accept '\($0)'" } ?? "no Sec-WebSocket-Accept"
                return "it carries \(what) where the client's key calls for '\(expected)', a handshake RFC 6455 §4.1 has the client fail"
            }
        }
    }

    /// The GUID RFC 6455 §1.3 appends to the key.
    public static let webSocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether a 101 answers its request: nil when it does, else why not. `requestUpgrade`,
    /// `webSocketKey`: the request's Upgrade (lines joined) and Sec-WebSocket-Key; `upgrade`,
    /// `webSocketAccept`: the 101's. A WebSocket switch is checked against the key only when the
    /// request carried one (without one no WebSocket client is there to be fooled).
    public static func check(requestUpgrade: String?, webSocketKey: String?, upgrade: String?, webSocketAccept: String?) -> Refusal? {
        let asked = protocols(requestUpgrade)
        guard let requestUpgrade, !asked.isEmpty else { return .notAsked }
        let chosen = protocols(upgrade)
        guard let upgrade, !chosen.isEmpty else { return .noProtocolNamed(asked: requestUpgrade) }
        guard chosen.allSatisfy(asked.contains) else { return .notOffered(chosen: upgrade, asked: requestUpgrade) }
        if chosen.contains(where: { $0 == "websocket" || $0.hasPrefix("websocket/") }), let webSocketKey {
            let expected = Self.webSocketAccept(key: webSocketKey)
            guard webSocketAccept == expected else { return .wrongWebSocketAccept(sent: webSocketAccept, expected: expected) }
        }
        return nil
    }

    /// An Upgrade value's protocols (RFC 9110 §7.8: `protocol-name ["/" protocol-version]`, a
    /// comma-separated list), lowercased, empty elements left out.
    static func protocols(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// base64(SHA-1(`key` + the GUID)), the Sec-WebSocket-Accept a server answers `key` with
    /// (RFC 6455 §4.2.2 step 5.4), through OpenSSL.
    public static func webSocketAccept(key: String) -> String {
        let input = Array((key + webSocketGUID).utf8)
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        var length: UInt32 = 0
        // EVP_Digest with SHA-1 fails only when OpenSSL cannot allocate: the digest stays zero
        // then, and no server's accept matches it (the 101 is refused, never let through).
        _ = input.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_sha1(), nil) }
        // Base64 of 20 bytes: 28 characters and a NUL.
        var encoded = [UInt8](repeating: 0, count: 32)
        let written = EVP_EncodeBlock(&encoded, digest, Int32(digest.count))
        return String(decoding: encoded.prefix(Int(max(0, written))), as: UTF8.self)
    }
}

private extension Substring {
    /// Without the spaces and tabs (OWS, RFC 9110 §5.6.3) at either end.
    func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
