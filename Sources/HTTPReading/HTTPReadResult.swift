/// What `HTTPReader.read` made of a flow's turns.
public enum HTTPReadResult: Sendable, Equatable {
    /// The turns hold HTTP/1.x or HTTP/2 (possibly with problems part way; see `problems`).
    case conversation(HTTPConversation)
    /// The turns cannot be read as HTTP at all; `reason` says why, and the plain view applies.
    case notHTTP(reason: String)
}
