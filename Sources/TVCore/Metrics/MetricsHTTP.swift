import Wire

/// The answer of `tv run --metrics`'s HTTP endpoint to one request head (RFC 9110, RFC 9112): a
/// pure decision, the bytes to send, then the connection is closed.
///
/// `GET /metrics` (and `/`) answers 200 with the exposition; `HEAD` the same head without the
/// body; any other method 405 with `Allow: GET, HEAD`; any other path 404; a head tv will not
/// read 400, 414 or 431 (`HTTPRequestHeadParser.Result.refusal`). Every answer carries `Connection: close` and its `Content-Length`.
public enum MetricsHTTP {
    /// The most bytes of a request head read (a scraper's is a few hundred).
    public static let maxHeadBytes = 8_192

    /// The response to the bytes read so far; nil while the head is not whole.
    /// - Parameter exposition: makes the body (called only for a 200).
    public static func response(to bytes: [UInt8], exposition: () -> String) -> [UInt8]? {
        let read = HTTPRequestHeadParser.parse(bytes, maxHeadBytes: maxHeadBytes)
        if let (status, reason) = read.refusal {
            // The parser's reason, with its RFC section (a head over the limit said "not HTTP/1").
            return answer(status, body: (reason.hasSuffix(".") ? reason : reason + ".") + "\n")
        }
        switch read {
        case .needMoreData, .malformed, .tooLong:
            return nil // refusals are answered above
        case .head(let head):
            guard head.method == "GET" || head.method == "HEAD" else {
                return answer(405, body: "Only GET and HEAD are served here.\n", extra: [("Allow", "GET, HEAD")])
            }
            let path = head.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard path == "/metrics" || path == "/" else {
                return answer(404, body: "Metrics are at /metrics.\n")
            }
            return answer(200, body: exposition(), contentType: MetricsExposition.contentType, withBody: head.method == "GET")
        }
    }

    static func answer(_ code: Int, body: String, contentType: String = "text/plain; charset=utf-8",
                       extra: [(String, String)] = [], withBody: Bool = true) -> [UInt8] {
        let bytes = Array(body.utf8)
        var head = "HTTP/1.1 \(code) \(HTTPReasonPhrase.of(code))\r\nContent-Type: \(contentType)\r\nContent-Length: \(bytes.count)\r\n"
        for (name, value) in extra { head += "\(name): \(value)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (withBody ? bytes : [])
    }
}
