import Wire

/// One HTTP request or response read from the turns.
public struct HTTPMessage: Sendable, Equatable {
    /// The start line as sent (HTTP/1: `GET / HTTP/1.1`, `HTTP/1.1 200 OK`), or made from the
    /// pseudo-headers for HTTP/2 (`GET https://a.test/ HTTP/2`, `HTTP/2 200`).
    public var startLine: String
    /// Header fields in order (HTTP/2: pseudo-headers included, first).
    public var headers: [HTTPHeader]
    /// Trailer fields (chunked trailers, HTTP/2 trailing HEADERS), if any.
    public var trailers: [HTTPHeader]
    /// The body.
    public var body: HTTPBody
    /// The turn the message starts in.
    public var turn: Int
    /// When that turn started: µs since the flow's first byte.
    public var offset: Int64
    /// The last turn holding bytes of the message.
    public var lastTurn: Int
    /// When that turn started, µs since the flow's first byte.
    public var lastOffset: Int64
    /// Bytes of the head (start line and headers with their line ends; HTTP/2: the header block).
    public var headSize: Int
    /// HTTP/2: header fields the reader left out of the message's header block, past
    /// `HeaderListLimits` (`sentence` says so); nil when it kept them all.
    public var headersLeftOut: HeaderListCut?
    /// The same of its trailer blocks, added up.
    public var trailersLeftOut: HeaderListCut?

    public init(startLine: String, headers: [HTTPHeader], trailers: [HTTPHeader] = [], body: HTTPBody,
                turn: Int, offset: Int64, lastTurn: Int? = nil, lastOffset: Int64? = nil, headSize: Int = -1) {
        self.startLine = startLine
        self.headers = headers
        self.trailers = trailers
        self.body = body
        self.turn = turn
        self.offset = offset
        self.lastTurn = lastTurn ?? turn
        self.lastOffset = lastOffset ?? offset
        self.headSize = headSize
    }
}
