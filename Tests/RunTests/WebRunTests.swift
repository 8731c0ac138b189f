import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv run --web` with real curl: the security checks answered over HTTP (wrong Host, no token,
/// a cross-origin POST refused; no cookie, the token sent as a bearer), the API answering what the
/// commands' --json print, and Server-Sent Events telling a new flow. Then headless Chromium
/// (Browser/web_browser.py) drives every screen.
@Suite("tv web (issue 24)", .serialized)
struct WebRunTests {
    /// The URL `tv run --web` printed, split.
    struct Served {
        let base: String
        let port: String
        let token: String
        /// The header the pages (and scripts) send it in.
        var bearer: String { "Authorization: Bearer \(token)" }
        var origin: String { base }
    }

    func served(_ session: TVSession) throws -> Served {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let line = session.log().split(separator: "\n").first(where: { $0.hasPrefix("tv web: http://") }) {
                let url = line.dropFirst("tv web: ".count)
                let parts = url.components(separatedBy: "/?token=")
                let port = parts[0].components(separatedBy: ":").last ?? ""
                return Served(base: parts[0], port: port, token: parts[1])
            }
            usleep(50_000)
        }
        throw WebNotServed(log: session.log())
    }
    struct WebNotServed: Error { let log: String }

    /// A process run on another thread, waited for once.
    final class Background: @unchecked Sendable {
        // Written by the worker before it signals, read after `wait` saw the signal.
        private var result: ProcessOutput?
        private let done = DispatchSemaphore(value: 0)
        init(_ work: @escaping @Sendable () -> ProcessOutput?) {
            DispatchQueue.global().async { self.result = work(); self.done.signal() }
        }
        func wait() -> ProcessOutput? { done.wait(); return result }
    }

    /// curl's status code (and headers with `-D -`).
    func code(_ box: Sandbox, _ arguments: [String]) throws -> String {
        try box.curl(["-o", "/dev/null", "-w", "%{http_code}"] + arguments).out
    }

    @Test func securityChecksOverHTTP() throws {
        let world = try RunWorld()
        let session = try world.run("--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let web = try served(session)
        let box = world.sandbox
        #expect(web.token.count == 64)
        // No token: the API refused; the pages (tv's own code, nothing recorded) served.
        #expect(try code(box, [web.base + "/api/flows"]) == "403")
        #expect(try code(box, [web.base + "/"]) == "200")
        #expect(try code(box, [web.base + "/app.js"]) == "200")
        // A path spelled another way reaches no route without the token: `//api/…` and
        // `/%2Fapi/…` (libmicrohttpd decodes %2F) answered every GET of the API (a trial).
        for path in ["//api/settings", "/%2Fapi/settings", "//api/events", "/./api/settings", "/x/../api/flows", "/api//flows"] {
            #expect(try code(box, ["--path-as-is", "-m", "2", web.base + path]) == "400", "\(path)")
        }
        #expect(try code(box, ["--path-as-is", "-H", web.bearer, web.base + "//api/settings"]) == "400")
        // An escaped NUL cut the path short: `/api/status%00junk` was served as `/api/status`.
        for path in ["/api/status%00junk", "/app.js%00.html", "/api/flows/1%00xyz"] {
            #expect(try code(box, ["--path-as-is", "-H", web.bearer, web.base + path]) == "400", "\(path)")
        }
        // A wrong token.
        #expect(try code(box, [web.base + "/api/har?token=" + String(repeating: "0", count: 64)]) == "403")
        #expect(try code(box, ["-H", "Authorization: Bearer " + String(repeating: "0", count: 64), web.base + "/api/flows"]) == "403")
        // DNS rebinding: another name for the same address, with the right token, pages too.
        #expect(try code(box, ["-H", "Host: evil.example:\(web.port)", web.base + "/?token=" + web.token]) == "421")
        #expect(try code(box, ["-H", "Host: evil.example:\(web.port)", "-H", web.bearer, web.base + "/api/flows"]) == "421")
        // The printed URL sets no cookie (a browser sends 127.0.0.1's cookies to every port of it:
        // a trial's server on another port logged the token) and redirects nowhere: the page takes
        // the token itself. A cookie, even with the right token, is no credential.
        let printed = try box.curl(["-D", "-", "-o", "/dev/null", web.base + "/?token=" + web.token]).out
        #expect(printed.hasPrefix("HTTP/1.1 200") && !printed.lowercased().contains("set-cookie"), "\(printed)")
        #expect(try code(box, ["-b", "tv_web_\(web.port)=\(web.token)", web.base + "/api/flows"]) == "403")
        // In the query, the token serves only what cannot send a header: the event stream and the
        // download links (it served every GET: a re-check).
        #expect(try code(box, ["-m", "2", web.base + "/api/events?token=" + web.token]) == "200")
        // The stream takes GET alone: another method is 405, not "there is no /api/events" (a trial).
        #expect(try code(box, ["-X", "POST", "-H", web.bearer, "-H", "Origin: " + web.base, web.base + "/api/events"]) == "405")
        // One spelling of a number: `+2` was served as flow 2 (a trial); a cursor tv never gave
        // out is the request's fault (400), not a missing thing (404).
        #expect(try code(box, ["-H", web.bearer, web.base + "/api/flows/+2"]) == "404")
        #expect(try code(box, ["-H", web.bearer, web.base + "/api/flows?after=%22%3E"]) == "400")
        #expect(try code(box, [web.base + "/api/status?token=" + web.token]) == "403")
        #expect(try code(box, [web.base + "/api/flows?token=" + web.token]) == "403")
        // The page, with the policy and no inline script.
        let page = try box.curl(["-D", "-", web.base + "/"]).out
        #expect(page.contains("Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self';"))
        #expect(page.contains("<script src=\"/app.js\" defer></script>"))
        #expect(page.contains("Referrer-Policy: no-referrer"))
        // localhost is one of its names.
        #expect(try code(box, ["-H", web.bearer, "http://localhost:\(web.port)/api/status"]) == "200")
        // A cross-origin POST is refused, with the token; a same-origin one, or a script's (no
        // Origin), changes the setting; without the token none does.
        let change = ["-X", "POST", "-H", "Content-Type: application/json", "--data", #"{"key":"content.expiry","value":"1h"}"#]
        #expect(try code(box, change + ["-H", web.bearer, "-H", "Origin: http://evil.example", web.base + "/api/settings"]) == "403")
        #expect(try code(box, change + ["-H", web.bearer, "-H", "Sec-Fetch-Site: cross-site", web.base + "/api/settings"]) == "403")
        #expect(try code(box, change + ["-H", "Origin: \(web.origin)", web.base + "/api/settings"]) == "403")
        #expect(try code(box, change + ["-H", "Origin: \(web.origin)", web.base + "/api/settings?token=" + web.token]) == "403")
        #expect(try box.tv("settings", "get", "content.expiry").out.trimmingCharacters(in: .whitespacesAndNewlines) != "1h")
        #expect(try code(box, change + ["-H", web.bearer, "-H", "Origin: \(web.origin)", web.base + "/api/settings"]) == "200")
        #expect(try box.tv("settings", "get", "content.expiry").out.trimmingCharacters(in: .whitespacesAndNewlines) == "1h")
        // Other methods are refused, with Allow (RFC 9110 §15.5.6; none was said: a trial), and a
        // POST to a page (it answered 200: a trial).
        #expect(try code(box, ["-X", "DELETE", "-H", web.bearer, web.base + "/api/flows"]) == "405")
        let refused = try box.curl(["-s", "-D", "-", "-o", "/dev/null", "-X", "PUT", "-H", web.bearer, web.base + "/api/settings"]).out
        #expect(refused.hasPrefix("HTTP/1.1 405") && refused.contains("Allow: GET, HEAD, POST\r\n"), "\(refused)")
        let routeRefused = try box.curl(["-s", "-D", "-", "-o", "/dev/null", "-X", "POST", "-H", web.bearer, "-H", "Origin: \(web.origin)", web.base + "/api/status"]).out
        #expect(routeRefused.hasPrefix("HTTP/1.1 405") && routeRefused.contains("Allow: GET, HEAD\r\n"), "\(routeRefused)")
        // A HEAD says the GET's length (RFC 9110 §9.3.2; it said 0: a trial).
        let page0 = try box.curl(["-s", web.base + "/"]).stdout.count
        let head = try box.curl(["-s", "-I", web.base + "/"]).out
        #expect(head.contains("Content-Length: \(page0)\r\n") && page0 > 1_000, "\(head)")
        // Two Host lines: 400, whichever comes first (the first was the one judged: a trial).
        // (curl sends one Host line whatever it is given: written by hand.)
        let doubled = try box.tool("python3", ["-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.sendall(("GET /api/status HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\nHost: evil.example\\r\\n%s\\r\\nConnection: close\\r\\n\\r\\n" % (sys.argv[1], sys.argv[2])).encode())
            print(s.recv(100).decode().splitlines()[0])
            """, web.port, web.bearer])
        #expect(doubled.out == "HTTP/1.1 400 Bad Request\n", "\(doubled)")
        #expect(try code(box, ["-X", "POST", "-H", web.bearer, "-H", "Origin: \(web.origin)", web.base + "/app.js"]) == "405")
        // A browser's visit of another name gets a page saying so, escaped; the API stays JSON.
        let rebound = try box.curl(["-H", "Accept: text/html", "-H", "Host: <b>x</b>:\(web.port)", "-w", "\n%{http_code}", web.base + "/"]).out
        #expect(rebound.hasPrefix("<!doctype html>") && rebound.contains("&lt;b&gt;x&lt;/b&gt;") && !rebound.contains("<b>") && rebound.hasSuffix("\n421"), "\(rebound)")
        #expect(try box.curl(["-H", "Accept: text/html", web.base + "/api/flows"]).out.hasPrefix("{\"error\""))
        // The Bearer scheme, in any case (RFC 9110 §11.1); another scheme is no token.
        #expect(try code(box, ["-H", "Authorization: bearer \(web.token)", web.base + "/api/status"]) == "200")
        #expect(try code(box, ["-H", "Authorization: Basic \(web.token)", web.base + "/api/status"]) == "403")
        // Idle sockets from another local process do not take every slot (a trial's 70 held the
        // old 64, and the pages got no answer for two minutes).
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<70 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: (UInt16(web.port) ?? 0).bigEndian,
                                      sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
            let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            #expect(connected == 0)
            idle.append(fd)
        }
        #expect(try code(box, ["-m", "10", "-H", web.bearer, web.base + "/api/status"]) == "200")
    }

    @Test func theAPIAnswersWhatTheCommandsPrint() throws {
        let world = try RunWorld()
        let session = try world.run("--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let web = try served(session)
        let box = world.sandbox
        // Server-Sent Events, listened to while a flow is made: the flows are made once the
        // stream has begun (its `retry:` line is in the file), not after a fixed wait (a loaded
        // CI run connected the stream 800 ms after the flows and saw neither open).
        let told = box.work + "/events.txt"
        let events = Background { try? box.curl(["-N", "--max-time", "30", "-o", told, "-H", web.bearer, web.base + "/api/events"], timeout: 40) }
        func toldSoFar() -> String { (try? String(contentsOfFile: told, encoding: .utf8)) ?? "" }
        for _ in 0..<200 where !toldSoFar().contains("retry:") { usleep(50_000) }
        try #require(toldSoFar().contains("retry:"), "the event stream did not begin within 10 s")
        for path in ["/a", "/b"] { _ = try world.curlThrough(session, [world.url(path)]) }
        let rows = try box.closedFlows(2)
        func api(_ path: String) throws -> Any {
            let answer = try box.curl(["-H", web.bearer, web.base + path])
            return try JSONSerialization.jsonObject(with: answer.stdout)
        }
        let listed = try #require(try api("/api/flows?limit=10000") as? [String: Any])
        let ids = (listed["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }.sorted()
        #expect(ids == rows.compactMap { $0["id"] as? Int })
        // One flow, as `tv flow ID --json`.
        let id = try #require(ids.last)
        let shown = try #require(try api("/api/flows/\(id)") as? [String: Any])
        let command = try box.json("flow", String(id))
        #expect(NSDictionary(dictionary: shown) == NSDictionary(dictionary: command))
        // Filters pass through: a status no flow has.
        let none = try #require(try api("/api/flows?status=kept_private") as? [String: Any])
        #expect((none["flows"] as? [Any])?.count == 0)
        // A refusal is the command's sentence.
        let bad = try box.curl(["-H", web.bearer, "-w", "\n%{http_code}", web.base + "/api/flows?status=nope"]).out
        #expect(bad.hasSuffix("\n400"))
        #expect(bad.contains("'nope' is not a status"))
        #expect(try code(box, ["-H", web.bearer, web.base + "/api/flows/999999"]) == "404")
        #expect(try code(box, ["-H", web.bearer, web.base + "/api/nothing"]) == "404")
        // A session that captures nothing has no file to rotate: 409, as with no session (it was
        // 404), and the command exits 3.
        #expect(try code(box, ["-X", "POST", "-H", web.bearer, "-H", "Origin: \(web.origin)", web.base + "/api/captures/rotate"]) == "409")
        let rotate = try box.tv("captures", "rotate")
        #expect(rotate.status == 3 && rotate.err.contains("The running session captures no packets"), "\(rotate)")
        // Audit: the routes run `tv audit … --json`, so a project made on the command line is there.
        _ = try box.tv("audit", "project", "new", "web-check", "--note", "from the web test")
        let projects = try #require(try api("/api/audit/projects") as? [[String: Any]])
        #expect(projects.map { $0["name"] as? String } == ["web-check"], "\(projects)")
        let sessions = try #require(try api("/api/audit/sessions") as? [Any])
        #expect(sessions.isEmpty, "\(sessions)")
        #expect(try code(box, ["-H", web.bearer, web.base + "/api/audit/sessions/12345"]) != "200")
        // Storage, as `tv storage --json` says it: the history holds both flows.
        let stored = try #require(try api("/api/storage") as? [String: Any])
        #expect((stored["history"] as? [String: Any])?["flows"] as? Int == rows.count && stored["totalBytes"] is Int, "\(stored)")
        // The activity axis counts them.
        let activity = try #require(try api("/api/activity?bars=10") as? [String: Any])
        let counted = (activity["buckets"] as? [[String: Any]] ?? []).compactMap { $0["count"] as? Int }.reduce(0, +)
        #expect(counted == rows.count)
        // The events told both flows as they opened (waited for ≤ 20 s; then the session ends
        // the stream).
        let opened = rows.map { "event: flow\ndata: {\"event\":\"opened\",\"flow\":{\"id\":\($0["id"] as? Int ?? -1)," }
        for _ in 0..<400 where !opened.allSatisfy(toldSoFar().contains) { usleep(50_000) }
        let stream = toldSoFar()
        for line in opened { #expect(stream.contains(line), "\(stream)") }
        session.kill()
        _ = events.wait()
    }

    /// A filter whose regex backtracks for as long as anyone cares to wait, asked through the web
    /// view: the page answers at the time limit, and Ctrl-C while one is being worked out still
    /// ends the session within a few seconds, says it was not waited for, and everything is saved
    /// (a trial's `tv run --web` closed its proxy and never exited).
    @Test func ctrlCEndsASessionWhoseWebAnswerRunsOn() throws {
        let world = try RunWorld()
        try Data(String(repeating: "x", count: 3_000).utf8).write(to: URL(fileURLWithPath: world.www + "/xs.txt"))
        let box = world.sandbox
        let session = try world.run("--inspect", "--keep-content", "--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let web = try served(session)
        #expect(try world.curlThrough(session, ["-o", "/dev/null", world.url("/xs.txt")]).status == 0)
        _ = try box.closedFlows(1)
        let filter = "~bs%20%27(x%2Bx%2B)%2By%27"
        // Asked and waited for, the page answers at tv web's time limit (5 s), saying where it
        // stopped: request 1's search was cut (it ran on for as long as the regex did).
        let answered = try box.curl(["--max-time", "60", "-H", web.bearer, web.base + "/api/requests?filter=" + filter], timeout: 70)
        let page = try #require(try JSONSerialization.jsonObject(with: answered.stdout) as? [String: Any], "\(answered)")
        let stopped = try #require(page["stopped"] as? [String: Any], "\(page)")
        #expect(stopped["cut"] as? Int == 1 && stopped["looked"] as? Int == 1 && stopped["limitSeconds"] as? Double == 5, "\(stopped)")
        #expect(page["nextCursor"] is String, "\(page)")
        let stuck = Background { try? box.curl(["--max-time", "60", "-H", web.bearer, web.base + "/api/requests?filter=" + filter], timeout: 70) }
        usleep(1_500_000)
        let started = Date()
        session.send(SIGINT)
        #expect(session.waitForExit(seconds: 10), "tv run did not exit within 10 s of Ctrl-C:\n\(session.log())")
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(session.log().contains("tv web: an answer was still being worked out (a filter over kept bodies?); it was not waited for."), "\(session.log())")
        #expect(session.log().contains("tv stopped"), "\(session.log())")
        _ = stuck.wait()
    }

    /// Where the screenshots go: $TV_TEST_OUTPUT/web-screens, else .build/test-output/web-screens.
    static var screenshotFolder: String {
        let root = ProcessInfo.processInfo.environment["TV_TEST_OUTPUT"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/test-output").path
        return root + "/web-screens"
    }

    @Test func everyScreenInHeadlessChromium() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing: Scripts/packages.sh installs chromium and chromium-driver")
            return
        }
        // The last flow fetches 200,000 characters of text gzip'd by nginx: a small kept turn
        // that decodes past what the HTTP view draws of one body (`BODY_SHOWN`). The second
        // fetches JSON holding U+0080, a C1 control: text, not a hex dump, on the page as in
        // `tv request` (a trial).
        let world = try RunWorld(nginxLocations: """
            location /gz/ { gzip on; gzip_types text/plain; gzip_min_length 1; }
            location /json/ { default_type application/json; }
            """)
        try FileManager.default.createDirectory(atPath: world.www + "/gz", withIntermediateDirectories: true)
        try Data(String(repeating: "tv web draws the first 64 KiB of this\n", count: 5_000).utf8).write(to: URL(fileURLWithPath: world.www + "/gz/big.txt"))
        try FileManager.default.createDirectory(atPath: world.www + "/json", withIntermediateDirectories: true)
        try Data("{\"name\":\"a\u{80}b\"}".utf8).write(to: URL(fileURLWithPath: world.www + "/json/c1.json"))
        let box = world.sandbox
        // Inspecting and keeping content, so the conversation screen has turns to draw; recorded
        // as an audit session, so the Audit screens have a session, its flows and a marker.
        #expect(try box.tv("audit", "project", "new", "web-screens").status == 0)
        let session = try world.run("--inspect", "--keep-content", "--audit", "web-screens", "--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let web = try served(session)
        // Two seconds apart, so the scrub bar's one-second bars hold flows and gaps between them.
        // The last one's query is 6,000 characters: with content kept, its row's path carries it,
        // and the Flow Inspector must not grow wider than the window for it (59,125 px: a trial).
        for (i, path) in ["/a", "/json/c1.json", "/gz/big.txt?" + String(repeating: "q", count: 6_000)].enumerated() {
            if i > 0 { usleep(2_100_000) }
            // The last carries a right-to-left override in a header: drawn escaped (a trial's page
            // drew it raw, reordering the line), as `tv flow` prints it.
            let hostile = i == 2 ? ["-H", "X-Evil: right\u{202E}txt.exe"] : []
            #expect(try world.curlThrough(session, hostile + ["--compressed", "-o", "/dev/null", world.url(path)]).status == 0)
            if i == 0 { #expect(try box.tv("audit", "mark", "between", "the", "screens").status == 0) }
        }
        let ids = try box.closedFlows(3).compactMap { $0["id"] as? Int }
        let folder = Self.screenshotFolder
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/web_browser.py").path
        // Debian's python3, which python3-selenium installs into (a PATH python may be another).
        let result = try box.tool("/usr/bin/python3", [script, web.base + "/?token=" + web.token, folder, ids.map(String.init).joined(separator: ","),
                                              session.proxyURL, web.base + "/live", world.tvRoot, String(session.pid)], timeout: 240)
        #expect(result.status == 0, "\(result.all)")
        for check in ["every screen loaded at 1280x800", "every screen loaded at 390x844", "the Timeline shows the flows tv flows --json shows",
                      "tapping a bar filters the list", "a sweep across the bars bounds the list", "a click on a row opens flow", "the conversation shows its turns", "a new flow appeared without a reload", "no console errors",
                      "a body past what the HTTP view draws is cut there, and said", "the session's own switches are said beside the saved values",
                      "sizes read as tv flows writes them",
                      "every screen readable at 200 % zoom", "a setting changed says what tv settings set said, a refusal its sentence",
                      "the setup shows its steps and the stage", "diagnostics show the verdict and its five sections",
                      "the audit session shows its flows and marker and offers its bundle", "the Timeline's HAR holds the picked interval's requests",
                      "retention winning the stretch is said under the scrub bar", "a flow's HAR downloads from its inspector", "the session gone is said",
                      "the token was taken and dropped from the address, no cookie set", "nine tabs at once each load and go live",
                      "Requests shows the requests tv requests --json shows", "a filter narrows the requests", "a refused filter says tv's sentence",
                      "a request opens from its row with its kept messages", "storage says each store beside its limit",
                      "the host and path stay readable at 800 px", "each request's id and scheme are columns",
                      "a request opened from the list goes back to the list as it was filtered",
                      "the Requests filter is kept in the address: reload, Back, Forward and a link",
                      "a filter that backtracks stops at the time limit and goes on from there",
                      "the Timeline filter is kept in the address: reload, Back, Forward and a link",
                      "a JSON body holding U+0080 is drawn as text", "a request opened from a flow goes back to the flow",
                      "a route's filter and a request's way back read exactly", "the skip link focuses the screen and keeps the route"] {
            #expect(result.out.contains("ok: " + check), "\(result.all)")
        }
        // The same body, as `tv request` prints it: text, the control escaped (the one rule,
        // `PrintableText`, decides for both that it is text; the JSON view escapes it as JSON
        // does, so the lines read back as the body sent).
        let listed = try box.json("requests", "--filter", "~u c1")
        let jsonID = try #require((listed["requests"] as? [[String: Any]])?.first?["id"] as? Int, "\(listed)")
        let printed = try box.tv("request", String(jsonID))
        #expect(printed.out.contains("    body: 15 bytes of JSON\n      {\n        \"name\": \"a\\u0080b\"\n      }"), "\(printed)")
        #expect(FileManager.default.fileExists(atPath: folder + "/timeline-390x844.png"))
    }

    /// `tv web --listen 127.0.0.1:0` alone over the sandbox's data folder: the process (stopped by
    /// the caller) and the one line it printed, the URL (empty if none came within 10 s).
    func webAlone(_ box: Sandbox, listen: String = "127.0.0.1:0") throws -> (Child, String) {
        let out = box.root + "/web.out"
        let outFD = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(outFD) }
        let process = try Child(try TVBinary.require(), ["--data-dir", box.dataDir, "web", "--listen", listen],
                                environment: box.environment, stdout: outFD)
        var line = ""
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !line.hasSuffix("\n") {
            line = box.text(out)
            usleep(20_000)
        }
        return (process, line.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `tv web` alone, over a data folder no session runs on: one line on standard output (the
    /// URL), the API for a script with the bearer token, and SIGTERM ending it.
    @Test func tvWebAloneServesScripts() throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let (process, url) = try webAlone(box)
        defer { process.stop() }
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/?token="))
        let parts = url.components(separatedBy: "/?token=")
        let bearer = ["-H", "Authorization: Bearer " + parts[1]]
        let flows = try box.curl(bearer + ["-w", "\n%{http_code}", parts[0] + "/api/flows"]).out
        #expect(flows == "{\n  \"flows\": [],\n  \"damaged\": [],\n  \"nextCursor\": null,\n  \"unsavedFlows\": []\n}\n\n200")
        #expect(try code(box, ["-H", "Authorization: Bearer nope", parts[0] + "/api/flows"]) == "403")
        let diag = try box.curl(bearer + [parts[0] + "/api/diag"]).out
        #expect(diag.contains("\"running\": false"))
        process.send(SIGTERM)
        #expect(process.wait(seconds: 5))
        #expect(process.status == 0)
    }

    /// `tv web --data-dir` naming a folder that does not exist says so (a trial's mistyped folder
    /// served empty pages without a word), and serves anyway: a session may make it.
    @Test func tvWebOverAMissingFolderSaysSo() throws {
        let box = try Sandbox()
        defer { box.remove() }
        let missing = box.root + "/no-such-folder"
        let log = box.root + "/web.log"
        let process = try Child(try TVBinary.require(), ["--data-dir", missing, "web", "--listen", "127.0.0.1:0"], environment: box.environment, log: log)
        defer { process.stop() }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !box.text(log).contains("There is no data folder") { usleep(20_000) }
        #expect(box.text(log).contains("/?token=") && box.text(log).contains("There is no data folder at \(missing) yet; `tv run`, `tv exec` or `tv setup` makes one."),
                "\(box.text(log))")
    }

    /// The decrypted captures in `/api/captures` and their download (a trial: the list and the
    /// API named only packet captures): a listed name is served byte for byte; a name not listed,
    /// or a path, is not.
    @Test func decryptedCaptureListedAndDownloaded() throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let folder = box.dataDir + "/captures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = "decrypted-20261204-101500.pcapng"
        let bytes = Data((0..<5_000).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: folder + "/" + name))
        let (process, url) = try webAlone(box)
        defer { process.stop() }
        let parts = url.components(separatedBy: "/?token=")
        try #require(parts.count == 2, "\(url)")
        let bearer = ["-H", "Authorization: Bearer " + parts[1]]
        let listed = try box.curl(bearer + [parts[0] + "/api/captures"]).out
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]], "\(listed)")
        #expect(entries.count == 1 && entries[0]["kind"] as? String == "decrypted" && entries[0]["name"] as? String == name
                && entries[0]["bytes"] as? Int == 5_000, "\(listed)")
        let saved = box.root + "/saved.pcapng"
        let got = try box.curl(bearer + ["-o", saved, "-w", "%{http_code}", parts[0] + "/api/captures/decrypted/\(name)/file"])
        #expect(got.out == "200", "\(got)")
        #expect(FileManager.default.contents(atPath: saved) == bytes)
        #expect(try code(box, bearer + [parts[0] + "/api/captures/decrypted/decrypted-20261204-101501.pcapng/file"]) == "404")
        // libmicrohttpd decodes %2F: a `..` segment, refused before any route is looked at.
        #expect(try code(box, bearer + ["--path-as-is", parts[0] + "/api/captures/decrypted/..%2Fca%2Froot-key.pem/file"]) == "400")
        #expect(try code(box, bearer + ["--path-as-is", parts[0] + "/api/captures/decrypted/%2E%2E%2Fca%2Froot-key.pem/file"]) == "400")
    }

    /// `tv web --listen 0.0.0.0:0` (found by a new-user trial: it printed an `http://0.0.0.0:…` URL
    /// and refused every name but that one with 421): it prints the loopback URL and answers to
    /// the machine's own addresses; a name it was not given is still refused.
    @Test func tvWebOnEveryAddressAnswersToTheMachinesAddresses() throws {
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let (process, url) = try webAlone(box, listen: "0.0.0.0:0")
        defer { process.stop() }
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/?token="), "\(url)")
        let parts = url.components(separatedBy: "/?token=")
        let port = parts[0].components(separatedBy: ":").last ?? ""
        let bearer = ["-H", "Authorization: Bearer " + parts[1]]
        #expect(try code(box, bearer + [parts[0] + "/api/flows"]) == "200")
        #expect(try code(box, bearer + ["-H", "Host: localhost:\(port)", parts[0] + "/api/flows"]) == "200")
        #expect(try code(box, bearer + ["-H", "Host: rebound.example:\(port)", parts[0] + "/api/flows"]) == "421")
        #expect(try code(box, bearer + ["-H", "Host: 0.0.0.0:\(port)", parts[0] + "/api/flows"]) == "421")
    }

    /// `tv web` alone over a data folder whose flow database is unreadable and where no session
    /// runs: headless Chromium (Browser/web_states.py) sees the Timeline say `tv flows`'s own
    /// sentence and the Dashboard's monitoring card say it is off.
    @Test func errorStatesInHeadlessChromium() throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing: Scripts/packages.sh installs chromium and chromium-driver")
            return
        }
        let box = try Sandbox()
        defer { box.remove() }
        try box.createCA()
        let database = box.dataDir + "/tunnelvision.sqlite3"
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: URL(fileURLWithPath: database))
        let flows = try box.tv("flows")
        #expect(flows.status != 0)
        let sentence = flows.err.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "tv: ", with: "")
        #expect(sentence.contains("is corrupt"), "\(flows)")
        let (process, url) = try webAlone(box)
        defer { process.stop() }
        let folder = Self.screenshotFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/web_states.py").path
        let result = try box.tool("/usr/bin/python3", [script, url, folder, sentence], timeout: 120)
        #expect(result.status == 0, "\(result.all)")
        #expect(result.out.contains("ok: without the token the page says so"), "\(result.all)")
        for size in ["1280x800", "390x844"] {
            #expect(result.out.contains("ok: the Timeline says the store is unreadable at \(size)"), "\(result.all)")
            #expect(result.out.contains("ok: the Dashboard says monitoring is off at \(size)"), "\(result.all)")
        }
    }
}
