/// A request target read for an exchange row (RFC 9112 §3.2, RFC 9113 §8.3.1): its scheme and
/// authority when the target carries them, its path, and the query string, which is content:
/// it is kept only when content is kept, and its absence is said (`queryRemoved`). A fragment
/// (never sent by a conforming client) goes with the query. User information in an absolute
/// target (`user:password@`) is never kept.
struct ExchangeTarget: Equatable {
    /// The absolute-form target's scheme, lowercased.
    var scheme: String?
    /// The absolute-form target's host[:port], or the authority-form target (CONNECT).
    var authority: String?
    /// The path (`/`, `/a/b`, `*`, or the authority-form target itself), with its query only
    /// when `keepsQuery`.
    var path: String
    /// A query (or fragment) was there and was left out.
    var queryRemoved: Bool
}

extension ExchangeTarget {
    /// Splits `target` as sent; `keepsQuery` keeps the query in `path` (content is kept).
    init(_ target: String, keepsQuery: Bool) {
        var rest = Substring(target)
        scheme = nil
        authority = nil
        if !rest.hasPrefix("/"), rest != "*", let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            let afterScheme = rest[separator.upperBound...]
            let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
            var host = afterScheme[..<authorityEnd]
            if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
            authority = String(host)
            rest = afterScheme[authorityEnd...]
            if rest.isEmpty || rest.first != "/" { rest = "/" + rest }
        } else if !rest.hasPrefix("/"), rest != "*" {
            authority = target
        }
        if let queryStart = rest.firstIndex(where: { $0 == "?" || $0 == "#" }), !keepsQuery {
            path = String(rest[..<queryStart])
            queryRemoved = true
        } else {
            path = String(rest)
            queryRemoved = false
        }
    }
}
