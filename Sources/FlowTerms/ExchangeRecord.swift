/// One HTTP exchange inside a flow, as the proxy reads it on the data path (`ExchangeReader`) and
/// the flow database keeps it (one row of `exchanges`).
///
/// Only the metadata of what was said: header values, bodies and the query string are content
/// and live in the recorded turns when `content.keep` is on; without it `path` holds the path
/// alone and `queryRemoved` says a query was there. Times are µs since the Unix epoch; body sizes
/// are bytes.
///
/// A copy-on-write value: the fields live in one heap buffer shared by copies, so handing a
/// record on (to the flow sink, the writer's queue, its hold, its batch, its runs: 11 copies per
/// HTTP/1 exchange, each retaining eight strings) costs one reference count, and a write to a
/// shared record copies the fields first (as `Array` does). Measured in callgrind's h1 row
/// (3,000 requests, rows on): 33,020 record copies at 250 instructions each, plus their
/// destroys, before; see PERFORMANCE.md, "Exchange rows' cost (issue 16, i25-exch)".
///
/// `@unchecked Sendable`, safe: the buffer is the only non-Sendable part, and it is never written
/// while shared — every setter goes through `unique`, which copies it unless this record holds
/// the only reference (`isKnownUniquelyReferenced`, an atomic count) — so two threads never
/// write, or read and write, one buffer; its fields are all Sendable values.
public struct ExchangeRecord: @unchecked Sendable, Equatable {
    /// The stored fields, in one buffer (`ManagedBuffer`'s header, read and written through its
    /// address: its `header` property costs a dynamic exclusivity check per access, which made
    /// the h1 row 5 k instructions a request dearer than the copies this saves). Inlinable, so
    /// a field is one load in the modules that read records.
    @usableFromInline struct Fields: Equatable {
        @usableFromInline var id: Int64
        @usableFromInline var flowID: Int64
        @usableFromInline var sequence: Int
        @usableFromInline var streamID: Int64?
        @usableFromInline var httpVersion: String
        @usableFromInline var method: String
        @usableFromInline var scheme: String?
        @usableFromInline var authority: String?
        @usableFromInline var path: String
        @usableFromInline var queryRemoved: Bool
        @usableFromInline var status: Int?
        @usableFromInline var reason: String?
        @usableFromInline var requestBodyBytes: Int64
        @usableFromInline var requestWireBytes: Int64
        @usableFromInline var responseBodyBytes: Int64?
        @usableFromInline var responseWireBytes: Int64?
        @usableFromInline var contentType: String?
        @usableFromInline var contentEncoding: String?
        @usableFromInline var requestTime: Int64
        @usableFromInline var responseTime: Int64?
        @usableFromInline var endTime: Int64?
        @usableFromInline var requestEndTime: Int64?
        @usableFromInline var upgrade: Bool
        @usableFromInline var connect: Bool
        @usableFromInline var state: ExchangeState
    }

    /// The fields' buffer, shared by copies until one of them writes.
    @usableFromInline var buffer: ManagedBuffer<Fields, Void>

    @usableFromInline static func make(_ fields: Fields) -> ManagedBuffer<Fields, Void> {
        ManagedBuffer<Fields, Void>.create(minimumCapacity: 0) { _ in fields }
    }

    /// The fields for writing: copied first when another record shares them.
    @inlinable var unique: ManagedBuffer<Fields, Void> {
        mutating get {
            if !isKnownUniquelyReferenced(&buffer) { buffer = Self.make(buffer.withUnsafeMutablePointerToHeader { $0.pointee }) }
            return buffer
        }
    }

    /// Row id (`exchanges.id`); 0 until the writer has inserted the row, stable afterwards.
    @inlinable public var id: Int64 {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.id } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.id = newValue } }
    }
    /// The flow (`flows.id`) whose connection carried it.
    @inlinable public var flowID: Int64 {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.flowID } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.flowID = newValue } }
    }
    /// 1-based order of its request within the flow (the key with `flowID`).
    @inlinable public var sequence: Int {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.sequence } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.sequence = newValue } }
    }
    /// The HTTP/2 stream identifier; nil for HTTP/1.
    @inlinable public var streamID: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.streamID } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.streamID = newValue } }
    }
    /// `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`.
    @inlinable public var httpVersion: String {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.httpVersion } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.httpVersion = newValue } }
    }
    /// The request method as sent (`GET`, `CONNECT`, …).
    @inlinable public var method: String {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.method } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.method = newValue } }
    }
    /// `https` or `http` (HTTP/2's `:scheme`; for HTTP/1 from the connection), nil when unknown.
    @inlinable public var scheme: String? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.scheme } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.scheme = newValue } }
    }
    /// `host[:port]`: HTTP/2's `:authority`, else the absolute target's, else the Host header's.
    @inlinable public var authority: String? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.authority } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.authority = newValue } }
    }
    /// The request target's path (for CONNECT its authority-form, for `OPTIONS *` `*`); with
    /// its query only when content was kept.
    @inlinable public var path: String {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.path } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.path = newValue } }
    }
    /// True when the request had a query string that was not kept (no `content.keep`).
    @inlinable public var queryRemoved: Bool {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.queryRemoved } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.queryRemoved = newValue } }
    }
    /// The final status code (100…999); nil while no final response was read.
    @inlinable public var status: Int? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.status } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.status = newValue } }
    }
    /// The HTTP/1 reason phrase, if any (HTTP/2 has none).
    @inlinable public var reason: String? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.reason } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.reason = newValue } }
    }
    /// The request body's bytes after the transfer coding is removed (chunk framing excluded).
    @inlinable public var requestBodyBytes: Int64 {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.requestBodyBytes } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.requestBodyBytes = newValue } }
    }
    /// The request body's bytes as sent (HTTP/1 chunk framing included; HTTP/2 DATA payload
    /// without padding).
    @inlinable public var requestWireBytes: Int64 {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.requestWireBytes } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.requestWireBytes = newValue } }
    }
    /// The response body's bytes after the transfer coding is removed; nil without a response.
    @inlinable public var responseBodyBytes: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.responseBodyBytes } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.responseBodyBytes = newValue } }
    }
    /// The response body's bytes as sent; nil without a response.
    @inlinable public var responseWireBytes: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.responseWireBytes } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.responseWireBytes = newValue } }
    }
    /// The response's Content-Type, if it had one.
    @inlinable public var contentType: String? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.contentType } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.contentType = newValue } }
    }
    /// The response's Content-Encoding (`gzip`, `br`, …), if it had one.
    @inlinable public var contentEncoding: String? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.contentEncoding } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.contentEncoding = newValue } }
    }
    /// When the request's first byte was read.
    @inlinable public var requestTime: Int64 {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.requestTime } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.requestTime = newValue } }
    }
    /// When the response's first byte was read (an interim 1xx counts); nil before.
    @inlinable public var responseTime: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.responseTime } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.responseTime = newValue } }
    }
    /// When the exchange ended (its last byte, the reset, the end of the connection); nil while open.
    @inlinable public var endTime: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.endTime } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.endTime = newValue } }
    }
    /// When the request's last byte was read (the end of its head, or of its body: HTTP/1's
    /// framing, HTTP/2's END_STREAM); nil while it was still coming, or when it never ended
    /// (the server answered first and reset the stream). HAR's `send` (RFC-less, HAR 1.2
    /// `timings`) is the time from `requestTime` to it.
    @inlinable public var requestEndTime: Int64? {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.requestEndTime } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.requestEndTime = newValue } }
    }
    /// The response switched protocols (101, e.g. a WebSocket) or an HTTP/2 extended CONNECT
    /// carried `:protocol`.
    @inlinable public var upgrade: Bool {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.upgrade } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.upgrade = newValue } }
    }
    /// The request was a CONNECT.
    @inlinable public var connect: Bool {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.connect } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.connect = newValue } }
    }
    /// Open, complete or incomplete.
    @inlinable public var state: ExchangeState {
        get { buffer.withUnsafeMutablePointerToHeader { $0.pointee.state } }
        set { unique.withUnsafeMutablePointerToHeader { $0.pointee.state = newValue } }
    }

    /// Memberwise initialiser; optional facts default to unknown.
    public init(id: Int64 = 0, flowID: Int64, sequence: Int, streamID: Int64? = nil, httpVersion: String, method: String,
                scheme: String? = nil, authority: String? = nil, path: String, queryRemoved: Bool = false,
                status: Int? = nil, reason: String? = nil, requestBodyBytes: Int64 = 0, requestWireBytes: Int64 = 0,
                responseBodyBytes: Int64? = nil, responseWireBytes: Int64? = nil, contentType: String? = nil,
                contentEncoding: String? = nil, requestTime: Int64, responseTime: Int64? = nil, endTime: Int64? = nil,
                upgrade: Bool = false, connect: Bool = false, state: ExchangeState = .open, requestEndTime: Int64? = nil) {
        buffer = Self.make(Fields(
            id: id, flowID: flowID, sequence: sequence, streamID: streamID, httpVersion: httpVersion, method: method,
            scheme: scheme, authority: authority, path: path, queryRemoved: queryRemoved, status: status,
            reason: reason, requestBodyBytes: requestBodyBytes, requestWireBytes: requestWireBytes,
            responseBodyBytes: responseBodyBytes, responseWireBytes: responseWireBytes, contentType: contentType,
            contentEncoding: contentEncoding, requestTime: requestTime, responseTime: responseTime, endTime: endTime,
            requestEndTime: requestEndTime, upgrade: upgrade, connect: connect, state: state))
    }

    /// Field by field; records sharing their fields are equal at once.
    public static func == (lhs: ExchangeRecord, rhs: ExchangeRecord) -> Bool {
        lhs.buffer === rhs.buffer
            || lhs.buffer.withUnsafeMutablePointerToHeader { left in rhs.buffer.withUnsafeMutablePointerToHeader { left.pointee == $0.pointee } }
    }

    /// µs from the request's first byte to the exchange's end; nil while open.
    public var duration: Int64? { endTime.map { max(0, $0 - requestTime) } }
}
