import TVHome

/// One request as the routes see it, after the security decision allowed it.
public struct WebRequest: Sendable {
    public var method: String
    /// The path without the query (`/api/flows/12`).
    public var path: String
    /// The query's parameters, first value of each name (`token` removed).
    public var query: [String: String]
    /// The body of a POST (at most `WebServer.maximumBody` bytes).
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
    }
}

/// A stream of a response's body, read on the connection's own thread: `next` blocks until it
/// has bytes to send, and returns nil when the stream ends (the client went away or the source
/// stopped). Server-Sent Events are such a stream.
public protocol WebStream: AnyObject, Sendable {
    func next() -> [UInt8]?
}

/// One answer.
public struct WebResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Headers beyond the standard ones (`WebResponse.standardHeaders`).
    public var headers: [(String, String)]
    /// When set, the body is this stream instead of `body`.
    public var stream: WebStream?

    public init(status: Int, contentType: String, body: [UInt8], headers: [(String, String)] = [], stream: WebStream? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
        self.stream = stream
    }

    /// A JSON body (already serialized).
    public static func json(_ text: String, status: Int = 200) -> WebResponse {
        WebResponse(status: status, contentType: "application/json; charset=utf-8", body: Array(text.utf8))
    }

    /// An error as JSON: `{"error": SENTENCE}`; the pages show the sentence.
    public static func error(_ sentence: String, status: Int) -> WebResponse {
        json(JSONValue.object([("error", .string(sentence))]).serialized(), status: status)
    }

    /// An error a browser shows as a page: the sentence alone, HTML-escaped (it may quote a
    /// Host header), no script, no link (a trial's visit without the token got bare JSON).
    public static func errorPage(_ sentence: String, status: Int) -> WebResponse {
        let text = sentence.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        let page = "<!doctype html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>tv web</title>\n<p>\(text)</p>\n</html>\n"
        return WebResponse(status: status, contentType: "text/html; charset=utf-8", body: Array(page.utf8))
    }

    /// Headers on every answer: the Content-Security-Policy allows only this server's own
    /// scripts, styles, images and connections (no inline script, no other origin, no framing);
    /// no referrer is sent (the printed URL's token never leaves in one), nothing is sniffed,
    /// nothing is cached.
    public static let standardHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]
}
