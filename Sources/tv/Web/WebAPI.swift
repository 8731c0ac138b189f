import CommandLineParser
import Foundation
import Settings
import TrustStore
import TVHome
import Web

/// `tv web`'s routes: the embedded pages, and `/api/…`, each of which runs the command whose
/// `--json` it serves, in this process, and answers with what that command printed. So the API's
/// shapes are the commands' (one computation, one shape; the README's table maps each route to
/// its command), and a refusal is the command's own sentence.
struct WebAPI: Sendable {
    /// The data folder every command is run on (`--data-dir`; never taken from a request).
    let home: TVHome
    let environment: [String: String]
    /// The Dashboard's figures, sampled on a thread of their own for every event stream.
    let dashboard: DashboardSampler

    init(home: TVHome, environment: [String: String]) {
        self.home = home
        self.environment = environment
        dashboard = DashboardSampler(home: home)
    }

    /// One route: a method, a path pattern (`:id` a positive whole number) and the command it runs.
    struct Route: Sendable {
        let method: String
        let pattern: [String]
        /// The command's words; `:id` / `:n` are replaced by the path's numbers.
        let command: [String]
        /// The query parameters passed on as `--NAME=VALUE` (no others are).
        let options: [String]
        /// Bytes to download rather than JSON: the file name offered (`:id`, `:n` replaced).
        var download: String? = nil
    }

    static let flowFilters = ["host", "program", "audit", "status", "since", "from", "to", "filter", "limit", "after"]

    /// How long a list's filter looks before the page is answered with what it found so far
    /// (`--time-limit`): a filter can arrive in a link, and a regex that backtracks over a long
    /// body would otherwise hold a thread of this server for as long as it runs. The page's
    /// More goes on from where it stopped.
    static let filterTimeLimit = "5s"

    /// Every `/api/` route, in the order the README lists them.
    static let routes: [Route] = [
        Route(method: "GET", pattern: ["flows"], command: ["flows", "--json", "--time-limit=" + filterTimeLimit], options: flowFilters),
        Route(method: "GET", pattern: ["flows", ":id"], command: ["flow", ":id", "--json"], options: []),
        Route(method: "GET", pattern: ["flows", ":id", "packets"], command: ["packets", ":id", "--json"], options: []),
        Route(method: "GET", pattern: ["flows", ":id", "packets", ":n"], command: ["packet", ":id", ":n", "--json"], options: []),
        Route(method: "GET", pattern: ["flows", ":id", "turns"], command: ["turns", ":id", "--json"], options: ["http"]),
        Route(method: "GET", pattern: ["flows", ":id", "turns", ":n", "raw"], command: ["turns", ":id", "--turn", ":n", "--raw"], options: [],
              download: "flow-:id-turn-:n.bin"),
        Route(method: "GET", pattern: ["activity"], command: ["activity", "--json"], options: ["bars", "since", "from", "to"]),
        Route(method: "GET", pattern: ["top"], command: ["top", "--once", "--json"], options: ["session"]),
        Route(method: "GET", pattern: ["status"], command: ["status", "--json"], options: ["session"]),
        Route(method: "GET", pattern: ["diag"], command: ["diag", "--json"], options: ["session"]),
        Route(method: "GET", pattern: ["captures"], command: ["captures", "list", "--json"], options: []),
        Route(method: "GET", pattern: ["captures", "room"], command: ["captures", "room"], options: []),
        Route(method: "POST", pattern: ["captures", ":id", "delete"], command: ["captures", "delete", ":id", "--yes"], options: []),
        Route(method: "POST", pattern: ["captures", "rotate"], command: ["captures", "rotate"], options: []),
        Route(method: "GET", pattern: ["requests"], command: ["requests", "--json", "--time-limit=" + filterTimeLimit],
              options: ["flow", "since", "from", "to", "filter", "limit", "after"]),
        Route(method: "GET", pattern: ["requests", ":id"], command: ["request", ":id", "--json"], options: []),
        Route(method: "GET", pattern: ["settings"], command: ["settings", "show", "--json"], options: []),
        Route(method: "GET", pattern: ["settings", "meanings"], command: ["settings", "show", "--json", "--meanings"], options: []),
        Route(method: "GET", pattern: ["ca"], command: ["ca", "status", "--json"], options: []),
        Route(method: "GET", pattern: ["content"], command: ["content", "status", "--json"], options: []),
        Route(method: "GET", pattern: ["storage"], command: ["storage", "show", "--json"], options: []),
        Route(method: "GET", pattern: ["audit", "projects"], command: ["audit", "projects", "--json"], options: []),
        Route(method: "GET", pattern: ["audit", "sessions"], command: ["audit", "sessions", "--json"], options: []),
        Route(method: "GET", pattern: ["audit", "sessions", ":id"], command: ["audit", "show", ":id", "--json"], options: []),
    ]

    /// A path's number: ASCII digits only (`Int64` also reads `+2`, which was served as flow 2:
    /// one spelling per route, as `WebAccessPolicy.isCanonical` keeps for the rest).
    static func number(_ part: String) -> Int64? {
        guard !part.isEmpty, part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(part)
    }

    func answer(_ request: WebRequest) -> WebResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard parts.first == "api" else { return WebPages.asset(request.path) }
        let rest = Array(parts.dropFirst())
        if rest == ["events"] {
            // The stream answers GET alone (POST and HEAD read "there is no /api/events": a trial).
            guard request.method == "GET" else {
                var refused = WebResponse.error("\(request.path) takes GET, not \(request.method).", status: 405)
                refused.headers.append(("Allow", "GET"))
                return refused
            }
            return WebEvents.response(home: home, api: self)
        }
        if rest == ["settings"], request.method == "POST" { return setSetting(request.body) }
        if let file = WebFileDownload.route(rest, method: request.method, query: request.query) { return written(file) }
        if rest.count == 3, rest[0] == "captures", rest[2] == "file", request.method == "GET", let seq = Self.number(rest[1]) {
            return captureFile(.packets(seq))
        }
        if rest.count == 4, rest[0] == "captures", rest[1] == "decrypted", rest[3] == "file", request.method == "GET" {
            return captureFile(.decrypted(rest[2]))
        }
        for route in Self.routes where route.pattern.count == rest.count {
            var numbers: [String: String] = [:]
            let fits = zip(route.pattern, rest).allSatisfy { pattern, part in
                guard pattern.hasPrefix(":") else { return pattern == part }
                guard let n = Self.number(part), n > 0 else { return false }
                numbers[pattern] = part
                return true
            }
            guard fits else { continue }
            guard route.method == request.method || (route.method == "GET" && request.method == "HEAD") else {
                var refused = WebResponse.error("\(request.path) takes \(route.method), not \(request.method).", status: 405)
                refused.headers.append(("Allow", route.method == "GET" ? "GET, HEAD" : route.method))
                return refused
            }
            let words = route.command.map { numbers[$0] ?? $0 }
            let options = route.options.compactMap { name in request.query[name].map { "--\(name)=\($0)" } }
            // `?http=1` is a switch, not a value.
            let switches = options.map { $0 == "--http=1" ? "--http" : $0 }
            if let name = route.download {
                return download(words, as: route.pattern.reduce(name) { n, p in numbers[p].map { n.replacingOccurrences(of: p, with: $0) } ?? n })
            }
            return run(words + switches)
        }
        return WebResponse.error("There is no \(request.path) in tv web's API; the README lists the routes.", status: 404)
    }

    /// POST /api/settings with `{"key": K, "value": V}`: `tv settings set K V` (saved first, then
    /// a running session told), answered with what it said (`{"said": TEXT}`) or its refusal. A
    /// limit that would delete what is kept is not saved unagreed: 409 `{"consent": QUESTION,
    /// "deletes": N}` (`LimitConsentNeeded`). `"agreed": N` is the page's yes to that question:
    /// saved while it deletes at most N, else asked again with the new count (the count grew
    /// while the question was open: a history.maxAge cutoff moves with the clock, a session
    /// keeps recording). `"yes": true` agrees to any count, as `--yes` does.
    func setSetting(_ body: [UInt8]) -> WebResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let key = object["key"] as? String, let value = object["value"] as? String else {
            return WebResponse.error("A setting change is a JSON object {\"key\": NAME, \"value\": TEXT}.", status: 400)
        }
        // A store named by a relative path would be read against tv web's own working folder,
        // which the page cannot know (a trial's `file:bundle.pem` landed beside where tv web
        // was started): an absolute path, as the setting's meaning says.
        if key == SettingKeys.trustStore.name, let store = try? TrustStoreSpec(parsing: value), store.path.map({ !$0.hasPrefix("/") }) == true {
            return WebResponse.error("In tv web, a trust store's path must be absolute (it would be read against the folder tv web was started in); write it from /.", status: 400)
        }
        let words = ["settings", "set", key, value]
        var answer = object["yes"] as? Bool == true ? run(words + ["--yes"])
            : run(words, agreedCount: (object["agreed"] as? NSNumber)?.intValue)
        // A refused key or value is a bad request, never a missing thing (the command's exit 1).
        if answer.status == 404 { answer.status = 400 }
        return answer
    }

    /// A capture file the routes serve: a packet capture by its sequence number, a decrypted
    /// capture by its file name (`"kind": "decrypted"` in `tv captures --json`).
    enum CaptureFileName {
        case packets(Int64)
        case decrypted(String)
    }

    /// GET /api/captures/SEQ/file and /api/captures/decrypted/NAME/file: the capture file `tv
    /// captures --json` lists so, as a download; only a listed file is served (never a path), and
    /// the one a session is writing is refused (its last record may be half-written), as `tv
    /// captures` says.
    func captureFile(_ which: CaptureFileName) -> WebResponse {
        let listed = run(["captures", "list", "--json"])
        guard listed.status == 200 else { return listed }
        let files = (try? JSONSerialization.jsonObject(with: Data(listed.body)) as? [[String: Any]]) ?? []
        let label: String, missing: String, writing: String
        let matches: ([String: Any]) -> Bool
        switch which {
        case .packets(let seq):
            label = "Capture \(seq)"
            missing = "There is no capture \(seq)"
            writing = "Capture \(seq) is being written; start a new one (`tv captures rotate`) and download this one then."
            matches = { ($0["seq"] as? NSNumber)?.int64Value == seq }
        case .decrypted(let name):
            label = TerminalText.line(name)
            missing = "There is no decrypted capture named \(label)"
            writing = "\(label) is being written by a running session; download it after the session ends."
            matches = { $0["kind"] as? String == "decrypted" && $0["name"] as? String == name }
        }
        guard let file = files.first(where: matches), let path = file["path"] as? String else {
            return WebResponse.error(missing + "; `tv captures` lists the ones there are.", status: 404)
        }
        if file["recording"] as? Bool == true { return WebResponse.error(writing, status: 409) }
        guard let stream = WebFileStream(path: path) else {
            return WebResponse.error("\(label) could not be opened; `tv captures` says whether it is still there.", status: 404)
        }
        let name = path.split(separator: "/").last.map(String.init) ?? "capture.pcapng"
        return WebResponse(status: 200, contentType: "application/x-pcapng", body: [],
                           headers: [("Content-Disposition", "attachment; filename=\"\(name)\"")], stream: stream)
    }

    /// A command's raw output as a file to save (`Content-Disposition: attachment`, RFC 6266).
    func download(_ words: [String], as name: String) -> WebResponse {
        let answer = run(words, raw: true)
        guard answer.status == 200 else { return answer }
        return WebResponse(status: 200, contentType: "application/octet-stream", body: answer.body,
                           headers: [("Content-Disposition", "attachment; filename=\"\(name)\"")])
    }

    /// Runs `tv WORDS --data-dir HOME` in this process and answers with what it printed:
    /// 200 and its standard output, or its one sentence with a status from its exit code
    /// (1 refused or not found: 404; 2 cannot be run as asked: 400; 3 no session: 409). A change
    /// that needs consent (`LimitConsentNeeded`) is run again with `--yes` when it deletes at
    /// most `agreedCount`, else answered 409 with its question and count.
    func run(_ words: [String], raw: Bool = false, agreedCount: Int? = nil) -> WebResponse {
        let parser = CommandLineParser(root: CommandTree.root, globalOptions: CommandTree.globalOptions, version: nil)
        let capture = ConsoleCapture()
        var status: Int
        var exitCode: Int32 = 0
        var sentence: String?
        do {
            guard case .run(let parsed) = try parser.parse(words + ["--data-dir=\(home.path)"]),
                  let handler = CommandTree.handlers[parsed.path.joined(separator: " ")] else {
                return WebResponse.error("tv web could not run \(words.joined(separator: " ")).", status: 500)
            }
            var console = Console()
            console.capture = capture
            let code = try handler(Invocation(command: parsed, environment: environment, console: console))
            exitCode = code
            status = code == 0 ? 200 : 500
        } catch let error as CommandLineError {
            status = 400
            sentence = error.message
        } catch let consent as LimitConsentNeeded {
            if let agreedCount, consent.count <= agreedCount { return run(words + ["--yes"], raw: raw) }
            // Not saved: the page asks `consent` and sends the change again with `"agreed": deletes`.
            return WebResponse.json(JSONValue.object([("error", .string(consent.question)), ("consent", .string(consent.question)),
                                                      ("deletes", .int(Int64(consent.count)))]).serialized(), status: 409)
        } catch let error as UserFacingError {
            status = [1: 404, 2: 400, 3: 409][error.exitCode] ?? 500
            sentence = error.message
        } catch {
            status = 500
            sentence = "unexpected error: \(error)"
        }
        if let sentence { return WebResponse.error(sentence, status: status) }
        let out = capture.out
        let isJSON = out.first.map { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") } ?? false
        // A command that answers in JSON and exits non-zero (`tv diag` with no session: 3; `tv ca
        // status` in doubt: 1) has still answered: its JSON is served, its exit code beside it.
        if isJSON && !raw { return WebResponse(status: 200, contentType: "application/json; charset=utf-8", body: out, headers: [("X-TV-Exit", String(exitCode))]) }
        if status != 200 { return WebResponse.error(capture.err.trimmingCharacters(in: .whitespacesAndNewlines), status: status) }
        if raw { return WebResponse(status: 200, contentType: "application/octet-stream", body: out) }
        if isJSON { return WebResponse(status: 200, contentType: "application/json; charset=utf-8", body: out) }
        return WebResponse.json(JSONValue.object([("said", .string(String(decoding: out, as: UTF8.self)))]).serialized())
    }
}
