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
    /// Splits `target` as sent; `keepsQuery` keeps the query in `path` (content is kept). The
    /// split is made on the UTF-8 bytes at ASCII delimiters (RFC 3986's), and only the parts kept
    /// become strings.
    init(_ target: String, keepsQuery: Bool) {
        var text = target
        self = text.withUTF8 { ExchangeTarget(bytes: $0, keepsQuery: keepsQuery) }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, keepsQuery: Bool) {
        let slash = UInt8(ascii: "/"), question = UInt8(ascii: "?"), hash = UInt8(ascii: "#")
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        scheme = nil
        authority = nil
        var rest = 0 ..< bytes.count
        var prefixSlash = false
        let isStar = bytes.count == 1 && bytes[0] == UInt8(ascii: "*")
        if bytes.first != slash, !isStar, let separator = ExchangeTarget.schemeSeparator(bytes) {
            scheme = text(0 ..< separator).lowercased()
            let afterScheme = separator + 3
            var authorityEnd = afterScheme
            while authorityEnd < bytes.count, bytes[authorityEnd] != slash, bytes[authorityEnd] != question, bytes[authorityEnd] != hash {
                authorityEnd += 1
            }
            var hostStart = afterScheme
            if let at = (afterScheme ..< authorityEnd).last(where: { bytes[$0] == UInt8(ascii: "@") }) { hostStart = at + 1 }
            authority = text(hostStart ..< authorityEnd)
            rest = authorityEnd ..< bytes.count
            prefixSlash = rest.isEmpty || bytes[rest.lowerBound] != slash
        } else if bytes.first != slash, !isStar {
            authority = text(0 ..< bytes.count)
        }
        let queryStart = rest.first { bytes[$0] == question || bytes[$0] == hash }
        let pathEnd = keepsQuery ? rest.upperBound : (queryStart ?? rest.upperBound)
        queryRemoved = !keepsQuery && queryStart != nil
        path = prefixSlash ? "/" + text(rest.lowerBound ..< pathEnd) : text(rest.lowerBound ..< pathEnd)
    }

    /// Where `://` first occurs (the scheme ends there), if it does.
    private static func schemeSeparator(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 3 else { return nil }
        for index in 0 ... bytes.count - 3
        where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/") && bytes[index + 2] == UInt8(ascii: "/") {
            return index
        }
        return nil
    }
}
