/// One HTTP exchange inside a flow, as the proxy reads it on the data path (`ExchangeReader`) and
/// the flow database keeps it (one row of `exchanges`).
///
/// Only the metadata of what was said: header values, bodies and the query string are content
/// and live in the recorded turns when `content.keep` is on; without it `path` holds the path
/// alone and `queryRemoved` says a query was there. Times are µs since the Unix epoch; body sizes
/// are bytes.
public struct ExchangeRecord: Sendable, Equatable {
    /// Row id (`exchanges.id`); 0 until the writer has inserted the row, stable afterwards.
    public var id: Int64
    /// The flow (`flows.id`) whose connection carried it.
    public var flowID: Int64
    /// 1-based order of its request within the flow (the key with `flowID`).
    public var sequence: Int
    /// The HTTP/2 stream identifier; nil for HTTP/1.
    public var streamID: Int64?
    /// `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`.
    public var httpVersion: String
    /// The request method as sent (`GET`, `CONNECT`, …).
    public var method: String
    /// `https` or `http` (HTTP/2's `:scheme`; for HTTP/1 from the connection), nil when unknown.
    public var scheme: String?
    /// `host[:port]`: HTTP/2's `:authority`, else the absolute target's, else the Host header's.
    public var authority: String?
    /// The request target's path (for CONNECT its authority-form, for `OPTIONS *` `*`); with
    /// its query only when content was kept.
    public var path: String
    /// True when the request had a query string that was not kept (no `content.keep`).
    public var queryRemoved: Bool
    /// The final status code (100…999); nil while no final response was read.
    public var status: Int?
    /// The HTTP/1 reason phrase, if any (HTTP/2 has none).
    public var reason: String?
    /// The request body's bytes after the transfer coding is removed (chunk framing excluded).
    public var requestBodyBytes: Int64
    /// The request body's bytes as sent (HTTP/1 chunk framing included; HTTP/2 DATA payload
    /// without padding).
    public var requestWireBytes: Int64
    /// The response body's bytes after the transfer coding is removed; nil without a response.
    public var responseBodyBytes: Int64?
    /// The response body's bytes as sent; nil without a response.
    public var responseWireBytes: Int64?
    /// The response's Content-Type, if it had one.
    public var contentType: String?
    /// The response's Content-Encoding (`gzip`, `br`, …), if it had one.
    public var contentEncoding: String?
    /// When the request's first byte was read.
    public var requestTime: Int64
    /// When the response's first byte was read (an interim 1xx counts); nil before.
    public var responseTime: Int64?
    /// When the exchange ended (its last byte, the reset, the end of the connection); nil while open.
    public var endTime: Int64?
    /// The response switched protocols (101, e.g. a WebSocket) or an HTTP/2 extended CONNECT
    /// carried `:protocol`.
    public var upgrade: Bool
    /// The request was a CONNECT.
    public var connect: Bool
    /// Open, complete or incomplete.
    public var state: ExchangeState

    /// Memberwise initialiser; optional facts default to unknown.
    public init(id: Int64 = 0, flowID: Int64, sequence: Int, streamID: Int64? = nil, httpVersion: String, method: String,
                scheme: String? = nil, authority: String? = nil, path: String, queryRemoved: Bool = false,
                status: Int? = nil, reason: String? = nil, requestBodyBytes: Int64 = 0, requestWireBytes: Int64 = 0,
                responseBodyBytes: Int64? = nil, responseWireBytes: Int64? = nil, contentType: String? = nil,
                contentEncoding: String? = nil, requestTime: Int64, responseTime: Int64? = nil, endTime: Int64? = nil,
                upgrade: Bool = false, connect: Bool = false, state: ExchangeState = .open) {
        self.id = id
        self.flowID = flowID
        self.sequence = sequence
        self.streamID = streamID
        self.httpVersion = httpVersion
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.queryRemoved = queryRemoved
        self.status = status
        self.reason = reason
        self.requestBodyBytes = requestBodyBytes
        self.requestWireBytes = requestWireBytes
        self.responseBodyBytes = responseBodyBytes
        self.responseWireBytes = responseWireBytes
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.endTime = endTime
        self.upgrade = upgrade
        self.connect = connect
        self.state = state
    }

    /// µs from the request's first byte to the exchange's end; nil while open.
    public var duration: Int64? { endTime.map { max(0, $0 - requestTime) } }
}
