import CPostgres
import CTVShims
import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Where the shared store is: a `postgresql://` URL (or a libpq key=value string) read by
/// libpq's own parser (`PQconninfoParse`, PostgreSQL documentation §34.1.1), with tv's rules on
/// top: no password in it (it would show in the process list and the shell's history: a
/// password comes from a file, `PGPASSFILE` or `~/.pgpass`, or `passfile=` in the URL's query),
/// TLS verified by default (`sslmode=verify-full` unless the URL says otherwise), and a connect
/// timeout so a writer never hangs on a silent network for long.
public struct SharedStoreTarget: Sendable, Equatable {
    /// `sslmode` when the URL names none: the server's certificate must chain to a trusted root
    /// (`sslrootcert`) and carry the host's name.
    public static let defaultSSLMode = "verify-full"
    /// `connect_timeout` (seconds) when the URL names none.
    public static let defaultConnectTimeout = "5"

    /// The URL as given (it holds no password).
    public let url: String
    /// libpq's keyword/value parameters, in order: tv's defaults first, then the URL's own
    /// (which win).
    public let parameters: [(String, String)]
    /// `host:port/database` as the banner and errors name it.
    public let server: String
    /// The database name.
    public let database: String
    /// The sslmode in force.
    public let sslMode: String

    /// Reads `url`, opening libpq first (every use of the shared store starts here).
    /// - Throws: `MissingLibrary` when libpq.so.5 cannot be opened; `FlowStoreError.badStoreURL`
    ///   when libpq cannot read it or it holds a password.
    /// `scalar` as a URL carries it (`%3C`; each UTF-8 byte of a non-ASCII one).
    static func percentEncoded(_ scalar: Unicode.Scalar) -> String {
        String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
    }

    public init(_ url: String) throws {
        // A URL of another scheme (mysql://, http://) is not libpq's to judge: its parser reads
        // it as keyword=value text and says `missing "=" …` (a trial). libpq takes
        // postgresql:// and postgres:// URIs (PostgreSQL documentation §34.1.1.2) and
        // keyword=value strings, which have no "://".
        if let scheme = url.range(of: "://").map({ url[..<$0.lowerBound].lowercased() }), scheme != "postgresql", scheme != "postgres" {
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(url),
                reason: "it is a \(scheme):// URL, and the shared store is PostgreSQL: give a postgresql://HOST[:PORT]/DATABASE URL")
        }
        // A URI carries these percent-encoded (RFC 3986 §2, §3: none is in its grammar); libpq
        // took `postgresql://u@h/d"><script>…` as a database name (a trial).
        if url.contains("://"), let bad = url.unicodeScalars.first(where: { $0.value < 0x21 || $0.value == 0x7F || $0.value > 0x7E || "\"<>\\^`{|}".unicodeScalars.contains($0) }) {
            let shown = bad.value < 0x21 || bad.value == 0x7F ? String(format: "byte 0x%02X", bad.value) : "'\(bad)'"
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(TerminalText.line(url)),
                reason: "it holds \(shown), which a URL carries percent-encoded (RFC 3986: \(Self.percentEncoded(bad)))")
        }
        if let why = tv_lazy_library_open(TV_LAZY_LIBPQ) { throw MissingLibrary.sharedStore(reason: String(cString: why)) }
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &errorMessage) else {
            let reason = errorMessage.map { String(cString: $0) }?.split(whereSeparator: \.isNewline).first.map(String.init) ?? "libpq cannot read it"
            if let errorMessage { PQfreemem(errorMessage) }
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(url), reason: reason)
        }
        defer { PQconninfoFree(options) }
        var given: [(String, String)] = []
        var index = 0
        while let keyword = options[index].keyword {
            if let value = options[index].val { given.append((String(cString: keyword), String(cString: value))) }
            index += 1
        }
        if given.contains(where: { $0.0 == "password" && !$0.1.isEmpty }) {
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(url),
                reason: "it holds a password, which others can read in the process list and the shell's history; remove it and put it in a password file (PGPASSFILE, ~/.pgpass, or passfile= in the URL)")
        }
        // The client key's passphrase is a secret of the same kind (a trial's showed in `ps`);
        // libpq reads it from nowhere else, so the way is a key without one, kept 0600.
        if given.contains(where: { $0.0 == "sslpassword" && !$0.1.isEmpty }) {
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(url),
                reason: "it holds the client key's passphrase (sslpassword), which others can read in the process list and the shell's history; remove it and name a client key without a passphrase, readable only by you (sslkey=, mode 0600)")
        }
        // libpq reads any sslmode value and refuses it only at each connect, so a session took
        // `sslmode=bogus` and retried for ever (a trial): refused here, before anything listens.
        // PostgreSQL documentation §34.1.2: the six values libpq knows.
        if let mode = given.last(where: { $0.0 == "sslmode" })?.1, !SharedStoreTarget.sslModes.contains(mode) {
            throw FlowStoreError.badStoreURL(url: SharedStoreTarget.redacted(url),
                reason: "sslmode=\(mode) is not one libpq knows (\(SharedStoreTarget.sslModes.joined(separator: ", ")))")
        }
        self.url = url
        var parameters: [(String, String)] = []
        if !given.contains(where: { $0.0 == "sslmode" }) { parameters.append(("sslmode", SharedStoreTarget.defaultSSLMode)) }
        if !given.contains(where: { $0.0 == "connect_timeout" }) { parameters.append(("connect_timeout", SharedStoreTarget.defaultConnectTimeout)) }
        if !given.contains(where: { $0.0 == "application_name" }) { parameters.append(("application_name", "tv")) }
        parameters += given
        self.parameters = parameters
        func value(_ key: String) -> String? { parameters.last { $0.0 == key }?.1 }
        let host = value("host") ?? value("hostaddr") ?? "localhost"
        let port = value("port") ?? "5432"
        database = value("dbname") ?? value("user") ?? ProcessInfoUser.name
        server = "\(host):\(port)/\(database)"
        sslMode = value("sslmode") ?? SharedStoreTarget.defaultSSLMode
        hosts = host.split(separator: ",").map { String($0) }
    }

    /// libpq's sslmode values (PostgreSQL documentation §34.1.2, "sslmode").
    static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// The URL's hosts (libpq takes a comma-separated list).
    let hosts: [String]

    /// The sentence said at start when flows would travel to another machine without the
    /// server's certificate checked (`sslmode` other than verify-full or verify-ca: disable,
    /// allow and prefer may not even encrypt; require encrypts but trusts any certificate):
    /// nil for a local socket or a loopback host. The README says disable is for a server on
    /// the same machine only, and a trial's disable to another host was taken without a word.
    public var unverifiedRemoteWarning: String? {
        guard sslMode != "verify-full", sslMode != "verify-ca" else { return nil }
        func isLocal(_ host: String) -> Bool {
            host.hasPrefix("/") || host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        }
        guard !hosts.allSatisfy(isLocal) else { return nil }
        let what = sslMode == "require"
            ? "the flows' metadata is encrypted but the server's certificate is not checked, so anyone on the way could pose as the server"
            : "the flows' metadata may travel unencrypted and the server's certificate is not checked, so anyone on the way could read or change it"
        return "The shared store at \(server) is reached with sslmode=\(sslMode): \(what); use sslmode=verify-full (with sslrootcert= naming the server's CA) unless that network is yours alone."
    }

    /// How the connection travels, for the banner: `sslmode verify-full`, or `a local socket, no
    /// TLS` when the host is a folder (libpq's Unix-domain socket; sslmode does not apply there,
    /// and a trial's banner claimed verify-full for one).
    public var transportWords: String {
        server.hasPrefix("/") ? "a local socket, no TLS" : "sslmode \(sslMode)"
    }

    public static func == (a: SharedStoreTarget, b: SharedStoreTarget) -> Bool {
        a.url == b.url && a.parameters.elementsEqual(b.parameters) { $0 == $1 }
    }

    /// `url` with every password in it replaced by `***`, for anything tv prints: the URL's
    /// userinfo (`postgresql://user:***@host`), a `password=` or `sslpassword=` query parameter and a
    /// keyword/value string's `password = …` (quoted or not), the keyword matched without
    /// regard to case (libpq refuses `PASSWORD=`, and its error should not echo the value).
    public static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
           let colon = text[scheme.upperBound..<at].firstIndex(of: ":") {
            text = String(text[..<colon]) + ":***" + String(text[at...])
        }
        if text.contains("://") {
            // A URL's query: each parameter whose key, percent-decoded as libpq decodes it, is
            // `password` in any case (a re-check's `pass%77ord=` was printed).
            guard let question = text.firstIndex(of: "?") else { return text }
            let end = text[question...].firstIndex(of: "#") ?? text.endIndex
            let parameters = text[text.index(after: question)..<end].split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
                guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
                let key = String(parameter[..<equals])
                let decoded = (key.removingPercentEncoding ?? key).lowercased()
                return decoded == "password" || decoded == "sslpassword" ? key + "=***" : String(parameter)
            }
            return String(text[...question]) + parameters.joined(separator: "&") + String(text[end...])
        }
        // A keyword/value string: `password = value`, the value quoted or not.
        var out = ""
        var rest = Substring(text)
        while let found = rest.range(of: "password", options: .caseInsensitive) {
            out += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            let afterSpaces = rest.drop { $0 == " " || $0 == "\t" }
            guard afterSpaces.first == "=" else { continue }
            out += rest[..<afterSpaces.startIndex] + "="
            var value = afterSpaces.dropFirst()
            let leading = value.prefix { $0 == " " || $0 == "\t" }
            out += leading
            value = value.dropFirst(leading.count)
            if value.first == "'" {
                // A quoted value: up to the closing quote not escaped by a backslash.
                var index = value.index(after: value.startIndex)
                while index < value.endIndex, value[index] != "'" {
                    if value[index] == "\\" { index = value.index(after: index) }
                    if index < value.endIndex { index = value.index(after: index) }
                }
                value = index < value.endIndex ? value[value.index(after: index)...] : value[value.endIndex...]
            } else {
                value = value.drop { $0 != " " && $0 != "\t" }
            }
            out += "***"
            rest = value
        }
        return out + rest
    }
}

/// The user name libpq defaults the database to (the effective user's login name).
enum ProcessInfoUser {
    static var name: String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return "postgres"
    }
}
