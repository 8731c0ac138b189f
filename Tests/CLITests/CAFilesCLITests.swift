import FlowStore
import FlowTerms
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A new-user trial's faults with the CA's files, through the built `tv` (trial 41, ca/): root
/// files another user owns, a `ca/` others may read, a leaf key missing or damaged, clients kept
/// as lacking the root after trust was given, concurrent creates, and international names.
@Suite("CLI: the CA's files (trial 41)", .timeLimit(.minutes(5)))
struct CAFilesCLITests {
    /// `tv run --listen 127.0.0.1:<free port> ARGS…`, which must refuse to start.
    func runRefused(_ s: Sandbox, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let port = freeLoopbackPort()
        let result = try s.tvArgs(["run", "--listen", "127.0.0.1:\(port)"] + arguments, sourceLocation: sourceLocation)
        #expect(!isListening(port), "nothing listens after a refusal", sourceLocation: sourceLocation)
        return result
    }

    @Test("root-key.pem, root.pem and --ca FILE another user owns (modes unchanged): in doubt or refused, in the CA folder's sentence; nothing signs with them",
          .enabled(if: ScratchUser.available))
    func rootFilesOfAnotherUser() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        try withSandbox { s in
            try s.createCA()
            let key = s.caDir + "/root-key.pem"
            let clause = "belongs to \(user.name), not to you (root), so the user \(user.name) could have replaced the CA"
            user.own(key)
            #expect(s.mode(key) == 0o600)
            let status = try s.tv("ca", "status")
            #expect(status.status == 1, "\(status)")
            #expect(status.out.hasPrefix("CA: in doubt — \(key) \(clause)\n"), "\(status)")
            let on = try s.tv("inspect", "on")
            #expect(on.status == 1, "\(on)")
            #expect(on.err.contains("Inspection stays off. The CA is in doubt: \(key) \(clause)."), "\(on)")
            let run = try runRefused(s, ["--quiet", "--inspect"])
            #expect(run.status == 1, "\(run)")
            #expect(run.err == "tv: --inspect asks to inspect this session, but the CA is in doubt (\(key) \(clause)); repair or restore that file (`tv ca status` says more), or run without --inspect.\n", "\(run)")
            lchown(key, 0, 0)
            #expect(try s.tv("ca", "status").status == 0)

            user.own(s.rootPEM)
            let rootStatus = try s.tv("ca", "status")
            #expect(rootStatus.status == 1 && rootStatus.out.hasPrefix("CA: in doubt — \(s.rootPEM) \(clause)\n"), "\(rootStatus)")
            lchown(s.rootPEM, 0, 0)

            let combined = s.work + "/ca.pem"
            try (s.read(key) + s.read(s.rootPEM)).write(to: URL(fileURLWithPath: combined))
            chmod(combined, 0o600)
            user.own(combined)
            let forced = try runRefused(s, ["--quiet", "--ca", combined])
            #expect(forced.status == 1, "\(forced)")
            #expect(forced.err == "tv: \(combined) cannot be this session's CA (--ca): it holds the CA's private key and \(clause); use a file of your own.\n", "\(forced)")
        }
    }

    @Test("a ca/ folder at 0755 is tightened to 0700 when tv reads it (as the data folder is), and the CA still works")
    func caFolderOpenToOthers() throws {
        try withSandbox { s in
            try s.createCA()
            chmod(s.caDir, 0o755)
            let status = try s.tv("ca", "status")
            #expect(status.status == 0, "\(status)")
            #expect(s.mode(s.caDir) == 0o700)
            #expect(status.err.isEmpty, "\(status)")
        }
    }

    @Test("a missing leaf-key.pem: made again (0600), said once on stderr; the root and its key unchanged; never advice to delete the root")
    func leafKeyMissing() throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = s.caDir + "/leaf-key.pem"
            let (root, rootKey) = (s.read(s.rootPEM), s.read(s.caDir + "/root-key.pem"))
            try FileManager.default.removeItem(atPath: leaf)
            let first = try s.tv("ca", "status")
            #expect(first.status == 0, "\(first)")
            #expect(first.err == "The leaf key \(leaf) was missing; tv made a new one (ECDSA P-256). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged.\n", "\(first)")
            #expect(first.out.hasPrefix("CA: present\n"), "\(first)")
            #expect(!first.all.contains("delete root.pem"))
            #expect(s.mode(leaf) == 0o600)
            #expect(s.read(s.rootPEM) == root && s.read(s.caDir + "/root-key.pem") == rootKey)
            let second = try s.tv("ca", "status")
            #expect(second.status == 0 && second.err.isEmpty, "said once: \(second)")
            // `tv ca create` over it: the CA exists (nothing doubted, nothing made).
            let create = try s.tv("ca", "create")
            #expect(create.err == "tv: A CA already exists in \(s.caDir); remaking it is a separate action (`tv ca remake`), because every device that trusts the current root would stop trusting tv.\n", "\(create)")
        }
    }

    @Test("a damaged leaf-key.pem: moved aside (never overwritten), made again and said once; an inspecting session starts with it")
    func leafKeyDamaged() throws {
        try withSandbox { s in
            try s.createCA()
            let leaf = s.caDir + "/leaf-key.pem"
            try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: leaf))
            let run = try s.tv("exec", "--proxy", "--inspect", "--", "true")
            #expect(run.status == 0, "\(run)")
            let names = try FileManager.default.contentsOfDirectory(atPath: s.caDir).sorted()
            let aside = try #require(names.first { $0.hasPrefix("leaf-key.pem.unusable-") })
            #expect(s.text(s.caDir + "/" + aside) == "not a key\n")
            let said = "tv: The leaf key \(leaf) cannot be parsed as a PEM private key; tv moved it to \(s.caDir)/\(aside) and made a new one (ECDSA P-256). It is only the key tv's leaves carry: the root, and every device that trusts it, are unchanged.\n"
            #expect(run.err.hasPrefix(said), "\(run)")
            #expect(run.err.components(separatedBy: "The leaf key").count == 2, "said once: \(run)")
            #expect(run.err.contains("(a session started for it, inspecting)"), "\(run)")
            #expect(try s.tool("openssl", ["pkey", "-in", leaf, "-noout"]).status == 0)
            #expect(s.mode(leaf) == 0o600)
        }
    }

    @Test("six `tv ca create` at once: one makes the CA; each other says another tv made it at the same moment and it is ready, never 'Could not write'")
    func concurrentCreates() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            let results = Mutex<[ProcessOutput]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                if let result = try? Run.process(tv, ["--data-dir", s.dataDir, "ca", "create"], in: s.work, environment: s.environment) {
                    results.withLock { $0.append(result) }
                }
            }
            let all = results.withLock { $0 }
            #expect(all.count == 6)
            #expect(all.filter { $0.status == 0 }.count == 1, "\(all)")
            let ready = "tv: Another tv made the CA in \(s.caDir) at the same moment, and it is ready (`tv ca status` shows it); this command made none of its own.\n"
            let exists = "tv: A CA already exists in \(s.caDir); remaking it is a separate action (`tv ca remake`), because every device that trusts the current root would stop trusting tv.\n"
            for result in all where result.status != 0 {
                #expect(result.status == 1 && (result.err == ready || result.err == exists), "\(result)")
                #expect(!result.err.contains("Could not write"), "\(result)")
            }
            #expect(try s.tv("ca", "status").status == 0)
        }
    }

    @Test("tv ca issue bücher.test converts the name to its A-labels (libidn2), as the proxy does; a label IDNA refuses is said with its reason")
    func issueInternationalName() throws {
        try withSandbox { s in
            try s.createCA()
            let result = try s.tv("ca", "issue", "bücher.test", "*.bücher.test", "--out-dir", s.work + "/out")
            #expect(result.status == 0, "\(result)")
            #expect(result.out.hasPrefix("Issued a certificate for DNS:xn--bcher-kva.test, DNS:*.xn--bcher-kva.test (bücher.test, *.bücher.test as A-labels), valid until "), "\(result)")
            let text = try s.tool("openssl", ["x509", "-in", s.work + "/out/xn--bcher-kva.test.pem", "-noout", "-ext", "subjectAltName"]).out
            #expect(text.contains("DNS:xn--bcher-kva.test, DNS:*.xn--bcher-kva.test"), "\(text)")
            let refused = try s.tv("ca", "issue", "bücher-.test", "--out-dir", s.work + "/out")
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.err == "tv: 'bücher-.test' cannot be a certificate name because 'bücher-' is not a valid international label (IDNA: string start/ends with forbidden hyphen).\n", "\(refused)")
        }
    }

    /// Runs `arguments` on a pseudo-terminal, typing each answer once its prompt has shown.
    static func interactive(_ s: Sandbox, _ arguments: [String], answers: [(prompt: String, answer: String)]) throws -> (status: Int, shown: String) {
        let script = """
            import os, subprocess, sys, json
            pairs = json.loads(sys.argv[1]); cmd = sys.argv[2:]
            leader, follower = os.openpty()
            p = subprocess.Popen(cmd, stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
            os.close(follower)
            shown, seen = b"", 0
            while True:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                shown += chunk
                if pairs and pairs[0][0].encode() in shown[seen:]:
                    seen = len(shown)
                    os.write(leader, pairs.pop(0)[1].encode() + b"\\n")
            print(json.dumps({"status": p.wait(timeout=60), "shown": shown.decode().replace("\\r\\n", "\\n")}))
            """
        let path = s.work + "/drive.py"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        let pairs = String(decoding: try JSONSerialization.data(withJSONObject: answers.map { [$0.prompt, $0.answer] }), as: UTF8.self)
        let run = try Run.process("python3", [path, pairs, try TVBinary.require(), "--data-dir", s.dataDir] + arguments, in: s.work,
                                  environment: s.environment, timeout: 90)
        let decoded = try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any]
        return (decoded?["status"] as? Int ?? -1, decoded?["shown"] as? String ?? run.description)
    }

    @Test("tv setup at a terminal on an empty NSS folder offers [a] do it for me, which makes the database and trusts the root", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/certutil")))
    func interactiveSetupOnAnEmptyNSSFolder() throws {
        try withSandbox { s in
            try s.createCA()
            let db = s.work + "/nssdb"
            try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
            let (status, shown) = try Self.interactive(s, ["setup", "--trust-store", "nss:" + db], answers: [
                ("[a] do it for me", "a"), ("Go ahead? [y] yes", "y"), ("Turn inspection on now?", "q"),
            ])
            #expect(status == 0, "\(shown)")
            #expect(shown.contains("Step 2+3 of 4 — Install and trust the root (not started)\n"), "\(shown)")
            #expect(shown.contains("Do the steps, then press [Enter] to check again · [a] do it for me · [q] not now"), "\(shown)")
            #expect(shown.contains("  1. create an empty NSS database in \(db), which has none (certutil -N --empty-password)\n"), "\(shown)")
            #expect(shown.contains("Step 4 of 4 — Ready to inspect (succeeded)\n"), "\(shown)")
            #expect(!shown.contains("Something is in doubt"), "\(shown)")
            #expect(FileManager.default.fileExists(atPath: db + "/cert9.db"))
        }
    }

    /// Remembers `count` clients as lacking tv's root in the sandbox's database.
    func rememberLacksRoot(_ s: Sandbox, hosts: [String]) throws {
        let store = try FlowStore(path: s.dataDir + "/tunnelvision.sqlite3")
        defer { store.close() }
        for host in hosts {
            try store.clientPins.remember(clientAddress: "127.0.0.1", clientHello: "0123456789ab", host: host, port: 443, kind: .lacksRoot,
                                          reason: "the client does not trust tv's root", at: 1_700_000_000_000_000)
        }
        try store.clientPins.remember(clientAddress: "127.0.0.1", clientHello: "0123456789ab", host: "pins.test", port: 443, kind: .pinned,
                                      reason: "it pins", at: 1_700_000_000_000_000)
    }

    @Test("trust guides end with `tv pinned forget --lacks-root`, which forgets the clients kept as lacking the root (not the pinning ones); tv ca trust --apply does it itself")
    func forgetLacksRootAfterTrust() throws {
        try withSandbox { s in
            try s.createCA()
            let python = try s.tv("ca", "trust", "--platform", "python")
            #expect(python.status == 0, "\(python)")
            #expect(python.out.contains("\n  2. Then `tv pinned forget --lacks-root`: a program that connected through tv before it trusted the root was remembered as lacking it, and its connections pass through untouched until then.\n"), "\(python)")
            try rememberLacksRoot(s, hosts: ["a.test", "b.test"])
            let forgot = try s.tv("pinned", "forget", "--lacks-root")
            #expect(forgot.status == 0, "\(forgot)")
            #expect(forgot.out == "Forgot 2 clients remembered as lacking tv's root (said before the root was trusted): their next connections are inspected again, and one that still lacks it is remembered again.\n", "\(forgot)")
            let listed = try s.tv("pinned")
            #expect(listed.out.contains("pins.test:443"), "\(listed)")
            #expect(!listed.out.contains("a.test"), "\(listed)")
            let again = try s.tv("pinned", "forget", "--lacks-root")
            #expect(again.out == "No client is remembered as lacking tv's root; nothing to forget.\n", "\(again)")
            let both = try s.tv("pinned", "forget", "a.test", "--lacks-root")
            #expect(both.status == 2, "\(both)")

            try rememberLacksRoot(s, hosts: ["c.test"])
            let applied = try s.tv("ca", "trust", "--trust-store", "file:" + s.work + "/bundle.pem", "--apply", "--yes")
            #expect(applied.status == 0, "\(applied)")
            #expect(applied.out.contains("\nForgot 1 client remembered as lacking tv's root (said before the root was trusted): their next connections are inspected again, and one that still lacks it is remembered again.\n"), "\(applied)")
            #expect(try s.tv("pinned").out.contains("pins.test:443"))
        }
    }
}
