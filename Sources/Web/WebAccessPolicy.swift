/// What `tv web` knows about one request before it answers: the facts its security decision
/// reads (all from the request line and headers; nothing else is consulted).
public struct WebRequestFacts: Sendable, Equatable {
    /// The request method as sent (`GET`, `POST`, …).
    public var method: String
    /// The path, without the query (`/api/flows`).
    public var path: String
    /// The `Host` header (RFC 9110 §7.2), nil when absent.
    public var host: String?
    /// The `token` query parameter (the printed URL's), nil when absent.
    public var queryToken: String?
    /// The value of the server's cookie in the `Cookie` header (RFC 6265 §5.4), nil when absent.
    public var cookieToken: String?
    /// The token of an `Authorization: Bearer TOKEN` header (RFC 6750 §2.1), for scripts.
    public var bearerToken: String?
    /// The `Origin` header (RFC 6454 §7), nil when absent.
    public var origin: String?
    /// The `Sec-Fetch-Site` header (Fetch Metadata: `same-origin`, `same-site`, `cross-site`, `none`).
    public var fetchSite: String?

    public init(method: String, path: String, host: String?, queryToken: String? = nil, cookieToken: String? = nil,
                bearerToken: String? = nil, origin: String? = nil, fetchSite: String? = nil) {
        self.method = method
        self.path = path
        self.host = host
        self.queryToken = queryToken
        self.cookieToken = cookieToken
        self.bearerToken = bearerToken
        self.origin = origin
        self.fetchSite = fetchSite
    }
}

/// Why a request was refused; each kind renders its own sentence and status once.
public enum WebRefusal: Sendable, Equatable {
    /// The `Host` header names none of the listening names (DNS rebinding), or is missing.
    case wrongHost(String?)
    /// No token and no cookie: the printed URL was not used.
    case noToken
    /// A token or cookie was given and is not this server's (an old URL, another `tv web`).
    case wrongToken
    /// A state-changing request from another origin (CSRF), or a browser's without an origin.
    case crossOrigin(String?)
    /// A method `tv web` does not serve.
    case method(String)

    /// The HTTP status of the refusal: 421 for a name this server does not answer to (RFC 9110
    /// §15.5.20), 405 for a method, 403 otherwise.
    public var status: Int {
        switch self {
        case .wrongHost: return 421
        case .method: return 405
        case .noToken, .wrongToken, .crossOrigin: return 403
        }
    }

    /// One sentence: what happened and what to do.
    public var message: String {
        switch self {
        case .wrongHost(let host):
            return "tv web does not answer to the name \(host.map { "'\($0)'" } ?? "(none)"); open the URL `tv web` printed."
        case .noToken:
            return "This page needs the token in the URL `tv web` printed; open that URL once and the browser keeps a cookie."
        case .wrongToken:
            return "The token is not this tv web's (it changes at every start); open the URL the running `tv web` printed."
        case .crossOrigin(let origin):
            return "A change was asked from another origin (\(origin ?? "unknown")); only tv web's own pages may change settings."
        case .method(let m):
            return "tv web does not serve \(m) requests; use GET to read and POST to change."
        }
    }
}

/// The decision about one request.
public enum WebAccessDecision: Sendable, Equatable {
    /// Serve it.
    case allow
    /// A page visit with the right token in its URL: set the cookie and send the browser to
    /// `location`, the same path without the token (303, RFC 9110 §15.4.4).
    case tradeToken(location: String)
    case refuse(WebRefusal)
}

/// `tv web`'s security decision, pure: request facts in, allow / trade the token / refuse out.
///
/// - DNS rebinding: the `Host` header must be one of `hosts` (the listening address and, on
///   loopback, `localhost`, each with the port), compared without case.
/// - Authentication: the cookie (HttpOnly, SameSite=Strict, set when the printed URL's token was
///   traded) or `Authorization: Bearer TOKEN` (scripts); a token in the query of a GET is traded
///   for the cookie and dropped from the address bar.
/// - CSRF: a POST with the cookie must say it is same-origin (`Origin` one of `hosts`, or
///   `Sec-Fetch-Site: same-origin`); a foreign `Origin` or `Sec-Fetch-Site` is refused whatever
///   the credential. A bearer token cannot be sent by another site's page without a CORS
///   preflight, which this server never grants.
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

    /// The methods served: reading (GET, HEAD) and changing (POST).
    public static let readingMethods: Set<String> = ["GET", "HEAD"]
    public static let changingMethods: Set<String> = ["POST"]

    public func decide(_ facts: WebRequestFacts) -> WebAccessDecision {
        guard let host = facts.host, hosts.contains(host.lowercased()) else { return .refuse(.wrongHost(facts.host)) }
        let reading = Self.readingMethods.contains(facts.method)
        guard reading || Self.changingMethods.contains(facts.method) else { return .refuse(.method(facts.method)) }
        if !reading {
            // A foreign origin is refused before any credential is looked at.
            if let origin = facts.origin, !isOwnOrigin(origin) { return .refuse(.crossOrigin(origin)) }
            if let site = facts.fetchSite, site != "same-origin" { return .refuse(.crossOrigin(facts.origin ?? site)) }
        }
        if let bearer = facts.bearerToken {
            return Self.same(bearer, token) ? .allow : .refuse(.wrongToken)
        }
        if reading, let query = facts.queryToken {
            return Self.same(query, token) ? .tradeToken(location: facts.path) : .refuse(.wrongToken)
        }
        guard let cookie = facts.cookieToken else { return .refuse(.noToken) }
        guard Self.same(cookie, token) else { return .refuse(.wrongToken) }
        if !reading, facts.origin == nil, facts.fetchSite == nil {
            // A browser always says where a POST comes from; one that does not is not trusted with the cookie.
            return .refuse(.crossOrigin(nil))
        }
        return .allow
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

/// The cookie `tv web` sets and reads (RFC 6265).
public enum WebCookie {
    /// The cookie's name for a server on `port`: cookies are not kept per port (RFC 6265 §8.5),
    /// so two `tv web`s on one machine must not overwrite each other's.
    public static func name(port: UInt16) -> String { "tv_web_\(port)" }

    /// The `Set-Cookie` value that keeps `token` for this server's pages only.
    public static func setCookie(name: String, token: String) -> String {
        "\(name)=\(token); Path=/; HttpOnly; SameSite=Strict"
    }

    /// The value of cookie `name` in a `Cookie` header (`a=1; tv_web_8081=TOKEN`), nil when absent.
    public static func value(named name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let trimmed = pair.drop(while: { $0 == " " })
            guard let eq = trimmed.firstIndex(of: "=") else { continue }
            if trimmed[..<eq] == Substring(name) { return String(trimmed[trimmed.index(after: eq)...]) }
        }
        return nil
    }
}
