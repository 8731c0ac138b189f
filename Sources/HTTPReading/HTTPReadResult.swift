/// What `HTTPReader.read` made of a flow's turns.
public enum HTTPReadResult: Sendable, Equatable {
    /// The turns hold HTTP/1.x or HTTP/2 (possibly with problems part way; see `problems`).
    case conversation(HTTPConversation)
    /// The turns cannot be read as HTTP at all; `reason` says why, and the plain view applies.
    case notHTTP(reason: String)
    /// The start of what was kept was deleted and what is left cannot be read from the middle:
    /// HTTP/2 (`http2`: its frames are there) has lost its header compression state, anything
    /// else has no request kept whole to start at. The plain view applies.
    case startDeleted(DeletedStart, http2: Bool)

    /// Why the turns are not read as HTTP, one sentence; nil for a conversation.
    public var notHTTPReason: String? {
        switch self {
        case .conversation: return nil
        case let .notHTTP(reason): return reason
        case let .startDeleted(deleted, http2): return deleted.unreadable(http2: http2)
        }
    }
}
