/// A request and what answered it: HTTP/1 pairs them by order on the connection, HTTP/2 by
/// stream (RFC 9113 §8.1).
public struct HTTPExchange: Sendable, Equatable {
    /// The HTTP/2 stream id, nil for HTTP/1.
    public var streamID: UInt32?
    /// The request, nil when the response came without one being recorded.
    public var request: HTTPMessage?
    /// Interim (1xx) responses, in order.
    public var interim: [HTTPMessage]
    /// The final response, nil when none was recorded.
    public var response: HTTPMessage?
    /// For HTTP/2: the stream was pushed by the server (PUSH_PROMISE) and this is its promise.
    public var pushed: Bool
    /// For HTTP/2: the RST_STREAM error code that ended the stream, if any.
    public var resetBy: String?
    /// What followed a 101 that switched the connection to WebSocket, read as its messages; nil
    /// for any other exchange.
    public var webSocket: WebSocketConversation?

    public init(streamID: UInt32? = nil, request: HTTPMessage? = nil, interim: [HTTPMessage] = [],
                response: HTTPMessage? = nil, pushed: Bool = false, resetBy: String? = nil) {
        self.streamID = streamID
        self.request = request
        self.interim = interim
        self.response = response
        self.pushed = pushed
        self.resetBy = resetBy
    }
}
