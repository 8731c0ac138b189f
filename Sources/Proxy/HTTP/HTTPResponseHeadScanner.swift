import Wire

/// Reads an HTTP/1 response head as the bytes pass by (with `HTTP1HeadParser`, strict: the proxy
/// relays responses as sent, so an obs-fold it cannot unfold in them is refused with 502, RFC
/// 9112 §5.2, as on the relay; unfolded, a trial's `X-Fold` reached the client folded), for what
/// the plain-HTTP forwarder needs from it: the status, how the body is delimited (RFC 9112 §6.3)
/// and whether the server closes afterwards (§9.3).
struct HTTPResponseHeadScanner {
    struct Head: Equatable {
        var status: Int
        /// `.none` also when Content-Length is 0: the response is complete with its head.
        var framing: HTTPBodyFraming
        var closes: Bool
        /// A 101's Upgrade (field lines joined by ", ") and Sec-WebSocket-Accept, which
        /// `SwitchingProtocols` checks against the request; nil for other statuses.
        var upgrade: String? = nil
        var webSocketAccept: String? = nil
    }

    enum Result: Equatable {
        case needMore
        /// The head ended `consumed` bytes into the last input.
        case head(Head, consumed: Int)
        case malformed(String)
    }

    private var parser = HTTP1HeadParser(.response, leniency: .strict)
    /// Bytes fed to `parser` before the last input.
    private var fed = 0

    /// Whether no byte of the next head has been fed yet (nothing of it passed on).
    var isAtStart: Bool { fed == 0 }

    /// Why a response with both Content-Length and Transfer-Encoding is refused.
    static let lengthAndCoding = HTTP1ResponseSummary.lengthAndCoding

    /// `requestMethod`: HEAD responses have no body (RFC 9110 §9.3.2).
    mutating func feed(_ input: UnsafeRawBufferPointer, requestMethod: String) -> Result {
        let before = fed
        fed += input.count
        switch parser.feed(input) {
        case .needMoreData:
            return .needMore
        case .malformed(let reason):
            return .malformed(reason)
        case let .tooLong(limit, inStartLine):
            return .malformed(HTTP1HeadParser.tooLongSentence(.response, limit, inStartLine: inStartLine))
        case .head(let head):
            parser = HTTP1HeadParser(.response, leniency: .strict)
            fed = 0
            switch head.bodyFraming(leniency: .lenient, answering: requestMethod) {
            case .failure(let error):
                return .malformed(error.reason)
            case .success(let framing):
                // Framing that came from Transfer-Encoding: with a Content-Length too, the two
                // parties after tv could read the body's end differently. RFC 9112 §6.3 rule 3:
                // an intermediary forwarding it MUST remove Content-Length first; tv refuses it
                // instead, as mitmproxy does (its validate_inbound_headers, on by default).
                if framing == .chunked || framing == .untilClose, head.value(forHeader: "Transfer-Encoding") != nil,
                   head.value(forHeader: "Content-Length") != nil {
                    return .malformed(Self.lengthAndCoding)
                }
                var read = Head(status: head.status ?? 0, framing: framing == .contentLength(0) ? .none : framing, closes: !head.keepsAlive)
                if read.status == 101 {
                    let upgrades = head.values(forHeader: "Upgrade")
                    read.upgrade = upgrades.isEmpty ? nil : upgrades.joined(separator: ", ")
                    read.webSocketAccept = head.value(forHeader: "Sec-WebSocket-Accept")
                }
                return .head(read, consumed: head.byteCount - before)
            }
        }
    }
}
