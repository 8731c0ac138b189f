/// What `tv web` knows about one request before it answers: the facts its security decision
/// reads (all from the request line and headers; nothing else is consulted).
public struct WebRequestFacts: Sendable, Equatable {
    /// The request method as sent (`GET`, `POST`, …).
    public var method: String
    /// The path, without the query (`/api/flows`).
    public var path: String
    /// The `Host` header (RFC 9110 §7.2), nil when absent.
    public var host: String?
    /// The `token` query parameter (the printed URL's, and the pages' event stream and download
    /// links, which cannot send a header), nil when absent.
    public var queryToken: String?
    /// The token of an `Authorization: Bearer TOKEN` header (RFC 6750 §2.1), for scripts.
    public var bearerToken: String?
    /// The `Origin` header (RFC 6454 §7), nil when absent.
    public var origin: String?
    /// The `Sec-Fetch-Site` header (Fetch Metadata: `same-origin`, `same-site`, `cross-site`, `none`).
    public var fetchSite: String?
    /// How many `Host` header lines the request has (`host` is the first one's value).
    public var hostLines: Int

    public init(method: String, path: String, host: String?, queryToken: String? = nil,
                bearerToken: String? = nil, origin: String? = nil, fetchSite: String? = nil, hostLines: Int? = nil) {
        self.hostLines = hostLines ?? (host == nil ? 0 : 1)
        self.method = method
        self.path = path
        self.host = host
        self.queryToken = queryToken
        self.bearerToken = bearerToken
        self.origin = origin
        self.fetchSite = fetchSite
    }
}

/// Why a request was refused; each kind renders its own sentence and status once.
public enum WebRefusal: Sendable, Equatable {
    /// The `Host` header names none of the listening names (DNS rebinding), or is missing.
    case wrongHost(String?)
    /// No token: the printed URL was not used.
    case noToken
    /// A token was given and is not this server's (an old URL, another `tv web`).
    case wrongToken
    /// A state-changing request from another origin (CSRF), or a browser's without an origin.
    case crossOrigin(String?)
    /// A method `tv web` does not serve.
    case method(String)
    /// More than one `Host` line (RFC 9112 §3.2: a server responds 400).
    case duplicateHost
    /// A path with an empty, `.` or `..` segment (`//api/…`, `/%2Fapi/…` once decoded), or a
    /// control byte (`%00`), which no page asks for.
    case uncanonicalPath
    /// A request target that is not a path: the absolute form (`http://host/…`) or `*` (RFC 9112
    /// §3.2), which this origin server does not take (it was told "an empty, '.' or '..'
    /// segment": a trial).
    case notAPath

    /// The HTTP status of the refusal: 421 for a name this server does not answer to (RFC 9110
    /// §15.5.20), 405 for a method, 403 otherwise.
    public var status: Int {
        switch self {
        case .wrongHost: return 421
        case .method: return 405
        case .duplicateHost, .uncanonicalPath, .notAPath: return 400
        case .noToken, .wrongToken, .crossOrigin: return 403
        }
    }

    /// One sentence: what happened and what to do.
    public var message: String {
        switch self {
        case .wrongHost(let host):
            return "tv web does not answer to the name \(host.map { "'\($0)'" } ?? "(none)"); open the URL `tv web` printed."
        case .noToken:
            return "This needs the token in the URL `tv web` printed: open that URL once in this browser (its pages keep the token for this address and port), or send `Authorization: Bearer TOKEN`."
        case .wrongToken:
            return "The token is not this tv web's (it changes at every start); open the URL the running `tv web` printed."
        case .crossOrigin(let origin):
            return "A change was asked from another origin (\(origin ?? "unknown")); only tv web's own pages may change settings."
        case .method(let m):
            return "tv web does not serve \(m) here: pages are read with GET, and the API under /api/ takes GET to read and POST to change."
        case .duplicateHost:
            return "The request has more than one Host header, which RFC 9112 §3.2 answers with 400; send one."
        case .uncanonicalPath:
            return "The path has an empty, '.' or '..' segment or a control byte, which tv web does not read; ask for it without them, as its pages do."
        case .notAPath:
            return "The request target is not a path beginning with '/' (an absolute URL or '*'), which tv web, not a proxy, does not take; ask for the path alone."
        }
    }
}

/// The decision about one request.
public enum WebAccessDecision: Sendable, Equatable {
    /// Serve it.
    case allow
    case refuse(WebRefusal)
}

/// `tv web`'s security decision, pure: request facts in, allow / refuse out.
///
/// - DNS rebinding: the `Host` header must be one of `hosts` (the listening address and, on
///   loopback, `localhost`, each with the port), compared without case; before anything else.
/// - The pages (every path outside `/api/`: HTML, CSS, JavaScript, the same for everyone and
///   holding nothing recorded) are served to a listening name without a token, for reading only.
/// - The API needs the token: `Authorization: Bearer TOKEN` (the pages' own requests and
///   scripts), or `?token=` on a GET of the event stream or a file (`takesQueryToken`: what an
///   `EventSource` or a download link asks for, which cannot send a header). No cookie is a
///   credential: a browser sends a cookie of 127.0.0.1 to every port of 127.0.0.1 (RFC 6265
///   §8.5), so any other local server a user opened received it (a trial's server on another
///   port logged the token). The pages keep the token in this origin's storage, which is per
///   port, and send it only here.
/// - CSRF: a POST must not say it comes from elsewhere (a foreign `Origin`, or `Sec-Fetch-Site`
///   other than `same-origin`), whatever the credential; another site's page could not send the
///   bearer header without a CORS preflight, which this server never grants, nor learn the token.
/// Tokens are compared in constant time.
public struct WebAccessPolicy: Sendable, Equatable {
    /// The `Host` values answered, lowercase (`127.0.0.1:8081`, `localhost:8081`).
    public let hosts: Set<String>
    /// The random token of this server's run.
    public let token: String

    public init(hosts: Set<String>, token: String) {
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.token = token
    }

    /// The `Allow` header of a 405 for `path` (RFC 9110 §15.5.6: a 405 names what is served).
    public static func allowed(_ path: String) -> String {
        isAPI(path) ? "GET, HEAD, POST" : "GET, HEAD"
    }

    /// Whether `path` is the API's (`/api`, `/api/…`): its first segment is `api`, as the router
    /// reads it. Asked of canonical paths only (`isCanonical`): the router skips empty segments,
    /// so `//api/settings` was routed to the API while a prefix test called it a page, and every
    /// GET of the API answered without the token (a trial).
    public static func isAPI(_ path: String) -> Bool {
        path == "/api" || path.hasPrefix("/api/")
    }

    /// Whether `path` starts with `/` and has no empty, `.` or `..` segment (a trailing `/`
    /// aside): the one spelling of each route, so the policy and the router read a path alike.
    public static func isCanonical(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        // A control byte, sent escaped (`WebServer.unescape` leaves `%00`…`%1F` and `%7F` as
        // they came) or raw: no page asks for one.
        guard !path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }), !Self.escapesControlByte(path) else { return false }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment.isEmpty, index != segments.count - 1 { return false }
            if segment == "." || segment == ".." { return false }
        }
        return true
    }

    /// Whether `path` holds `%00`…`%1F` or `%7F` (any case).
    static func escapesControlByte(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.count >= 3 else { return false }
        for i in 0 ..< bytes.count - 2 where bytes[i] == UInt8(ascii: "%") {
            let high = bytes[i + 1], low = bytes[i + 2] | 0x20
            let lowIsHex = (low >= UInt8(ascii: "0") && low <= UInt8(ascii: "9")) || (low >= UInt8(ascii: "a") && low <= UInt8(ascii: "f"))
            if (high == UInt8(ascii: "0") || high == UInt8(ascii: "1")) && lowIsHex { return true }
            if high == UInt8(ascii: "7") && low == UInt8(ascii: "f") { return true }
        }
        return false
    }

    /// The methods served: reading (GET, HEAD) and changing (POST, the API only).
    public static let readingMethods: Set<String> = ["GET", "HEAD"]
    public static let changingMethods: Set<String> = ["POST"]

    public func decide(_ facts: WebRequestFacts) -> WebAccessDecision {
        // Before the name is judged: the first of two Host lines was the one looked at (a trial's
        // `Host: 127.0.0.1:PORT` then `Host: evil.example` was served).
        guard facts.hostLines <= 1 else { return .refuse(.duplicateHost) }
        guard let host = facts.host, hosts.contains(host.lowercased()) else { return .refuse(.wrongHost(facts.host)) }
        guard facts.path.hasPrefix("/") else { return .refuse(.notAPath) }
        guard Self.isCanonical(facts.path) else { return .refuse(.uncanonicalPath) }
        let reading = Self.readingMethods.contains(facts.method)
        let api = Self.isAPI(facts.path)
        guard reading || (api && Self.changingMethods.contains(facts.method)) else { return .refuse(.method(facts.method)) }
        if !reading {
            // A foreign origin is refused before any credential is looked at.
            if let origin = facts.origin, !isOwnOrigin(origin) { return .refuse(.crossOrigin(origin)) }
            if let site = facts.fetchSite, site != "same-origin" { return .refuse(.crossOrigin(facts.origin ?? site)) }
        }
        guard api else { return .allow }
        if let bearer = facts.bearerToken {
            return Self.same(bearer, token) ? .allow : .refuse(.wrongToken)
        }
        guard reading, let query = facts.queryToken, Self.takesQueryToken(facts.path) else { return .refuse(.noToken) }
        return Self.same(query, token) ? .allow : .refuse(.wrongToken)
    }

    /// The routes a browser asks for without a header of the page's (an `EventSource`, a
    /// download link), which take the token in the query: the event stream and the files. Every
    /// other route needs the bearer header (the query served every GET: a re-check).
    static func takesQueryToken(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.first == "api" else { return false }
        let rest = parts.dropFirst()
        if Array(rest) == ["events"] || Array(rest) == ["har"] { return true }
        guard let last = rest.last else { return false }
        switch (rest.first, last) {
        case ("flows", "har"), ("flows", "raw"), ("captures", "file"), ("audit", "bundle"): return true
        default: return false
        }
    }

    /// Whether `origin` is `http://` one of the listening names.
    func isOwnOrigin(_ origin: String) -> Bool {
        let lower = origin.lowercased()
        guard lower.hasPrefix("http://") else { return false }
        return hosts.contains(String(lower.dropFirst("http://".count)))
    }

    /// Equal in time independent of where they differ (lengths are not secret: every token has one).
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<x.count { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}
