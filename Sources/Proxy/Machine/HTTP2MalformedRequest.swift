/// An HTTP/2 request whose header block breaks a rule of RFC 9113 §8.2–§8.3 (RFC 7540's §8.1.2),
/// which makes it malformed: a server must not process it and an intermediary must not forward
/// it (§8.1.1). tv forwards it as sent: refusing one stream of a connection it relays would take
/// frames of tv's own (RST_STREAM to the client, the stream's HEADERS, CONTINUATION and DATA taken
/// out of what goes to the server, with the server's HPACK table kept in step for the streams
/// after it), which tv does not make. So the flow says which request broke which rule, once (the
/// first such request), and the row shows what tv read of it (`HTTP2RequestFields`: the first of
/// each repeated pseudo-header). A hostile-input trial's `:path /dup-a` then `:path /dup-hidden-b`
/// went to a lax server with nothing said, its row naming the one the server did not use.
public struct HTTP2MalformedRequest: Equatable, Sendable {
    /// The rule a request broke (RFC 9113).
    public enum Rule: Equatable, Sendable {
        /// §8.3: a pseudo-header field appears twice (its name).
        case repeatedPseudoHeader(String)
        /// §8.3: a pseudo-header field after a regular field (its name).
        case pseudoHeaderAfterRegular(String)
        /// §8.3: a pseudo-header field no request has (`:status`, `:foo`; the name is the
        /// client's and is not repeated).
        case undefinedPseudoHeader
        /// §8.3.1: `:method`, `:scheme` or `:path` is missing (its name).
        case missingPseudoHeader(String)
        /// §8.3.1: `:path` is neither an absolute path (with its query) nor `*` for OPTIONS.
        case invalidPath
        /// §8.2.1: a field name with an uppercase letter, a space, a colon or a control byte.
        case invalidFieldName
        /// §8.2.1: a field value with NUL, CR or LF, or a space or tab at either end.
        case invalidFieldValue
        /// §8.2.2: a connection-specific field (its name: `connection`, `transfer-encoding`,
        /// …, or `te` other than `trailers`).
        case connectionSpecificField(String)
        /// §8.3.1: a Host field that names another authority than `:authority` (a server
        /// SHOULD treat it as malformed; the row names the `:authority`).
        case hostDiffersFromAuthority

        /// What the request did, after "its request …".
        var phrase: String {
            switch self {
            case .repeatedPseudoHeader(let name): return "repeats \(name) (RFC 9113 §8.3)"
            case .pseudoHeaderAfterRegular(let name): return "puts \(name) after a regular field (RFC 9113 §8.3)"
            case .undefinedPseudoHeader: return "carries a pseudo-header field requests do not have (RFC 9113 §8.3)"
            case .missingPseudoHeader(let name): return "lacks \(name) (RFC 9113 §8.3.1)"
            case .invalidPath: return "has a :path that is neither an absolute path nor * (RFC 9113 §8.3.1)"
            case .invalidFieldName: return "has a field name with an uppercase letter, a space, a colon or a control byte (RFC 9113 §8.2.1)"
            case .invalidFieldValue: return "has a field value with NUL, CR or LF in it, or a space or tab at an end (RFC 9113 §8.2.1)"
            case .connectionSpecificField(let name): return "carries the connection-specific field \(name) (RFC 9113 §8.2.2)"
            case .hostDiffersFromAuthority: return "has a Host field naming another authority than its :authority (RFC 9113 §8.3.1)"
            }
        }
    }

    /// The stream the request opened.
    public var streamID: UInt32
    /// The first rule its header block broke.
    public var rule: Rule

    /// "the client's request on stream 1 was malformed: it repeats :path (RFC 9113 §8.3); tv
    /// passed it on as sent, …", inside the flow's error sentence.
    public var phrase: String {
        var out = "the client's request on stream \(streamID) was malformed: it \(rule.phrase); tv passed it on as sent"
            + " (it does not take a stream out of an HTTP/2 connection), and the server may have read it otherwise than its row"
        if case .repeatedPseudoHeader = rule { out += ", which names the first of each repeated field" }
        if case .hostDiffersFromAuthority = rule { out += ", which names the :authority" }
        return out
    }
}
