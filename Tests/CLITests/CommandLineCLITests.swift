import Foundation
import Testing

/// `tv`'s command line as a user meets it: help, refusals, exit codes, status, the data folder.
@Suite("CLI: command line, status, refusals", .timeLimit(.minutes(5)))
struct CommandLineCLITests {
    static let helpLines: [[String]] = [
        ["--help"], ["-h"], ["ca", "--help"], ["ca", "-h"],
        ["ca", "create", "--help"], ["ca", "import", "--help"], ["ca", "status", "--help"], ["ca", "show", "--help"],
        ["ca", "export", "--help"], ["ca", "issue", "--help"], ["ca", "issue", "-h"],
    ]

    @Test("--help at every level exits 0 with that level's usage on stdout", arguments: helpLines)
    func help(_ line: [String]) throws {
        try withSandbox { s in
            let result = try s.tvArgs(line, dataDir: false)
            #expect(result.status == 0, "\(result)")
            #expect(result.err.isEmpty)
            let words = line.filter { !$0.hasPrefix("-") }
            #expect(result.out.hasPrefix("USAGE: " + (["tv"] + words).joined(separator: " ") + " "), "\(result.out.prefix(80))")
            #expect(result.out.contains("\nOPTIONS:\n"))
            #expect(result.out.contains("--data-dir DIR"))
            #expect(result.out.contains("-h, --help"))
            // Asking for help creates nothing.
            #expect(!FileManager.default.fileExists(atPath: s.root + "/home/.local"))
        }
    }

    @Test("--tun-device is checked before anything is made: too long, % or /, an existing interface (a tun trial's names failed after the TUN existed)")
    func tunDeviceNameIsChecked() throws {
        try withSandbox { s in
            let cases: [(String, String)] = [
                ("tv%d", "tv: --tun-device tv%d: an interface name holds printable ASCII without /, %, : or spaces.\n"),
                ("averyveryverylongname", "tv: --tun-device averyveryverylongname: an interface name has at most 15 bytes (21 given).\n"),
                ("lo", "tv: --tun-device lo: an interface of that name exists already; name another.\n"),
            ]
            for (name, said) in cases {
                let r = try s.tv("run", "--mode", "tun", "--tun-device", name, "--dry-run")
                #expect(r.status == 2 && r.err == said, "\(r)")
            }
        }
    }

    @Test("--server-ports in --mode tun's dry run: the named ports' rules among the changes, and what they mean")
    func serverPortsDryRun() throws {
        try withSandbox { s in
            let r = try s.tv("run", "--mode", "tun", "--dry-run", "--server-ports", "udp:60000-61000,tcp:8443", "--server-ports", "udp:51820")
            #expect(r.out.contains("\n  ip -4 rule add ipproto tcp sport 8443 table 29815 pref 32764\n")
                    && r.out.contains("\n  ip -4 rule add ipproto udp sport 51820 table 29815 pref 32764\n")
                    && r.out.contains("\n  ip -4 rule add ipproto udp sport 60000-61000 table 29815 pref 32764\n"), "\(r)")
            #expect(r.out.contains("\n--server-ports TCP 8443; UDP 51820, 60000-61000: what this host sends from these ports leaves through table 29815 for the whole session, "
                                   + "whether or not a server is bound there, unseen by tv"), "\(r)")
        }
    }

    @Test("the top-level and ca help list the subcommands")
    func helpLists() throws {
        try withSandbox { s in
            let top = try s.tvArgs(["--help"], dataDir: false).out
            #expect(top.contains("SUBCOMMANDS:\n  run  "))
            for sub in ["run", "status", "stop", "intro", "ca", "setup", "inspect", "settings", "flows", "flow", "pinned", "requests", "request", "turns", "content", "export"] {
                #expect(top.contains("\n  \(sub) "), "\(sub)")
            }
            let ca = try s.tvArgs(["ca", "--help"], dataDir: false).out
            for sub in ["create", "import", "status", "show", "export", "issue"] {
                #expect(ca.contains("\n  \(sub) "), "\(sub)")
            }
            #expect(ca.contains("CA/README.md"))
        }
    }

    static let badLines: [([String], String)] = [
        (["ca", "create", "--bogus"], "tv: 'tv ca create' has no option --bogus; see 'tv ca create --help'.\n"),
        (["ca", "create", "--key"], "tv: Option --key needs a value (TYPE); see 'tv ca create --help'.\n"),
        (["ca", "export", "-o"], "tv: Option --output needs a value (FILE); see 'tv ca export --help'.\n"),
        (["ca", "status", "--data-dir"], "tv: Option --data-dir needs a value (DIR); see 'tv ca status --help'.\n"),
        (["ca", "status", "-x"], "tv: 'tv ca status' has no option -x; see 'tv ca status --help'.\n"),
        (["ca", "status", "--json=yes"], "tv: Option --json takes no value; write it alone.\n"),
        (["ca", "issue"], "tv: 'tv ca issue' needs at least one NAME; see 'tv ca issue --help'.\n"),
        (["ca", "status", "extra"], "tv: 'tv ca status' does not take the argument 'extra'; see 'tv ca status --help'.\n"),
        (["bogus"], "tv: 'tv bogus' is not a command; see 'tv --help' for the list.\n"),
        (["ca", "bogus"], "tv: 'tv ca bogus' is not a command; see 'tv ca --help' for the list.\n"),
        (["ca"], "tv: 'tv ca' needs a subcommand (create, import, status, show, export, issue, trust, remake, remove); see 'tv ca --help'.\n"),
        (["export", "hra"], "tv: 'tv export hra' is not a command (did you mean 'tv export har'?); see 'tv export --help' for the list.\n"),
        (["stauts"], "tv: 'tv stauts' is not a command (did you mean 'tv status'?); see 'tv --help' for the list.\n"),
        // Another tool's word for a tv command line (it was "did you mean 'tv flow'": a trial).
        (["follow"], "tv: 'tv follow' is not a command (did you mean 'tv flows --follow'?); see 'tv --help' for the list.\n"),
        (["hlep"], "tv: 'tv hlep' is not a command (did you mean 'tv help'?); see 'tv --help' for the list.\n"),
        (["help", "bogus"], "tv: 'tv bogus' is not a command; see 'tv --help' for the list.\n"),
        (["help", "ca", "shwo"], "tv: 'tv ca shwo' is not a command (did you mean 'tv ca show'?); see 'tv ca --help' for the list.\n"),
        (["help", "ca", "issue", "x"], "tv: 'tv ca issue' has no subcommands, so 'x' is not one; see 'tv ca issue --help'.\n"),
        // Refused before the first run's introduction is shown (it was, then exit 1).
        (["run", "--listen", "nonsense"], "tv: 'nonsense' is not an address to listen on; write it as HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8080 or [::1]:8080.\n"),
        (["run", "--listen", "127.0.0.1:99999"], "tv: '127.0.0.1:99999' is not an address to listen on; write it as HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8080 or [::1]:8080.\n"),
        (["run", "--mode", "sock5"], "tv: 'sock5' is not a proxy mode (did you mean 'socks5'?); use regular, socks5, transparent, tun, reverse:https://HOST:PORT or reverse:http://HOST:PORT.\n"),
        // --server-ports: for --mode tun alone, and read before anything is said or made.
        (["run", "--server-ports", "udp:51820"], "tv: --server-ports is for --mode tun.\n"),
        (["run", "--mode", "socks5", "--server-ports", "udp:0"], "tv: --server-ports is for --mode tun.\n"),
        (["run", "--mode", "tun", "--dry-run", "--server-ports", "udp:61000-60000"], "tv: --server-ports udp:61000-60000: a range goes from its lower port to its higher; write udp:60000-61000.\n"),
        (["run", "--mode", "tun", "--dry-run", "--server-ports", "tcp:22", "--server-ports", "51820"], "tv: --server-ports 51820 names no protocol; write udp:51820 or tcp:51820.\n"),
    ]

    /// `tv help WORDS…` and the `--help` it stands for.
    static let helpWords: [[String]] = [[], ["ca"], ["ca", "issue"], ["ca", "show"], ["run"], ["export", "har"], ["inspect"]]

    @Test("tv help CMD… prints what tv CMD… --help prints (exit 0, stdout); tv help and a bare tv print the top-level help", arguments: helpWords)
    func helpWord(_ words: [String]) throws {
        try withSandbox { s in
            let expected = try s.tvArgs(words + ["--help"], dataDir: false)
            #expect(expected.status == 0)
            #expect(expected.out.hasPrefix("USAGE: " + (["tv"] + words).joined(separator: " ") + " "), "\(expected.out.prefix(80))")
            let viaHelp = try s.tvArgs(["help"] + words, dataDir: false)
            #expect(viaHelp.status == 0, "\(viaHelp)")
            #expect(viaHelp.err.isEmpty)
            #expect(viaHelp.out == expected.out)
            if words.isEmpty {
                for line in [[], ["--data-dir", s.dataDir]] {
                    let bare = try s.tvArgs(line, dataDir: false)
                    #expect(bare.status == 0, "\(bare)")
                    #expect(bare.err.isEmpty)
                    #expect(bare.out == expected.out)
                }
                #expect(expected.out.contains("\n  help         Show this help, or a command's: 'tv help COMMAND…' (the same as 'tv COMMAND… --help').\n"), "\(expected.out)")
            }
            // Asking for help creates nothing.
            #expect(!FileManager.default.fileExists(atPath: s.dataDir))
        }
    }

    @Test("a bare tv inspect still shows inspection's status, and a bare tv ca still names its subcommands")
    func decidedDefaults() throws {
        try withSandbox { s in
            let bare = try s.tvArgs(["inspect"])
            #expect(bare.status == 0, "\(bare)")
            #expect(!bare.out.isEmpty)
            #expect(try bare.out == s.tvArgs(["inspect", "status"]).out)
            let ca = try s.tvArgs(["ca"], dataDir: false)
            #expect(ca.status == 2)
        }
    }

    @Test("tv ca show's help describes show itself; tv ca lists status and show each with its own line")
    func caShowHelp() throws {
        try withSandbox { s in
            let show = try s.tvArgs(["ca", "show", "--help"], dataDir: false).out
            #expect(show.hasPrefix("USAGE: tv ca show [options]\n\nShow the CA's root (subject, key, validity, serial, fingerprints, file), whether each trust store has it and trusts it for TLS, and the setup stage.\n\nOPTIONS:\n"), "\(show)")
            #expect(!show.contains("status"), "\(show)")
            let status = try s.tvArgs(["ca", "status", "--help"], dataDir: false).out
            #expect(status.hasPrefix("USAGE: tv ca status [options]\n\nSay whether a CA exists, whether each trust store has it and trusts it for TLS, and the setup stage.\n\nOPTIONS:\n"), "\(status)")
            let ca = try s.tvArgs(["ca", "--help"], dataDir: false).out
            #expect(ca.contains("\n  status  Say whether a CA exists, whether each trust store has it and trusts it for TLS, and the setup stage.\n  show    Show the CA's root (subject, key, validity, serial, fingerprints, file), whether each trust store has it and trusts it for TLS, and the setup stage.\n"), "\(ca)")
        }
    }

    @Test("unknown flags, missing values and bad words exit 2 with one sentence on stderr", arguments: badLines)
    func badCommandLines(_ line: [String], expected: String) throws {
        try withSandbox { s in
            let result = try s.tvArgs(line, dataDir: false)
            #expect(result.status == 2, "\(result)")
            #expect(result.err == expected)
            #expect(result.out.isEmpty)
        }
    }

    @Test("-- passes names that look like options through to tv ca issue")
    func doubleDash() throws {
        try withSandbox { s in
            try s.createCA()
            // "-x.test" is not a valid host name (leading hyphen): refused as a name (exit 1), not as an option (2).
            let result = try s.tv("ca", "issue", "--out-dir", "o", "--", "-x.test")
            #expect(result.status == 1, "\(result)")
            #expect(result.err.hasPrefix("tv: '-x.test' cannot be a certificate name because"))
            // --out-dir makes its last folder only: a missing parent is refused, nothing made.
            let deep = try s.tv("ca", "issue", "--out-dir", s.work + "/missing/x", "a.test")
            #expect(deep.status != 0 && deep.err.contains("the folder \(s.work)/missing does not exist; tv makes only the last folder of the path."), "\(deep)")
            #expect(!FileManager.default.fileExists(atPath: s.work + "/missing"))
            let file = try s.write("plain-file", "x")
            let onFile = try s.tv("ca", "issue", "--out-dir", file, "a.test")
            #expect(onFile.status != 0 && onFile.err.contains("--out-dir \(file) is a file, not a folder"), "\(onFile)")
            let made = try s.tv("ca", "issue", "--out-dir", s.work + "/new", "a.test")
            #expect(made.status == 0 && FileManager.default.fileExists(atPath: s.work + "/new/a.test-key.pem"), "\(made)")
        }
    }

    @Test("tv ca status --json parses with python json and has the fields")
    func statusJSON() throws {
        try withSandbox { s in
            let script = try s.write("fields.py", """
                import json, sys
                d = json.load(sys.stdin)
                print(json.dumps({"keys": list(d.keys()), "d": d}))
                """)
            // Absent.
            let absent = try s.tv("ca", "status", "--json")
            #expect(absent.status == 0)
            let absentParsed = try s.tool("python3", [script], stdin: absent.stdout)
            #expect(absentParsed.status == 0, "\(absentParsed)")
            let a = try JSONSerialization.jsonObject(with: absentParsed.stdout) as? [String: Any]
            #expect(a?["keys"] as? [String] == ["state", "directory", "inspection", "stores", "stage", "notices"])
            #expect((a?["d"] as? [String: Any])?["state"] as? String == "absent")
            #expect((a?["d"] as? [String: Any])?["directory"] as? String == s.caDir)

            // Present.
            try s.createCA("--key", "rsa-2048")
            let present = try s.tv("ca", "status", "--json")
            #expect(present.status == 0)
            let parsed = try s.tool("python3", [script], stdin: present.stdout)
            #expect(parsed.status == 0, "\(parsed)")
            let p = try JSONSerialization.jsonObject(with: parsed.stdout) as? [String: Any]
            #expect(p?["keys"] as? [String] == ["state", "directory", "subject", "keyType", "leafKeyType", "notBefore",
                                                "notAfter", "serial", "sha256", "sha1", "certificate",
                                                "inspection", "stores", "stage", "notices"])
            let d = try #require(p?["d"] as? [String: Any])
            #expect(d["state"] as? String == "present")
            #expect(d["keyType"] as? String == "RSA 2048")
            #expect(d["leafKeyType"] as? String == "ECDSA P-256")
            #expect(d["certificate"] as? String == s.rootPEM)
            let subject = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-subject", "-nameopt", "RFC2253"]).out
            // RFC 2253 prints the last RDN first: O=TunnelVision,CN=TunnelVision Root CA xxxxxxxx
            let rdns = subject.dropFirst("subject=".count).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
            #expect(d["subject"] as? String == rdns.reversed().joined(separator: ", "))
            let sha256 = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-fingerprint", "-sha256"]).out
            #expect(sha256 == "sha256 Fingerprint=\(d["sha256"] as? String ?? "")\n")
            let sha1 = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-fingerprint", "-sha1"]).out
            #expect(sha1 == "sha1 Fingerprint=\(d["sha1"] as? String ?? "")\n")
            let serial = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-serial"]).out
            #expect(serial == "serial=\(d["serial"] as? String ?? "")\n")
            let dates = try s.tool("openssl", ["x509", "-in", s.rootPEM, "-noout", "-startdate", "-enddate", "-dateopt", "iso_8601"]).out
            let iso = { (t: String) in t.replacingOccurrences(of: "T", with: " ") }
            #expect(dates == "notBefore=\(iso(d["notBefore"] as? String ?? ""))\nnotAfter=\(iso(d["notAfter"] as? String ?? ""))\n")
            // show is the same as status.
            #expect(try s.tv("ca", "show", "--json").stdout == present.stdout)
        }
    }

    @Test("no output of any tv ca command except the explicit key export carries the key")
    func neverPrintsKeys() throws {
        try withSandbox { s in
            var outputs: [ProcessOutput] = []
            outputs.append(try s.tv("ca", "status"))
            outputs.append(try s.tv("ca", "status", "--json"))
            outputs.append(try s.tv("ca", "create"))
            outputs.append(try s.tv("ca", "create", "--json"))  // refused: exists
            for args in [["ca", "status"], ["ca", "status", "--json"], ["ca", "show"], ["ca", "show", "--json"],
                         ["ca", "export", "--pem"], ["ca", "export", "--android"], ["ca", "export", "--mobileconfig"],
                         ["ca", "export", "--der"], ["ca", "export", "--p12"], ["ca", "issue", "x.test", "--out-dir", "o"]] {
                outputs.append(try s.tvArgs(args))
            }
            // Doubt too: status names the file, still without the key.
            let keyFile = s.caDir + "/root-key.pem"
            let original = s.read(keyFile)
            try (original.prefix(60) + Data("garbage".utf8)).write(to: URL(fileURLWithPath: keyFile))
            outputs.append(try s.tv("ca", "status"))
            outputs.append(try s.tv("ca", "status", "--json"))
            try original.write(to: URL(fileURLWithPath: keyFile))

            let keyBodies = [s.text(keyFile), s.text(s.caDir + "/leaf-key.pem")]
                .flatMap { $0.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init) }
            #expect(keyBodies.count >= 4)
            for output in outputs {
                #expect(!output.all.contains("PRIVATE KEY"), "\(output)")
                for line in keyBodies {
                    #expect(!output.all.contains(line), "key material in \(output.command)")
                    #expect(output.stdout.range(of: Data(line.utf8)) == nil)
                }
            }
        }
    }

    @Test("tv ca status, absent / present / doubt, in words and exit codes")
    func statusText() throws {
        try withSandbox { s in
            let absent = try s.tv("ca", "status")
            #expect(absent.status == 0)
            #expect(absent.out.hasPrefix("CA: none yet (\(s.caDir))\n"))
            try s.createCA()
            let present = try s.tv("ca", "status")
            #expect(present.status == 0)
            #expect(present.out.hasPrefix("CA: present\n  subject      CN=TunnelVision Root CA "))
            #expect(present.out.contains("  key          ECDSA P-256 (leaf key ECDSA P-256)\n"))
            #expect(present.out.contains("  certificate  \(s.rootPEM)\n"))
            try Data("not a key".utf8).write(to: URL(fileURLWithPath: s.caDir + "/root-key.pem"))
            let doubt = try s.tv("ca", "status")
            #expect(doubt.status == 1)
            #expect(doubt.out.hasPrefix("CA: in doubt — \(s.caDir)/root-key.pem cannot be parsed as a PEM private key\n"))
        }
    }

    @Test("create makes the data folder 0700, ca 0700, keys 0600; a second create is refused with nothing touched")
    func createAndRefuse() throws {
        try withSandbox { s in
            try s.createCA()
            #expect(s.mode(s.dataDir) == 0o700)
            #expect(s.mode(s.caDir) == 0o700)
            #expect(s.mode(s.caDir + "/root-key.pem") == 0o600)
            #expect(s.mode(s.caDir + "/leaf-key.pem") == 0o600)
            let names = { try FileManager.default.contentsOfDirectory(atPath: s.caDir).sorted() }
            #expect(try names() == ["leaf-key.pem", "profile-identity.json", "root-key.pem", "root.pem"])
            let before = try names().map { s.read(s.caDir + "/" + $0) }
            let again = try s.tv("ca", "create", "--key", "rsa-2048")
            #expect(again.status == 1)
            #expect(again.err == "tv: A CA already exists in \(s.caDir); remaking it is a separate action (`tv ca remake`), because every device that trusts the current root would stop trusting tv.\n")
            #expect(again.out.isEmpty)
            #expect(try names().map { s.read(s.caDir + "/" + $0) } == before)
            // A trust store that cannot be read is in doubt: said, and exit 1 (it exited 0).
            let doubt = try s.tv("ca", "status", "--trust-store", "file:/nonexistent-\(getpid())/b.pem")
            #expect(doubt.status == 1 && doubt.out.contains("Something is in doubt (failed)"), "\(doubt)")
            #expect(try s.tv("ca", "status").status == 0)
        }
    }

    @Test("create refuses over a CA in doubt, naming the file, and touches nothing")
    func createRefusesDoubt() throws {
        try withSandbox { s in
            try s.createCA()
            // A folder where the root key should be.
            try FileManager.default.removeItem(atPath: s.caDir + "/root-key.pem")
            try FileManager.default.createDirectory(atPath: s.caDir + "/root-key.pem", withIntermediateDirectories: false)
            let listing = try FileManager.default.contentsOfDirectory(atPath: s.caDir).sorted()
            let root = s.read(s.rootPEM)
            let result = try s.tv("ca", "create")
            #expect(result.status == 1)
            #expect(result.err.hasPrefix("tv: The CA is in doubt: \(s.caDir)/root-key.pem is a folder where a file should be;"))
            #expect(result.err.split(separator: "\n").count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: s.caDir).sorted() == listing)
            #expect(s.read(s.rootPEM) == root)
            // Import is refused the same way.
            let imported = try s.tv("ca", "import", "--cert", s.rootPEM, "--key", s.caDir + "/leaf-key.pem")
            #expect(imported.status == 1)
            #expect(imported.err.contains("The CA is in doubt"))
        }
    }

    @Test("--key takes each type; an unknown type is refused naming the accepted ones")
    func keyTypes() throws {
        try withSandbox { s in
            let bad = try s.tv("ca", "create", "--key", "ed25519")
            #expect(bad.status == 2)
            #expect(bad.err == "tv: 'ed25519' is not a key type tv makes; use one of ecdsa-p256, ecdsa-p384, rsa-2048, rsa-3072.\n")
            #expect(!FileManager.default.fileExists(atPath: s.caDir))
            let json = try s.tv("ca", "create", "--key", "ecdsa-p384", "--leaf-key", "rsa-2048", "--json")
            #expect(json.status == 0, "\(json)")
            let d = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
            #expect(d?["keyType"] as? String == "ECDSA P-384")
            #expect(d?["leafKeyType"] as? String == "RSA 2048")
        }
    }

    @Test("the data folder: --data-dir, else TV_HOME, else XDG_DATA_HOME, else HOME")
    func dataFolderResolution() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            var env = s.environment
            env["TV_HOME"] = s.root + "/tvhome"
            env["XDG_DATA_HOME"] = s.root + "/xdg"
            let viaTVHome = try Run.process(tv, ["ca", "status", "--json"], in: s.work, environment: env)
            #expect(viaTVHome.out.contains("\"directory\": \"\(s.root)/tvhome/ca\""))
            let viaFlag = try Run.process(tv, ["--data-dir", "flag", "ca", "status", "--json"], in: s.work, environment: env)
            #expect(viaFlag.out.contains("\"directory\": \"\(s.work)/flag/ca\""))
            env["TV_HOME"] = nil
            let viaXDG = try Run.process(tv, ["ca", "status", "--json"], in: s.work, environment: env)
            #expect(viaXDG.out.contains("\"directory\": \"\(s.root)/xdg/tunnelvision/ca\""))
            env["XDG_DATA_HOME"] = nil
            let created = try Run.process(tv, ["ca", "create"], in: s.work, environment: env)
            #expect(created.status == 0, "\(created)")
            #expect(s.mode(s.root + "/home/.local/share/tunnelvision") == 0o700)
            #expect(FileManager.default.fileExists(atPath: s.root + "/home/.local/share/tunnelvision/ca/root.pem"))
            env["HOME"] = nil
            let noHome = try Run.process(tv, ["ca", "status"], in: s.work, environment: env)
            #expect(noHome.status == 1)
            #expect(noHome.err == "tv: No data folder could be chosen because HOME is not set; pass --data-dir DIR or set TV_HOME.\n")
        }
    }
}
