/// The operators of a filter expression: mitmproxy's codes (docs.mitmproxy.org, "Filter
/// expressions"), so habits carry over, limited to the ones a recorded flow or exchange can
/// answer. `rawValue` is the code after `~`.
public enum FilterOperator: String, CaseIterable, Sendable, Hashable {
    case all
    case body = "b"
    case requestBody = "bq"
    case responseBody = "bs"
    case statusCode = "c"
    case domain = "d"
    case destination = "dst"
    case error = "e"
    case header = "h"
    case requestHeader = "hq"
    case responseHeader = "hs"
    case method = "m"
    case request = "q"
    case response = "s"
    case source = "src"
    case contentType = "t"
    case requestContentType = "tq"
    case responseContentType = "ts"
    case tcp
    case udp
    case url = "u"

    /// What follows the operator: nothing, a regex, or a whole number.
    public enum Argument: Sendable, Equatable {
        case none
        case regex
        case number
    }

    /// The argument this operator takes.
    public var argument: Argument {
        switch self {
        case .all, .error, .request, .response, .tcp, .udp: return .none
        case .statusCode: return .number
        default: return .regex
        }
    }

    /// The fields a regex or number operator looks in (any one matching is a match); empty for
    /// the operators without an argument, which ask a `FilterFlag`.
    public var fields: [FilterField] {
        switch self {
        case .body: return [.requestBody, .responseBody]
        case .requestBody: return [.requestBody]
        case .responseBody: return [.responseBody]
        case .statusCode: return [.statusCode]
        case .domain: return [.domain]
        case .destination: return [.destination]
        case .header: return [.requestHeaders, .responseHeaders]
        case .requestHeader: return [.requestHeaders]
        case .responseHeader: return [.responseHeaders]
        case .method: return [.method]
        case .source: return [.source]
        case .contentType: return [.requestContentType, .responseContentType]
        case .requestContentType: return [.requestContentType]
        case .responseContentType: return [.responseContentType]
        case .url: return [.url]
        case .all, .error, .request, .response, .tcp, .udp: return []
        }
    }

    /// Whether the operator reads kept content (headers, bodies), which exists only with `content.keep`.
    public var readsContent: Bool { fields.contains { $0.isContent } }

    /// `~d`, as written.
    public var spelling: String { "~" + rawValue }

    /// One line of help: `~d regex   Domain: the host name (or the server's address when no name is known)`.
    public var help: String {
        let what: String
        switch self {
        case .all: what = "every row"
        case .body: what = "request or response body (kept content only; decoded, searched as UTF-8)"
        case .requestBody: what = "request body (kept content only)"
        case .responseBody: what = "response body (kept content only)"
        case .statusCode: what = "HTTP response status code"
        case .domain: what = "domain: the host name, else the server's address"
        case .destination: what = "destination address as ADDRESS:PORT ([::1]:443 for IPv6)"
        case .error: what = "failed flows, and exchanges whose stream was reset"
        case .header: what = "a request or response header line \"name: value\" (kept content only)"
        case .requestHeader: what = "a request header line (kept content only)"
        case .responseHeader: what = "a response header line (kept content only)"
        case .method: what = "request method"
        case .request: what = "a request without a response"
        case .response: what = "a request with a response"
        case .source: what = "source (client) address as ADDRESS:PORT"
        case .contentType: what = "request or response Content-Type"
        case .requestContentType: what = "request Content-Type"
        case .responseContentType: what = "response Content-Type"
        case .tcp: what = "TCP flows"
        case .udp: what = "UDP flows"
        case .url: what = "URL (a bare regex means ~u too)"
        }
        let argument = self.argument == .regex ? " regex" : self.argument == .number ? " int" : ""
        return (spelling + argument).padding(toLength: 12, withPad: " ", startingAt: 0) + what
    }

    /// The whole language in a few lines, for `--help` texts.
    public static let summary = "A filter is mitmproxy's language: ~d regex (domain), ~m (method), ~u (URL; a bare regex means ~u), ~c int (status), ~t (Content-Type; ~tq/~ts request/response), ~h (header line; ~hq/~hs), ~b (body; ~bq/~bs), ~q (no response from the server; tv's own 502 counts as none), ~s, ~e (failed), ~src/~dst (ADDRESS:PORT), ~tcp, ~udp, ~all, joined by ! (not), & (and), | (or) and parentheses; adjacent terms mean &, with the lowest precedence; regexes are case-insensitive and searched, not anchored; quote one with spaces or ( ) ~ in it ('a b' or \"a b\"); ~h and ~b look only in kept content."
}

/// A field of a flow or an exchange that an operator looks in.
public enum FilterField: Sendable, Hashable, CaseIterable {
    case domain, method, url, statusCode
    case requestContentType, responseContentType
    case requestHeaders, responseHeaders
    case requestBody, responseBody
    case source, destination

    /// Headers and bodies: content, kept only with `content.keep`.
    public var isContent: Bool {
        switch self {
        case .requestHeaders, .responseHeaders, .requestBody, .responseBody: return true
        default: return false
        }
    }
}

/// A yes-or-no fact the operators without an argument ask.
public enum FilterFlag: Sendable, Hashable {
    /// The row has a request and the server's response (`~s`; `~q` is its negation: a row tv
    /// answered itself, `502 by tv`, has none).
    case hasResponse
    /// The row failed (`~e`).
    case failed
    /// The row is a TCP flow (`~tcp`).
    case tcp
    /// The row is a UDP flow (`~udp`).
    case udp
}
