/// The request-target of an HTTP/1 request line, classified by form (RFC 9112 §3.2).
public enum HTTPRequestTarget: Sendable, Hashable {
    /// origin-form `absolute-path [ "?" query ]` (§3.2.1), e.g. "/path?q=1": a request to the
    /// server named by the Host header.
    case origin(String)
    /// absolute-form (§3.2.2), e.g. `http://a.test:8080/path?q=1`, sent to a forward proxy.
    /// `scheme` is lowercased ("http" or "https"), `destination` has the port defaulted by scheme
    /// (80 or 443), `originForm` is the path and query to forward ("/" when absent).
    case absolute(scheme: String, destination: HostPort, originForm: String)
    /// authority-form `uri-host ":" port` (§3.2.3), only for CONNECT, e.g. `a.test:443` or `[::1]:443`.
    case authority(HostPort)
    /// asterisk-form `*` (§3.2.4), only for OPTIONS.
    case asterisk
}

extension HTTPRequestTarget {
    /// A request target as a sentence quotes it: without its query or fragment (content, which
    /// the history keeps only with the content: "…?…") and with any userinfo masked ("***@"),
    /// so a client's token or password never reaches a flow's error (nor the shared store).
    /// Works on any target text, malformed ones too (`*?x` → `*?…`, `alice:pw@host:443` →
    /// `***@host:443`). Pure.
    public static func quoted(_ target: String) -> String {
        var text = Substring(target)
        var cut = false
        if let mark = text.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            text = text[..<mark]
            cut = true
        }
        var authorityStart = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix("://") {
                authorityStart = text.index(index, offsetBy: 3)
                break
            }
            index = text.index(after: index)
        }
        let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
        if let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") {
            text = text[..<authorityStart] + "***" + text[at...]
        }
        return String(text) + (cut ? "?…" : "")
    }
}
