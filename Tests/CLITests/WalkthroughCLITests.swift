import FlowStore
import Foundation
import Testing
import FlowTerms

/// What a fresh user met walking through `tv`: the next-page hint, the plain-flow sentence, the
/// "tv:" prefix, read-only commands on a missing data folder, --version, bare `tv inspect`,
/// the Windows removal step and the CA-in-doubt advice — each through the real binary.
@Suite("CLI: a fresh user's walkthrough", .timeLimit(.minutes(5)))
struct WalkthroughCLITests {
    /// Writes `flows` into the sandbox's data folder through the real writer.
    func seed(_ s: Sandbox, _ flows: [(FlowStatus, String?)]) throws {
        try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: s.dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let start: Int64 = 1_764_471_900_000_000
        for (i, (status, host)) in flows.enumerated() {
            var flow = FlowRecord(startTime: start + Int64(i), clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "192.0.2.1",
                                  serverPort: status == .notEncrypted ? 80 : 443, host: host, hostOrigin: host == nil ? .none : .sni,
                                  status: status)
            // A plain flow that said something (an open one that said nothing yet is not known to be plain).
            if status == .notEncrypted { flow.bytesUp = 78 }
            writer.open(flow)
        }
        writer.close()
        store.close()
    }

    @Test("the next-page hint repeats --data-dir and every filter given, and following it keeps them")
    func moreHintKeepsFilters() throws {
        try withSandbox { s in
            try seed(s, [(.inspected, "a.test"), (.encrypted, "b.test"), (.inspected, "c.test"), (.inspected, "d.test"),
                         (.encrypted, "e.test"), (.inspected, "f.test"), (.inspected, "g.test")])
            let first = try s.tvArgs(["--data-dir", s.dataDir, "flows", "--status", "inspected", "--limit", "3"], dataDir: false)
            #expect(first.status == 0, "\(first)")
            let lines = first.out.split(separator: "\n").map(String.init)
            let more = try #require(lines.last)
            let prefix = "More: tv flows --data-dir \(s.dataDir) --status inspected --limit 3 --after "
            #expect(more.hasPrefix(prefix), "\(more)")
            #expect(lines.dropFirst().dropLast().map { $0.split(separator: " ").last.map(String.init) } == ["inspected", "inspected", "inspected"])
            // Follow it as printed (the sandbox path has no characters that need quoting).
            let words = more.dropFirst("More: tv ".count).split(separator: " ").map(String.init)
            let second = try s.tvArgs(words, dataDir: false)
            #expect(second.status == 0, "\(second)")
            let rows = second.out.split(separator: "\n").dropFirst()
            #expect(rows.count == 2, "\(second.out)")
            #expect(rows.allSatisfy { $0.hasSuffix("inspected") }, "\(second.out)")
        }
    }

    @Test("a plain flow's sentence points above under tv flow, and to tv flow from tv export har")
    func plainFlowSentence() throws {
        try withSandbox { s in
            try seed(s, [(.notEncrypted, nil)])
            let flow = try s.tv("flow", "1")
            #expect(flow.status == 0, "\(flow)")
            #expect(flow.out.hasSuffix("Decrypted content\n  Not encrypted: this connection was plain and tv kept none of its content; the addresses, times and byte counts above are what it recorded.\n"))
            #expect(flow.out.hasPrefix("Flow 1: 192.0.2.1\n"))
            let har = try s.tv("export", "har", "1", "-o", "x.har")
            #expect(har.status == 1)
            #expect(har.err == "tv: left out flow 1: Not encrypted: this connection was plain and tv kept none of its content; `tv flow 1` shows its addresses, times and byte counts.\ntv: None of these flows holds kept HTTP or exchange rows, so nothing was written.\n")
        }
    }

    @Test("tv intro on a missing data folder prints the introduction and makes nothing")
    func introMakesNoFolder() throws {
        try withSandbox { s in
            let missing = s.root + "/nonexistent/deep"
            let result = try s.tvArgs(["--data-dir", missing, "intro"], dataDir: false)
            #expect(result.status == 0 && !result.out.isEmpty, "\(result)")
            #expect(!FileManager.default.fileExists(atPath: s.root + "/nonexistent"))
        }
    }

    @Test("a relative trust store path is saved absolute (saved as typed, it named another file from every other folder: a trial)")
    func relativeTrustStoreSavedAbsolute() throws {
        try withSandbox { s in
            let set = try s.tv("settings", "set", "trust.store", "file:./sub/../rel.pem")
            #expect(set.status == 0, "\(set)")
            let got = try s.tv("settings", "get", "trust.store")
            #expect(got.out == "file:\(s.work)/rel.pem\n", "\(got)")
            let dir = try s.tv("settings", "set", "trust.store", "dir:certs")
            #expect(dir.status == 0, "\(dir)")
            let gotDir = try s.tv("settings", "get", "trust.store")
            #expect(gotDir.out == "dir:\(s.work)/certs\n", "\(gotDir)")
            // `~` is $HOME, as the shell has it (the password database's was taken: a re-check).
            #expect(try s.tvArgs(["settings", "set", "trust.store", "file:~/t.pem"]).status == 0)
            let gotHome = try s.tv("settings", "get", "trust.store")
            #expect(gotHome.out == "file:\(s.root)/home/t.pem\n", "\(gotHome)")
        }
    }

    @Test("tv export har without -o says so with the tv: prefix every other error has")
    func harWithoutOutput() throws {
        try withSandbox { s in
            let result = try s.tv("export", "har", "8")
            #expect(result.status == 2)
            #expect(result.err == "tv: `tv export har` needs -o FILE: HAR carries the kept bodies, so it goes to a file you name.\n")
        }
    }

    static let readOnly: [[String]] = [
        ["flows"], ["flow", "1"], ["turns", "1"], ["pinned"], ["pinned", "list"], ["pinned", "forget", "a.test"],
        ["export", "har", "1", "-o", "x.har"], ["content", "status"], ["content"],
        // Audit commands need a project or a session the folder would hold (a trial's `tv audit
        // sessions` made the folder and answered "No audit sessions").
        ["audit", "sessions"], ["audit", "show", "1"], ["audit", "mark", "hi"], ["audit", "stop"],
        ["audit", "start", "app"], ["audit", "delete", "1", "--yes"], ["audit", "projects"],
    ]

    @Test("read-only commands on a missing data folder say so, exit 1 and make nothing", arguments: readOnly)
    func missingDataFolder(_ line: [String]) throws {
        try withSandbox { s in
            let missing = s.root + "/nonexistent/deep"
            let result = try s.tvArgs(["--data-dir", missing] + line, dataDir: false)
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "tv: There is no data folder at \(missing) yet; `tv run`, `tv exec` or `tv setup` makes one.\n")
            #expect(result.out.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: s.root + "/nonexistent"))
        }
    }

    @Test("status commands on a missing data folder say so and answer, making nothing; commands that write make it")
    func statusOnMissingDataFolder() throws {
        try withSandbox { s in
            let missing = s.root + "/nonexistent/deep"
            let sentence = "There is no data folder at \(missing) yet; `tv run`, `tv exec` or `tv setup` makes one."
            let status = try s.tvArgs(["--data-dir", missing, "status"], dataDir: false)
            #expect(status.status == 3)
            #expect(status.out == sentence + "\n")
            // `tv stop` with no session says so with the same exit code (it was 1).
            let stop = try s.tv("stop")
            #expect(stop.status == 3 && stop.err == "tv: No tv session is running for this data folder; start one with `tv run`.\n", "\(stop)")
            for line in [["ca", "status"], ["inspect", "status"], ["settings", "show"], ["settings", "get", "trust.store"]] {
                let result = try s.tvArgs(["--data-dir", missing] + line, dataDir: false)
                #expect(result.status == 0, "\(result)")
                #expect(result.err == sentence + "\n", "\(line)")
            }
            #expect(!FileManager.default.fileExists(atPath: s.root + "/nonexistent"))
            let created = try s.tvArgs(["--data-dir", missing, "ca", "create"], dataDir: false)
            #expect(created.status == 0, "\(created)")
            #expect(s.mode(missing) == 0o700)
            let flows = try s.tvArgs(["--data-dir", missing, "flows"], dataDir: false)
            #expect(flows.status == 0, "\(flows)")
            #expect(flows.out == "No flows are recorded yet. Start a session with `tv run` and point a client at it.\n")
        }
    }

    @Test("a refused tv ca import leaves no data folder behind; an accepted one makes it 0700")
    func refusedImportMakesNothing() throws {
        try withSandbox { s in
            let missing = s.root + "/fresh/home"
            let refused = try s.tvArgs(["--data-dir", missing, "ca", "import", "--cert", s.root + "/nope.pem", "--key", s.root + "/nope-key.pem"], dataDir: false)
            #expect(refused.status != 0, "\(refused)")
            #expect(refused.err.hasPrefix("tv: Could not read \(s.root)/nope.pem"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: s.root + "/fresh"))
            // A CA made elsewhere imports into a folder that did not exist.
            let made = try s.tvArgs(["--data-dir", s.root + "/other", "ca", "create"], dataDir: false)
            #expect(made.status == 0, "\(made)")
            let imported = try s.tvArgs(["--data-dir", missing, "ca", "import", "--cert", s.root + "/other/ca/root.pem",
                                         "--key", s.root + "/other/ca/root-key.pem"], dataDir: false)
            #expect(imported.status == 0, "\(imported)")
            #expect(s.mode(missing) == 0o700)
        }
    }

    @Test("--busy-poll takes 0 to 1,000 µs; anything else is one sentence")
    func busyPollRange() throws {
        try withSandbox { s in
            for bad in ["5000", "-1", "x"] {
                let r = try s.tvArgs(["run", "--busy-poll", bad], dataDir: true)
                #expect(r.status != 0)
                #expect(r.err == "tv: --busy-poll takes a whole number of microseconds from 0 to 1000, not '\(bad)'.\n", "\(r)")
            }
        }
    }

    @Test("--max-per-client takes 0 to 1,000,000 and --head-timeout 0.1 to 3,600 s; anything else is one sentence")
    func slowClientOptionRanges() throws {
        try withSandbox { s in
            for bad in ["-1", "x", "1000001"] {
                let r = try s.tvArgs(["run", "--max-per-client", bad], dataDir: true)
                #expect(r.status != 0)
                #expect(r.err == "tv: --max-per-client takes a whole number of connections from 0 (no limit) to 1000000, not '\(bad)'.\n", "\(r)")
            }
            for bad in ["0", "0.05", "x", "3601"] {
                let r = try s.tvArgs(["run", "--head-timeout", bad], dataDir: true)
                #expect(r.status != 0)
                #expect(r.err == "tv: --head-timeout takes seconds from 0.1 to 3600, not '\(bad)'.\n", "\(r)")
            }
        }
    }

    @Test("tv --version and tv version print the version line")
    func version() throws {
        try withSandbox { s in
            for line in [["--version"], ["version"]] {
                let result = try s.tvArgs(line, dataDir: false)
                #expect(result.status == 0, "\(result)")
                #expect(result.out == "tv 0.1\n")
                #expect(result.err.isEmpty)
            }
            #expect(try s.tvArgs(["--help"], dataDir: false).out.contains("\n      --version       Print tv's version and exit.\n"))
        }
    }

    @Test("bare tv inspect is tv inspect status")
    func bareInspect() throws {
        try withSandbox { s in
            try s.createCA()
            let bare = try s.tv("inspect")
            #expect(bare.status == 0, "\(bare)")
            #expect(bare.out.hasPrefix("Inspection: off\n"))
            #expect(bare.out == (try s.tv("inspect", "status")).out)
        }
    }

    @Test("tv ca remove prints the Windows step with double quotes, as cmd.exe reads them")
    func windowsRemovalQuotes() throws {
        try withSandbox { s in
            try s.createCA()
            let cn = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-subject", "-nameopt", "multiline"]).out
                .split(separator: "\n").first { $0.contains("commonName") }.map { $0.split(separator: "=").last!.trimmingCharacters(in: .whitespaces) }
            let name = try #require(cn)
            let removed = try s.tv("ca", "remove", "--yes")
            #expect(removed.status == 0, "\(removed)")
            #expect(removed.out.contains("\n  1. In an administrator prompt: certutil -delstore Root \"\(name)\"   (or certmgr.msc"), "\(removed.out)")
            #expect(!removed.out.contains("certutil -delstore Root '"))
        }
    }

    @Test("a CA in doubt: status and create say to delete the three files and keep profile-identity.json")
    func doubtAdvice() throws {
        try withSandbox { s in
            try s.createCA()
            try Data("not a key".utf8).write(to: URL(fileURLWithPath: s.caDir + "/root-key.pem"))
            let status = try s.tv("ca", "status")
            #expect(status.status == 1)
            #expect(status.out.hasPrefix("CA: in doubt — \(s.caDir)/root-key.pem cannot be parsed as a PEM private key\nNothing will be generated over it. Repair or restore that file, or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from \(s.caDir) and keep profile-identity.json.\n"))
            let create = try s.tv("ca", "create")
            #expect(create.status == 1)
            #expect(create.err == "tv: The CA is in doubt: \(s.caDir)/root-key.pem cannot be parsed as a PEM private key; tv will neither sign with it nor generate a new CA over it — repair or restore that file, or, to start over on purpose, delete root.pem, root-key.pem and leaf-key.pem from \(s.caDir) and keep profile-identity.json.\n")
        }
    }
}
