import Foundation
import Testing

/// `-o -` writes to standard output (as curl's `-o -` and tshark's `-w -`) for every command
/// that takes `-o`, with its sentence on standard error, and no file named "-" is made; and
/// `tv export har` of a flow with exchange rows but no kept content (issue 16).
@Suite("-o - is standard output", .serialized)
struct OutputDashCLITests {
    let filters = FilterCLITests()

    func noDashFile(_ s: Sandbox, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!FileManager.default.fileExists(atPath: s.work + "/-"), sourceLocation: sourceLocation)
    }

    @Test("tv export har -o -: the HAR on stdout, the summary on stderr; the same document as -o FILE")
    func harToStandardOutput() throws {
        try withSandbox { s in
            try filters.seed(s)
            let piped = try s.tv("export", "har", "1", "2", "-o", "-")
            #expect(piped.status == 0, "\(piped)")
            #expect(piped.err == "tv: Wrote 3 HAR entries from 2 flows to standard output; it holds the kept bodies, so share it with care.\n")
            noDashFile(s)
            let file = try s.tv("export", "har", "1", "2", "-o", "both.har")
            #expect(file.status == 0, "\(file)")
            #expect(piped.stdout == s.read(s.work + "/both.har"))
            let log = (try JSONSerialization.jsonObject(with: piped.stdout) as? [String: Any])?["log"] as? [String: Any]
            #expect((log?["entries"] as? [Any])?.count == 3)
        }
    }

    @Test("tv export har of a flow with exchange rows and no kept content: entries from the rows, exact")
    func harFromRows() throws {
        try withSandbox { s in
            try filters.seedRequests(s)
            let result = try s.tv("export", "har", "7", "-o", "-")
            #expect(result.status == 0, "\(result)")
            #expect(result.err == "tv: Wrote 1 HAR entry from 1 flow to standard output; it is from exchange rows alone (no content was kept: no headers, bodies or query strings).\n")
            let log = try #require((try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])?["log"] as? [String: Any])
            let entry = try #require((log["entries"] as? [[String: Any]])?.first)
            let request = try #require(entry["request"] as? [String: Any])
            #expect(request["method"] as? String == "GET")
            #expect(request["url"] as? String == "http://plain.test/nokeep")
            #expect((request["headers"] as? [Any])?.isEmpty == true)
            #expect(request["headersSize"] as? Int == -1)
            #expect((entry["response"] as? [String: Any])?["status"] as? Int == 0)
            // No response: the 1 ms from the request to the exchange's end was spent waiting for one.
            #expect(entry["timings"] as? NSDictionary == ["send": 0, "wait": 1, "receive": 0] as NSDictionary)
            #expect(entry["time"] as? Double == 1)
            #expect(entry["comment"] as? String == "from the exchange row: no content is kept for its connection (never kept, or deleted since), so no headers, cookies or bodies; the query string was not kept, so the URL ends at the path; incomplete: its end was never read (the connection ended or was reset first, or stopped being read as HTTP); no response was read")
            #expect(log["comment"] as? String == "1 entry from 1 flow; 1 from exchange rows alone (no content kept: no headers, bodies or query strings)")
            // Flows 1–3 still come from their kept content, beside flow 7's row.
            let all = try s.tv("export", "har", "1-7", "-o", "all.har")
            #expect(all.out == "Wrote 5 HAR entries from 4 flows to all.har; 1 is from exchange rows alone (no content was kept: no headers, bodies or query strings); the rest hold the kept bodies, so share it with care.\n", "\(all)")
            #expect(all.err == "tv: left out 3 flows with no kept HTTP and no exchange rows (`tv export har ID` names why for one).\n")
        }
    }

    @Test("tv export connections -o -: JSON and CSV on stdout, the sentence on stderr")
    func connectionsToStandardOutput() throws {
        try withSandbox { s in
            try filters.seed(s)
            let json = try s.tv("export", "connections", "-o", "-")
            #expect(json.status == 0, "\(json)")
            #expect(json.err == "tv: Wrote 6 connections to standard output.\n", "\(json)")
            let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
            #expect(object?["count"] as? Int == 6)
            let csv = try s.tv("export", "connections", "--format", "csv", "-o", "-")
            #expect(csv.status == 0, "\(csv)")
            #expect(csv.out.split(separator: "\r\n").count == 7, "\(csv.out)")
            noDashFile(s)
        }
    }

    @Test("tv turns --raw -o - and tv ca export -o -: standard output, as without -o")
    func rawTurnAndCertificate() throws {
        try withSandbox { s in
            try filters.seed(s)
            let raw = try s.tv("turns", "1", "--turn", "1", "--raw", "-o", "-")
            #expect(raw.status == 0, "\(raw)")
            #expect(raw.out == "GET /one HTTP/1.1\r\nHost: a.test\r\n\r\n")
            try s.createCA()
            let pem = try s.tv("ca", "export", "--pem", "-o", "-")
            #expect(pem.status == 0, "\(pem)")
            #expect(pem.stdout == s.read(s.rootPEM))
            noDashFile(s)
        }
    }

    @Test("tv audit bundle -o -: the archive on stdout passes tv audit verify once saved")
    func bundleToStandardOutput() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
            #expect(try s.tv("audit", "project", "new", "dash").status == 0)
            #expect(try s.tv("audit", "start", "dash").status == 0)
            #expect(try s.tv("audit", "stop").status == 0)
            let bundle = try s.tv("audit", "bundle", "1", "--yes", "-o", "-")
            #expect(bundle.status == 0, "\(bundle)")
            #expect(bundle.err.hasPrefix("Wrote the evidence bundle of session 1 to standard output: 0 flows, ") && bundle.err.hasSuffix("; `tv audit verify FILE` checks it once saved.\n"), "\(bundle)")
            noDashFile(s)
            try bundle.stdout.write(to: URL(fileURLWithPath: s.work + "/saved.tar.gz"))
            let verify = try s.tv("audit", "verify", "saved.tar.gz")
            #expect(verify.status == 0 && verify.out.contains("saved.tar.gz is intact"), "\(verify)")
            // And read back from standard input (`-`), as it was written.
            let piped = try s.tvArgs(["audit", "verify", "-"], stdin: bundle.stdout)
            #expect(piped.status == 0 && piped.out.hasPrefix("The bundle on standard input is intact: all "), "\(piped)")
            let missing = try s.tv("audit", "verify", "nowhere.tar.gz")
            #expect(missing.status == 2 && missing.out == "tv could not read nowhere.tar.gz (No such file or directory), so nothing was checked; give the path of a bundle file you can read.\n", "\(missing)")
        }
    }

    @Test("audit delete and audit bundle without --yes and without a terminal say what they would do before refusing (a trial's script got only 'add --yes')")
    func auditConsentWithoutTerminal() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
            #expect(try s.tv("audit", "project", "new", "p").status == 0)
            #expect(try s.tv("audit", "start", "p").status == 0)
            #expect(try s.tv("audit", "stop").status == 0)
            let bundle = try s.tv("audit", "bundle", "1", "-o", s.work + "/b.tar.gz")
            #expect(bundle.status == 2 && bundle.err.contains("\ntv: Nothing was written: with no terminal to ask on, pass --yes to write it (and --no-content / --no-keys to leave those out).\n"), "\(bundle)")
            #expect(bundle.err.count > 120, "\(bundle)")
            #expect(!FileManager.default.fileExists(atPath: s.work + "/b.tar.gz"))
            let delete = try s.tv("audit", "delete", "1")
            #expect(delete.status == 2 && delete.err.hasSuffix("\ntv: Nothing was deleted: with no terminal to ask on, add --yes to delete it.\n"), "\(delete)")
            #expect(delete.err.hasPrefix("Deleting session 1 of project 'p' removes its record, its 0 markers and its TLS key log (both legs' secrets), "), "\(delete)")
            #expect(try s.tv("audit", "sessions").out.contains("p"))
        }
    }

    @Test("audit names and markers: a project name that would pass for another (a space at an end, a control character, a bidi override) or a marker past its limit is refused; a name the shell splits is quoted where tv suggests a command")
    func auditNamesAndMarkers() throws {
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
            for bad in ["app-review ", " app", "a\u{7}b", "x\u{202E}gnp.exe", "zw\u{200B}sp", "ab\u{3164}", "ab\u{34F}c", String(repeating: "p", count: 101)] {
                let r = try s.tv("audit", "project", "new", bad)
                #expect(r.status == 1 && r.err.contains("cannot be a project name: give one of at most 100 characters, with no control or invisible format character and no space at either end."), "\(bad): \(r)")
            }
            // A long name is shown by its start.
            let longName = try s.tv("audit", "project", "new", String(repeating: "P", count: 5_000))
            #expect(longName.err == "tv: '" + String(repeating: "P", count: 60) + "… (5,000 characters)' cannot be a project name: give one of at most 100 characters, with no control or invisible format character and no space at either end.\n", "\(longName)")
            let made = try s.tv("audit", "project", "new", "a/b c")
            #expect(made.status == 0 && made.out == "Made project 'a/b c'; `tv audit start 'a/b c'` records a session in it.\n", "\(made)")
            // An emoji sequence's joiners draw a picture: taken (a trial's family emoji was refused).
            let family = try s.tv("audit", "project", "new", "👨\u{200D}👩\u{200D}👧")
            #expect(family.status == 0 && family.out.hasPrefix("Made project '👨\u{200D}👩\u{200D}👧'"), "\(family)")
            let again = try s.tv("audit", "project", "new", "a/b c")
            #expect(again.err.contains("(`tv audit start 'a/b c'`)"), "\(again)")
            #expect(try s.tv("audit", "start", "a/b c").status == 0)
            let long = try s.tv("audit", "mark", String(repeating: "m", count: 2_001))
            #expect(long.status == 1 && long.err == "tv: The marker's text has 2001 characters; a marker holds at most 2000 (put longer notes in a file beside the bundle).\n", "\(long)")
            #expect(try s.tv("audit", "mark", String(repeating: "m", count: 2_000)).status == 0)
            // Notes too (a trial's 100,000-character notes made every listing line that wide).
            let note = String(repeating: "n", count: 2_001)
            let project = try s.tv("audit", "project", "new", "bignote", "--note", note)
            #expect(project.status == 1 && project.err == "tv: The note has 2001 characters; a note holds at most 2000 (put longer notes in a file beside the bundle).\n", "\(project)")
            #expect(try s.tv("audit", "stop").status == 0)
            let session = try s.tv("audit", "start", "a/b c", "--note", note)
            #expect(session.status == 1 && session.err.hasPrefix("tv: The note has 2001 characters"), "\(session)")
        }
    }

    @Test("standard output that cannot take the result (a full disk: /dev/full): exit 1 and one sentence, never 'Wrote'; a reader that goes away is not an error")
    func standardOutputFull() throws {
        try withSandbox { s in
            try filters.seed(s)
            try s.createCA()
            let tv = try TVBinary.require()
            let said = "tv: Could not write to standard output (No space left on device), so what it received is incomplete; free space where it goes, or write to a file with -o FILE, then try again.\n"
            for command in ["export har 1 2 -o -", "export connections -o -", "flows --json", "flows", "ca export --pem -o -"] {
                let full = try s.tool("/bin/sh", ["-c", "'\(tv)' --data-dir '\(s.dataDir)' \(command) > /dev/full"])
                #expect(full.status == 1 && full.err == said, "\(command): \(full)")
            }
            // `head` closing the pipe early ends tv by SIGPIPE (141 in the shell), with nothing said.
            let head = try s.tool("/bin/bash", ["-c", "'\(tv)' --data-dir '\(s.dataDir)' flows --json | head -c 1 > /dev/null; echo ${PIPESTATUS[0]}"])
            #expect(head.err == "" && (head.out == "141\n" || head.out == "0\n"), "\(head)")
        }
    }
}
