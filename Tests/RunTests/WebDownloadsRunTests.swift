import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv run --web` with real curl (issue 24): the downloads a command writes to a file are what
/// the command writes (HAR of a flow and of the Timeline's filter, `tv export har`; the audit
/// bundle, `tv audit bundle`, which `tv audit verify` passes); the Settings screen's meanings and
/// its changes answered in the command's own sentences; and the Dashboard's figures sampled off
/// the event stream's path (the stream answers at once and a flow is told within a poll).
@Suite("tv web: downloads, settings and live figures (issue 24)", .serialized)
struct WebDownloadsRunTests {
    let web = WebRunTests()

    func get(_ box: Sandbox, _ served: WebRunTests.Served, _ path: String, to file: String? = nil) throws -> ProcessOutput {
        try box.curl(["-sS", "-H", served.bearer, "-D", box.work + "/headers.txt"] + (file.map { ["-o", $0] } ?? []) + [served.base + path])
    }

    func object(_ path: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) }

    /// tv-web-* folders in the temporary folder (each download makes one and removes it).
    func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []).filter { $0.hasPrefix("tv-web-") }
    }

    @Test func downloadsAreWhatTheCommandsWrite() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("audit", "project", "new", "web-audit").status == 0)
        let session = try world.run("--inspect", "--keep-content", "--audit", "web-audit", "--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let served = try web.served(session)
        let before = Set(leftovers())
        #expect(try world.curlThrough(session, ["--http1.1", world.url("/index.html")]).status == 0)
        #expect(try box.tv("audit", "mark", "between", "the", "two").status == 0)
        #expect(try world.curlThrough(session, ["--http2", world.url("/index.html?two")]).status == 0)
        let ids = try box.closedFlows(2).compactMap { $0["id"] as? Int }.sorted()

        // One flow's conversation: what `tv export har ID` writes, offered as a file.
        _ = try get(box, served, "/api/flows/\(ids[0])/har", to: box.work + "/web.har")
        let headers = box.text(box.work + "/headers.txt")
        #expect(headers.hasPrefix("HTTP/1.1 200"), "\(headers)")
        #expect(headers.contains("Content-Disposition: attachment; filename=\"flow-\(ids[0]).har\"\r\n"), "\(headers)")
        #expect(try box.tv("export", "har", String(ids[0]), "-o", "cli.har").status == 0)
        let one = try #require(try object(box.work + "/web.har") as? [String: Any])
        #expect(NSDictionary(dictionary: one) == NSDictionary(dictionary: try #require(try object(box.work + "/cli.har") as? [String: Any])))
        let entries = (one["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        #expect(entries.count == 1, "\(one)")

        // The Timeline's filter (the last hour): every flow it lists, as `tv export har IDS` writes them.
        _ = try get(box, served, "/api/har?since=1h", to: box.work + "/timeline.har")
        #expect(try box.tvArgs(["export", "har"] + ids.map(String.init) + ["-o", "cli-all.har"]).status == 0)
        let all = try #require(try object(box.work + "/timeline.har") as? [String: Any])
        #expect(NSDictionary(dictionary: all) == NSDictionary(dictionary: try #require(try object(box.work + "/cli-all.har") as? [String: Any])))
        #expect(((all["log"] as? [String: Any])?["entries"] as? [Any])?.count == 2)
        // A filter that selects nothing says so.
        let none = try box.curl(["-sS", "-H", served.bearer, "-w", "\n%{http_code}", served.base + "/api/har?status=kept_private"]).out
        #expect(none == #"{"error":"No connection matches these filters, so there is no HAR to make; clear a filter and try again."}"# + "\n404")
        // `filter` picks requests, as `tv export har --filter` does (it picked flows: a trial).
        let query = "~u two"
        _ = try get(box, served, "/api/har?since=1h&filter=" + (query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), to: box.work + "/picked.har")
        #expect(try box.tvArgs(["export", "har", "--filter", query, "-o", "cli-picked.har"]).status == 0)
        let picked = try #require(try object(box.work + "/picked.har") as? [String: Any])
        #expect(NSDictionary(dictionary: picked) == NSDictionary(dictionary: try #require(try object(box.work + "/cli-picked.har") as? [String: Any])))
        #expect(((picked["log"] as? [String: Any])?["entries"] as? [Any])?.count == 1, "\(picked)")

        // The audit bundle: `tv audit verify` passes the downloaded file; without content and keys, the bare list.
        #expect(try box.tv("audit", "stop").status == 0)
        _ = try get(box, served, "/api/audit/sessions/1/bundle", to: box.work + "/web-bundle.tar.gz")
        #expect(box.text(box.work + "/headers.txt").contains("Content-Disposition: attachment; filename=\"audit-session-1.tar.gz\"\r\n"))
        let verify = try box.tv("audit", "verify", "web-bundle.tar.gz")
        #expect(verify.status == 0 && verify.out.contains("web-bundle.tar.gz is intact: all"), "\(verify)")
        _ = try get(box, served, "/api/audit/sessions/1/bundle?content=no&keys=no", to: box.work + "/bare.tar.gz")
        let bare = try box.tool("tar", ["-tzf", box.work + "/bare.tar.gz"])
        #expect(bare.out == "manifest.json\nproject.json\nsession.json\nmarkers.json\nflows.json\n", "\(bare)")
        // Anything but yes or no is refused before a bundle is made: keys=false put the TLS
        // secrets in the bundle, as everything but exactly `no` did (a trial).
        for value in ["keys=false", "keys=0", "content=false", "keys=NO"] {
            let vague = try box.curl(["-sS", "-H", served.bearer, "-w", "\n%{http_code}", served.base + "/api/audit/sessions/1/bundle?" + value]).out
            #expect(vague == #"{"error":"A bundle's content= and keys= take yes or no (nothing else); give keys=no to leave the TLS secrets out, content=no the kept content."}"# + "\n400",
                    "\(value): \(vague)")
        }
        // A session there is not: the command's sentence.
        let missing = try box.curl(["-sS", "-H", served.bearer, "-w", "\n%{http_code}", served.base + "/api/audit/sessions/99/bundle"]).out
        #expect(missing.hasSuffix("\n404") && missing.contains("99"), "\(missing)")
        // Nothing is left behind in the temporary folder.
        #expect(Set(leftovers()) == before)

        // The audit session's flows: `tv flows --audit 1`.
        let listed = try #require(try JSONSerialization.jsonObject(with: try get(box, served, "/api/flows?audit=1").stdout) as? [String: Any])
        #expect((listed["flows"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }.sorted() == ids)
    }

    @Test func settingsSayWhatTheyMeanAndRefuseInTheCommandsWords() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let session = try world.run("--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let served = try web.served(session)
        // Every setting, in `tv settings --json`'s order and with its values, with its meaning.
        let meanings = try #require(try JSONSerialization.jsonObject(with: try get(box, served, "/api/settings/meanings").stdout) as? [[String: Any]])
        let values = try box.tool("python3", ["-c", "import json,sys; d=json.loads(sys.stdin.read()); print(json.dumps(list(d.keys())))"],
                                  stdin: try box.tv("settings", "show", "--json").stdout)
        #expect(meanings.compactMap { $0["name"] as? String } == (try JSONSerialization.jsonObject(with: values.stdout) as? [String]))
        let expiry = try #require(meanings.first { $0["name"] as? String == "content.expiry" })
        #expect(expiry["value"] as? String == "1d" && expiry["default"] as? String == "1d" && expiry["saved"] as? Bool == false)
        #expect(expiry["meaning"] as? String == "How long kept content lives: 1h, 1d or 1w (never forever); decrypted captures closed longer ago are deleted, and packet captures older than it lose their TLS secrets.")

        let post = ["-sS", "-X", "POST", "-H", served.bearer, "-H", "Origin: \(served.origin)", "-H", "Content-Type: application/json", "-w", "\n%{http_code}"]
        // A change: what `tv settings set` prints.
        let saved = try box.curl(post + ["--data", #"{"key":"content.expiry","value":"1h"}"#, served.base + "/api/settings"]).out
        let said = try #require(try JSONSerialization.jsonObject(with: Data(saved.components(separatedBy: "\n").dropLast().joined(separator: "\n").utf8)) as? [String: Any])
        #expect(saved.hasSuffix("\n200"))
        #expect((said["said"] as? String)?.hasPrefix("Saved content.expiry = 1h (was 1d).\n") == true, "\(saved)")
        // A refusal: the command's sentence, as `tv settings set` says it on standard error.
        let refused = try box.curl(post + ["--data", #"{"key":"content.flowBudget","value":"lots"}"#, served.base + "/api/settings"]).out
        let cli = try box.tv("settings", "set", "content.flowBudget", "lots")
        #expect(cli.status != 0)
        let sentence = cli.err.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "tv: ", with: "")
        #expect(refused.hasSuffix("\n400"))
        let body = try JSONSerialization.jsonObject(with: Data(refused.dropLast(4).utf8)) as? [String: Any]
        #expect(body?["error"] as? String == sentence, "\(refused) vs \(cli.err)")
        // Inspection is not set here: the command's refusal.
        let inspection = try box.curl(post + ["--data", #"{"key":"inspection.enabled","value":"on"}"#, served.base + "/api/settings"]).out
        #expect(inspection.contains("tv inspect on") && inspection.hasSuffix("\n400"), "\(inspection)")
        // A trust store by a relative path would be read against tv web's own folder: refused
        // (a trial's file:bundle.pem landed beside where tv web was started).
        let relative = try box.curl(post + ["--data", #"{"key":"trust.store","value":"file:bundle.pem"}"#, served.base + "/api/settings"]).out
        #expect(relative.contains("a trust store's path must be absolute") && relative.hasSuffix("\n400"), "\(relative)")
        let absolute = try box.curl(post + ["--data", #"{"key":"trust.store","value":"file:/tmp/tv-web-bundle.pem"}"#, served.base + "/api/settings"]).out
        #expect(absolute.hasSuffix("\n200"), "\(absolute)")
        // A limit that deletes what is kept: not saved unagreed; 409 with the question, its count
        // as `tv settings set` says it (the page asked a generic sentence: a trial); agreed, saved.
        #expect(try box.curl(["-x", session.proxyURL, "--cacert", world.pki.upstreamCA, "-o", "/dev/null", world.url("/index.html")]).status == 0)
        // Asked at once: the flow may still be in the session's writer (it was not counted, and
        // saving deleted it: a re-check); 1.1 s after it started.
        usleep(1_100_000)
        let unagreed = try box.curl(post + ["--data", #"{"key":"history.maxAge","value":"1s"}"#, served.base + "/api/settings"]).out
        #expect(unagreed.hasSuffix("\n409"), "\(unagreed)")
        let asked = try JSONSerialization.jsonObject(with: Data(unagreed.dropLast(4).utf8)) as? [String: Any]
        let consent = asked?["consent"] as? String ?? ""
        #expect(consent.hasPrefix("history.maxAge 1s deletes 1 of the 1 connections kept (those started before ") && consent.hasSuffix("), with their requests, packets and content, as soon as it is saved. Save it?"), "\(unagreed)")
        #expect(try box.flowRows().count == 1)
        let asCLI = try box.tv("settings", "set", "history.maxAge", "1s")
        #expect(asCLI.status == 1 && asCLI.err.contains(" connections kept (those started before ") && asCLI.err.hasSuffix("as soon as it is saved; add --yes to save it.\n"), "\(asCLI)")
        #expect(asked?["deletes"] as? Int == 1, "\(unagreed)")
        // The page's yes names the count it asked about: a change that now deletes more is asked
        // again, not saved (the question was open while the clock and the session went on).
        let outgrown = try box.curl(post + ["--data", #"{"key":"history.maxAge","value":"1s","agreed":0}"#, served.base + "/api/settings"]).out
        #expect(outgrown.hasSuffix("\n409") && outgrown.contains(#""deletes":1"#), "\(outgrown)")
        #expect(try box.flowRows().count == 1)
        let agreed = try box.curl(post + ["--data", #"{"key":"history.maxAge","value":"1s","agreed":1}"#, served.base + "/api/settings"]).out
        #expect(agreed.hasSuffix("\n200") && agreed.contains("Saved history.maxAge = 1s"), "\(agreed)")
        // `"yes": true` agrees to any count, as --yes does.
        let yes = try box.curl(post + ["--data", #"{"key":"history.maxAge","value":"2s","yes":true}"#, served.base + "/api/settings"]).out
        #expect(yes.hasSuffix("\n200") && yes.contains("Saved history.maxAge = 2s"), "\(yes)")
    }

    @Test func dashboardFiguresNeverHoldFlowEvents() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let session = try world.run("--inspect", "--web", "--web-listen", "127.0.0.1:0")
        defer { session.kill() }
        let served = try web.served(session)
        // Python reads the stream and stamps each event with the clock the test reads too.
        let reader = """
            import http.client, json, sys, time
            host, port = sys.argv[1].split("//")[1].split(":")
            c = http.client.HTTPConnection(host, int(port), timeout=12)
            asked = time.time()
            c.request("GET", "/api/events", headers={"Authorization": sys.argv[2]})
            r = c.getresponse()
            out = {"asked": asked, "events": []}
            end = time.time() + 9
            while time.time() < end:
                line = r.fp.readline().decode()
                if not line:
                    break
                if line.startswith("retry:") and "firstBytes" not in out:
                    out["firstBytes"] = time.time()
                if line.startswith("event: "):
                    kind = line[7:].strip()
                    data = r.fp.readline().decode()[6:]
                    out["events"].append({"at": time.time(), "kind": kind, "data": json.loads(data)})
            print(json.dumps(out))
            """
        let events = WebRunTests.Background { try? box.tool("/usr/bin/python3", ["-c", reader, served.base, "Bearer " + served.token], timeout: 20) }
        usleep(3_500_000)
        let made = Date().timeIntervalSince1970
        let curled = try world.curlThrough(session, [world.url("/a")])
        #expect(curled.status == 0, "\(curled.all)")
        let output = try #require(events.wait())
        let told = try #require(try JSONSerialization.jsonObject(with: output.stdout) as? [String: Any], "\(output.all)")
        let asked = try #require(told["asked"] as? Double)
        // The stream answers at once: no sample of a second is waited for first.
        let first = try #require(told["firstBytes"] as? Double)
        #expect(first - asked < 0.5, "the stream's first bytes came \(first - asked) s after asking")
        let list = told["events"] as? [[String: Any]] ?? []
        // The flow is told within a poll and a half of being made, never held behind the figures.
        let opened = try #require(list.first { $0["kind"] as? String == "flow" }, "\(list)")
        let lag = (opened["at"] as? Double ?? 0) - made
        #expect(lag < 1.0, "the flow was told \(lag) s after it was made")
        // The figures come every 3 s, and from the second on they carry the rates between two samples.
        let tops = list.filter { $0["kind"] as? String == "top" }
        #expect(tops.count >= 3, "\(tops.count) top events in 9 s")
        #expect(tops.allSatisfy { ($0["data"] as? [String: Any])?["state"] as? String == "live" })
        #expect(tops.dropFirst().contains { (($0["data"] as? [String: Any])?["rates"] as? [String: Any])?["received"] is Int }, "\(tops)")
    }
}
