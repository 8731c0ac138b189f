import FlowStore
import FlowTerms
import HTTPReading
import TVHome

/// `tv request ID --curl`: a curl command that sends the same request again. With the recorded
/// request (content was kept) it carries the full URL with its query, the headers (but those
/// curl sets itself from the transfer: Host, Content-Length, Transfer-Encoding, Connection
/// unless it asks for an Upgrade, and HTTP/2's pseudo-headers) and a printable body, over the
/// request's HTTP version (`--http1.1` over TLS, where curl would take h2); without it, only the
/// method and the URL tv kept, and `note` says what is missing. A request whose connection went
/// elsewhere than its URL names (`RequestDestination`) gets `--connect-to`, so the command
/// reaches that server again (a `Host` forged inside a CONNECT tunnel was replayed to the host it
/// named). Every word is quoted for a POSIX shell.
///
/// What curl would add or read otherwise is said in curl's own terms (checked with curl 7.88):
/// - the body goes as `--data-raw`, which sends its bytes as they are (CR, LF and tabs too); with
///   `--data-binary` a body starting with `@` named a file curl read and uploaded (a trial's
///   `@/etc/hostname`);
/// - a header sent empty is `-H 'Name;'`: curl reads `-H 'Name:'` as "remove Name";
/// - the headers curl sends of its own accord (`ownHeaders`) that the request lacked are removed
///   with `-H 'Name:'`, so the server sees no User-Agent or Accept the client never sent;
/// - a target that is neither a path nor an http(s) URL (OPTIONS' `*`) goes as
///   `--request-target`, never as the URL word (one starting with `-` would be read as an option).
public struct CurlCommand: Sendable, Equatable {
    /// The command line.
    public let command: String
    /// What the command cannot repeat, one sentence; nil when it repeats everything.
    public let note: String?

    /// - Parameter flowContentKept: the flow has kept content this request is not in (its note
    ///   then says so, not that content keeping was off: a re-check).
    /// - Parameter absence: why the request is not read out of kept content, when known: its
    ///   note says that (and `flowContentKept` follows from it).
    /// - Parameter destination: where the request was sent when its URL names another server.
    /// - Parameter fallbackAuthority: where the request went when its row names no authority
    ///   (its connection's host and port); `localhost` when not given.
    public init(_ exchange: ExchangeRecord, request: HTTPMessage?, flowContentKept: Bool = false, absence: RequestContentAbsence? = nil,
                destination: RequestDestination? = nil, fallbackAuthority: String? = nil) {
        let flowContentKept = absence.map { $0 != .noneKept } ?? flowContentKept
        var words = ["curl"]
        let scheme = exchange.scheme ?? "http"
        // HTTP/2 in clear is prior knowledge: `--http2` sends an HTTP/1.1 Upgrade there (RFC
        // 9113 §3.3 has no Upgrade; a trial's h2c row printed it).
        if exchange.httpVersion == "HTTP/2" { words.append(scheme == "http" ? "--http2-prior-knowledge" : "--http2") }
        if exchange.httpVersion == "HTTP/1.0" { words.append("--http1.0") }
        // Over TLS curl offers h2 and takes it: the server saw HTTP/2 where the request was
        // HTTP/1.1, and an upgrade's 101 failed (curl's `PROTOCOL_ERROR`: a trial).
        if exchange.httpVersion == "HTTP/1.1" && scheme == "https" { words.append("--http1.1") }
        let authority = exchange.authority ?? fallbackAuthority ?? "localhost"
        if let destination { words += ["--connect-to", destination.curlConnectTo] }
        guard let request else {
            words += CurlCommand.methodWords(exchange.method, withBody: false)
            words.append("\(scheme)://\(authority)\(exchange.path)")
            command = words.map(ShellWord.quote).joined(separator: " ")
            // A request tv answered itself (one it could not read, refused with its 400; one
            // whose server it would not reach, its 502) is not read out of kept turns: not the
            // budget's doing (a re-check's note said so), nor content keeping's (a trial's 502
            // said keeping was off while it was on).
            if exchange.state == .answered {
                note = "tv \(exchange.status == nil ? "refused" : "answered") this request itself (`tv request \(exchange.id)` says why) and did not read it out of kept turns"
                    + (flowContentKept ? " (`tv turns \(exchange.flowID)` shows its bytes)" : "") + ", so this command sends the method and URL only."
                return
            }
            if case .startDeleted? = absence, let reason = absence?.curlReason {
                // Kept, but not readable: not "were not kept" (a trial's HTTP/2 after a delete).
                note = "Its headers and body are kept but cannot be read: " + reason + "; so this command sends the method and URL only."
                return
            }
            let kept = flowContentKept ? (absence ?? .pastKept).curlReason : nil
            let why = kept.map { ": this request is not in the content kept of its connection (\($0));" }
                ?? " (content keeping was off, or the content has expired or was deleted),"
            note = "Its headers" + (exchange.queryRemoved ? ", query string" : "") + " and body were not kept" + why
                + " so this command sends the method and URL only."
            return
        }
        var target = exchange.path
        if let path = request.headers.first(":path") {
            target = path
        } else {
            let parts = request.startLine.split(separator: " ")
            if parts.count >= 2 { target = String(parts[1]) }
        }
        let (url, requestTarget) = CurlCommand.url(target: target, scheme: scheme, authority: authority)
        // The body goes in when it is whole printable text; the method is said against what
        // curl will send (a POST whose binary body is left out said nothing, so curl sent a GET).
        var missing: String?
        var data: [String] = []
        let body = request.body.transferred
        if !body.isEmpty {
            if request.body.completeness.isComplete, !body.contains(0), let text = String(validating: body, as: UTF8.self) {
                data = ["--data-raw", text]
            } else {
                // The body's size as sent (the row's), not what was kept of it (a trial's 1 MiB
                // POST read "65536 bytes").
                let size = max(exchange.requestBodyBytes, Int64(body.count))
                missing = request.body.completeness.isComplete
                    ? "The request body (\(Units.grouped(size)) bytes) is binary, so it is left out."
                    : "The request body (\(Units.grouped(size)) bytes, \(Units.grouped(Int64(body.count))) of them kept) was not kept whole, so it is left out."
            }
        }
        words += CurlCommand.methodWords(exchange.method, withBody: !data.isEmpty)
        if let requestTarget { words += ["--request-target", requestTarget] }
        words.append(url)
        // An upgrade (WebSocket's handshake) keeps the two headers that ask for it: left out, the
        // server answered a plain GET (a trial).
        let upgrade = request.headers.first("upgrade") != nil
        var skipped: Set<String> = ["host", "content-length", "transfer-encoding", "keep-alive", "te"]
        if !upgrade { skipped.formUnion(["connection", "upgrade"]) }
        for header in request.headers where !header.name.hasPrefix(":") && !skipped.contains(header.name.lowercased()) {
            words += ["-H", CurlCommand.headerWord(header)]
        }
        let sent = Set(request.headers.map { $0.name.lowercased() })
        for own in CurlCommand.ownHeaders(bodyBytes: data.isEmpty ? nil : body.count, version: exchange.httpVersion)
        where !sent.contains(own.lowercased()) {
            words += ["-H", own + ":"]
        }
        words += data
        command = words.map(ShellWord.quote).joined(separator: " ")
        // HTTP/2 fields the reading left out past its limits are not in the command either.
        let leftOut = request.headersLeftOut.map { String($0.sentence().dropLast()) + "; this command sends the ones kept." }
        note = [missing, leftOut].compactMap { $0 }.joined(separator: " ").nilWhenEmpty
    }

    /// A header as `-H` takes it: `Name: value`, or `Name;` when it was sent empty (curl reads
    /// `Name:` with nothing after it as "remove the header", and sends `Name;` as `Name:`).
    static func headerWord(_ header: HTTPHeader) -> String {
        header.value.allSatisfy({ $0 == " " || $0 == "\t" }) ? header.name + ";" : "\(header.name): \(header.value)"
    }

    /// The headers curl sends of its own accord over `version` (besides Host and those it sets
    /// from the transfer): User-Agent and Accept always; with a body (`bodyBytes`, nil for none)
    /// Content-Type (`application/x-www-form-urlencoded`, `--data-raw`'s); over HTTP/1.1 with a
    /// body past 1 KiB, `Expect: 100-continue` (curl before 7.69 past 1 KiB, later past 1 MiB).
    static func ownHeaders(bodyBytes: Int?, version: String) -> [String] {
        var names = ["User-Agent", "Accept"]
        if let bodyBytes {
            names.append("Content-Type")
            if version == "HTTP/1.1" && bodyBytes > 1_024 { names.append("Expect") }
        }
        return names
    }

    /// The URL word for `target`, and the target to send with `--request-target` when the URL
    /// cannot carry it: a path goes after the scheme and authority, an http(s) URL (the
    /// absolute form a plain proxy is sent) as it is, anything else (`*`) as the request target
    /// of `scheme://authority`, so no word a peer chose can read as one of curl's options.
    static func url(target: String, scheme: String, authority: String) -> (url: String, requestTarget: String?) {
        if target.hasPrefix("/") { return ("\(scheme)://\(authority)\(target)", nil) }
        let lower = target.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") { return (target, nil) }
        return ("\(scheme)://\(authority)", target)
    }

    /// What tells curl the method: nothing for its defaults (GET, POST with a body), `-I` for
    /// HEAD (curl would wait for a body after `-X HEAD`), `-X METHOD` otherwise.
    static func methodWords(_ method: String, withBody: Bool) -> [String] {
        if method == (withBody ? "POST" : "GET") { return [] }
        if method == "HEAD" { return ["-I"] }
        return ["-X", method]
    }
}

private extension String {
    var nilWhenEmpty: String? { isEmpty ? nil : self }
}
