import Foundation
import Testing

/// Issue 15, "Setup, inspection and the first run": a live session takes a CA made or remade
/// while it runs and the setup's result at once; `--inspect` / `--keep-content` with no CA refuse
/// (or make one with --yes); runtimes that keep their own list trust tv given exactly the
/// variable `tv ca trust --platform` prints.
@Suite("tv run: setup reaches a live session; first run; runtimes (issue 15)", .serialized)
struct SetupLiveRunTests {
    @Test("tv setup --yes while tv run runs with no CA: the session inspects at once, without a restart; a remade CA too")
    func setupReachesALiveSession() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let tv = try world.run()
        #expect(try box.status()?.string("inspection") == "off")
        let bundle = try box.write("bundle.pem", "")

        let setup = try box.tv("setup", "--trust-store", "file:" + bundle, "--yes")
        #expect(setup.status == 0, "\(setup)")
        #expect(setup.out.contains("Its private key stays in \(box.caDir), readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`).\nThe running session applied it.\n"), "\(setup.out)")
        #expect(!setup.out.contains("could not be told"), "\(setup.out)")
        #expect(try box.status()?.string("inspection") == "on")
        let first = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(first.status == 0 && first.out == "hello from nginx\n", "\(first)")
        #expect(try box.closedFlows(1).last?.string("status") == "inspected")
        let firstRoot = box.text(box.rootPEM)

        // Remade: inspection goes off (said to the session), the new root is trusted, turned on.
        #expect(try box.tv("ca", "remake", "--yes").status == 0)
        #expect(try box.status()?.string("inspection") == "off")
        let trust = try box.tv("ca", "trust", "--trust-store", "file:" + bundle, "--apply", "--yes")
        #expect(trust.status == 0, "\(trust)")
        let on = try box.tv("inspect", "on")
        #expect(on.status == 0, "\(on)")
        #expect(on.out.hasSuffix("The running session applied it.\n"), "\(on.out)")
        #expect(box.text(box.rootPEM) != firstRoot)
        let second = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(second.status == 0 && second.out == "hello from nginx\n", "\(second)")
        let rows = try box.closedFlows(2)
        #expect(rows.count == 2 && rows.last?.string("status") == "inspected", "\(rows)")
        // Minted from the new root: the old root no longer verifies what tv presents.
        try Data(firstRoot.utf8).write(to: URL(fileURLWithPath: box.work + "/old-root.pem"))
        let old = try box.curl(["-x", tv.proxyURL, "--cacert", box.work + "/old-root.pem", world.url("/index.html")])
        #expect(old.status == 60, "\(old)")

        // Removed: the session stops minting at once and passes TLS through.
        let remove = try box.tv("ca", "remove", "--yes")
        #expect(remove.status == 0, "\(remove)")
        #expect(remove.out.contains("The running session applied it: it inspects nothing, passing connections through, until there is a CA again"), "\(remove.out)")
        #expect(try box.status()?.string("inspection") == "off")
        let passed = try box.curl(["-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html")])
        #expect(passed.status == 0 && passed.out == "hello from nginx\n", "\(passed)")
        try tv.stop()
    }

    @Test("tv ca remake whose output goes to a closed pipe (killed by SIGPIPE at its first line, as under `| head -1`): the running session was told first and mints from the new root; tv ca remove the same")
    func remakeCutShortStillReachesTheSession() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let oldRoot = box.text(box.rootPEM)
        // Standard output a pipe whose reading end is closed: the first write kills tv.
        let closedPipe = """
            import os, subprocess, sys
            r, w = os.pipe(); os.close(r)
            p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.DEVNULL, restore_signals=True)
            print(p.returncode)
            """
        let cut = try box.tool("python3", ["-c", closedPipe, try TVBinary.require(), "--data-dir", box.dataDir, "ca", "remake", "--yes"])
        #expect(cut.out == "-13\n", "killed by SIGPIPE: \(cut)")
        #expect(box.text(box.rootPEM) != oldRoot)
        // The client trusts the new root only: the session's leaf verifies.
        let after = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(after.status == 0 && after.out == "hello from nginx\n", "\(after)")
        try Data(oldRoot.utf8).write(to: URL(fileURLWithPath: box.work + "/old-root.pem"))
        #expect(try box.curl(["-x", tv.proxyURL, "--cacert", box.work + "/old-root.pem", world.url("/index.html")]).status == 60)
        let removed = try box.tool("python3", ["-c", closedPipe, try TVBinary.require(), "--data-dir", box.dataDir, "ca", "remove", "--yes"])
        #expect(removed.out == "-13\n", "\(removed)")
        let passed = try box.curl(["-x", tv.proxyURL, "--cacert", world.pki.upstreamCA, world.url("/index.html")])
        #expect(passed.status == 0 && passed.out == "hello from nginx\n", "passed through once the CA is gone: \(passed)")
        try tv.stop()
    }

    @Test("tv run --inspect, then tv ca remove: the session applied it (inspects nothing until there is a CA), and tv diag's verdict says there is no CA now, not that inspection works")
    func removedUnderForcedInspection() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        _ = try world.curlThrough(tv, [world.url("/index.html")])
        _ = try box.closedFlows(1)
        let remove = try box.tv("ca", "remove", "--yes")
        #expect(remove.status == 0 && remove.out.contains("The running session applied it: it inspects nothing"), "\(remove)")
        let diag = try box.tv("diag")
        #expect(diag.out.hasPrefix("Inspection is on, but this session has no CA now (1 connection was inspected while it had one): "), "\(diag)")
        try tv.stop()
    }

    @Test("tv run --inspect --quiet with no CA refuses with the reason and the next command; so does --keep-content")
    func forcedInspectionWithoutACARefuses() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        for option in ["--inspect", "--keep-content"] {
            let run = try box.tv("run", "--listen", "127.0.0.1:\(freeLoopbackPort())", option, "--quiet")
            let asks = option == "--inspect" ? "asks to inspect this session" : "asks to keep this session's decrypted content"
            #expect(run.status == 1, "\(run)")
            #expect(run.out == "")
            let way = option == "--inspect" ? "`tv run --inspect --yes` makes one as it starts" : "`tv run --inspect --keep-content --yes` makes one as it starts and inspects with it"
            #expect(run.err == "tv: \(option) \(asks), but there is no CA in \(box.caDir) to inspect with; make one with `tv setup` or `tv ca create` (\(way)), or run without \(option).\n", "\(run.err)")
            #expect(!FileManager.default.fileExists(atPath: box.rootPEM))
        }
    }

    @Test("tv run --inspect --yes with no CA makes one, says where its root is, and inspects")
    func forcedInspectionWithYesMakesTheCA() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let tv = try world.run("--inspect", "--yes", "--quiet")
        #expect(FileManager.default.fileExists(atPath: box.rootPEM))
        #expect(tv.log().contains("; give clients its root, \(box.rootPEM) (e.g. `curl --cacert \(box.rootPEM)`), or trust it with `tv setup`.\n"), "\(tv.log())")
        let r = try world.curlThrough(tv, [world.url("/index.html")])
        #expect(r.status == 0 && r.out == "hello from nginx\n", "\(r)")
        #expect(try box.closedFlows(1).first?.string("status") == "inspected")
        try tv.stop()
    }

    /// Runs argv[3:] on a pseudo-terminal, answers argv[1] at the first "[y/N]", and once argv[2]
    /// appears (if not empty) interrupts it (SIGINT); prints what it said and "EXIT n".
    static let terminalDriver = #"""
    import os, pty, select, signal, sys, time
    answer, until, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    out, sent, stopped = b"", False, False
    deadline = time.time() + 20
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
        if not sent and b"[y/N]" in out:
            os.write(fd, answer.encode() + b"\n"); sent = True
        if until and not stopped and until.encode() in out:
            time.sleep(0.3); os.kill(pid, signal.SIGINT); stopped = True
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode().replace("\r\n", "\n"))
    print("EXIT", os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
    """#

    @Test("on a terminal, tv run --inspect with no CA asks first: no makes nothing and refuses, yes makes the CA and runs")
    func forcedInspectionOnATerminalAsks() throws {
        let world = try RunWorld(createCA: false)
        let box = world.sandbox
        let tv = try TVBinary.require()
        let arguments = [tv, "--data-dir", box.dataDir, "run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--inspect", "--quiet"]
        let question = "--inspect needs a certificate authority, and there is none yet. tv would make one in \(box.caDir); its private key stays in that folder, readable only by you: tv never sends it anywhere, and it leaves that folder only in a file you ask for by name (`tv ca export --p12-with-key --yes`). Clients trust tv's certificates only once given its root.\nCreate it now? [y/N] "
        let no = try box.python(Self.terminalDriver, ["n", ""] + arguments)
        #expect(no.out == question + "n\ntv: --inspect asks to inspect this session, but there is no CA in \(box.caDir) to inspect with; make one with `tv setup` or `tv ca create` (`tv run --inspect --yes` makes one as it starts), or run without --inspect.\nEXIT 1\n", "\(no)")
        #expect(!FileManager.default.fileExists(atPath: box.rootPEM))
        let yes = try box.python(Self.terminalDriver, ["y", "or trust it with `tv setup`."] + arguments)
        #expect(yes.out.hasPrefix(question + "y\nCreated the certificate "), "\(yes)")
        #expect(yes.out.hasSuffix("EXIT 0\n"), "\(yes)")
        #expect(FileManager.default.fileExists(atPath: box.rootPEM))
    }

    /// The `NAME=VALUE` of the line `tv ca trust --platform PLATFORM` prints with `export NAME=`.
    static func printedVariable(_ box: Sandbox, platform: String, name: String) throws -> (String, String)? {
        let guide = try box.tv("ca", "trust", "--platform", platform)
        #expect(guide.status == 0, "\(guide)")
        guard let line = guide.out.split(separator: "\n").first(where: { $0.contains("export \(name)=") }),
              let range = line.range(of: "export \(name)=") else { return nil }
        let value = line[range.upperBound...].split(separator: " ").first.map(String.init) ?? ""
        return (name, value)
    }

    static let nodeClient = """
    const http = require('http'), tls = require('tls');
    const [proxyHost, proxyPort] = process.argv[2].split(':'); const target = process.argv[3];
    const req = http.request({ host: proxyHost, port: +proxyPort, method: 'CONNECT', path: target });
    req.on('connect', (res, socket) => {
      const s = tls.connect({ socket, servername: 'localhost' }, () => {
        s.write('GET /index.html HTTP/1.1\\r\\nHost: ' + target + '\\r\\nConnection: close\\r\\n\\r\\n');
      });
      let body = ''; s.on('data', d => body += d);
      s.on('end', () => { process.stdout.write(body.split('\\r\\n\\r\\n')[1] || ''); });
      s.on('error', e => { process.stdout.write('ERROR ' + e.code + '\\n'); process.exit(3); });
    });
    req.end();
    """

    @Test("node trusts tv given exactly the NODE_EXTRA_CA_CERTS line `tv ca trust --platform node` prints")
    func nodeWithThePrintedVariable() throws {
        // Scripts/test installs nodejs: a missing node is a set-up fault, not a pass.
        try #require((try? Run.resolve("node")) != nil, "node is not installed (Scripts/test installs the nodejs package)")
        let world = try RunWorld()
        let box = world.sandbox
        let printed = try Self.printedVariable(box, platform: "node", name: "NODE_EXTRA_CA_CERTS")
        #expect(printed?.1 == box.rootPEM)
        guard let printed else { return }
        let (name, value) = printed
        // The refused attempt without the variable must not make tv remember the host as pinned.
        let tv = try world.run("--inspect", "--quiet", "--no-pinning-detection")
        let script = box.work + "/client.js"
        try Data(Self.nodeClient.utf8).write(to: URL(fileURLWithPath: script))
        let target = "localhost:\(world.nginx.tlsPort)"
        let without = try Run.process("node", [script, tv.proxyHostPort, target], in: box.work, environment: box.environment)
        #expect(without.out == "ERROR UNABLE_TO_VERIFY_LEAF_SIGNATURE\n", "\(without)")
        let with = try Run.process("node", [script, tv.proxyHostPort, target], in: box.work,
                                   environment: box.environment.merging([name: value]) { $1 })
        #expect(with.status == 0 && with.out == "hello from nginx\n", "\(with)")
        try tv.stop()
    }

    @Test("Python requests trusts tv given exactly the REQUESTS_CA_BUNDLE line `tv ca trust --platform python` prints (certifi's roots and tv's), and still trusts what certifi did")
    func pythonRequestsWithThePrintedVariable() throws {
        try #require(Clients.python("import requests").status == 0, "Python's requests is not importable (Scripts/test installs python3-requests)")
        let world = try RunWorld()
        let box = world.sandbox
        let guide = try box.tv("ca", "trust", "--platform", "python")
        let line = try #require(guide.out.split(separator: "\n").first { $0.contains("export REQUESTS_CA_BUNDLE=") }, "\(guide)")
        // The step as printed, up to its note in parentheses, run by a shell in a HOME of the test's.
        let command = String(line.drop { $0 == " " }.drop { $0 != " " }.dropFirst()).components(separatedBy: "   (").first ?? ""
        let made = try Run.process("sh", ["-c", command + " && printf %s \"$REQUESTS_CA_BUNDLE\""], in: box.work,
                                   environment: box.environment.merging(["HOME": box.work]) { $1 })
        #expect(made.status == 0 && made.out == box.work + "/tv-python-roots.pem", "\(made) \(command)")
        let bundle = box.text(box.work + "/tv-python-roots.pem")
        // certifi's roots and tv's: the bundle is more than tv's root alone.
        #expect(bundle.hasSuffix(box.text(box.rootPEM)) && bundle.components(separatedBy: "BEGIN CERTIFICATE").count > 10, "\(bundle.prefix(200))")
        let (name, value) = ("REQUESTS_CA_BUNDLE", box.work + "/tv-python-roots.pem")
        // The refused attempt without the variable must not make tv remember the host as pinned.
        let tv = try world.run("--inspect", "--quiet", "--no-pinning-detection")
        let script = """
        import sys, requests
        try:
            r = requests.get(sys.argv[2], proxies={"https": sys.argv[1]}, timeout=20)
            sys.stdout.write(r.text)
        except requests.exceptions.SSLError as e:
            print("SSLError")
            sys.stderr.write(repr(e))
        """
        let without = try box.python(script, [tv.proxyURL, world.url("/index.html")])
        #expect(without.out == "SSLError\n", "\(without)")
        let path = box.work + "/requests-client.py"
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        let with = try Run.process("python3", [path, tv.proxyURL, world.url("/index.html")], in: box.work,
                                   environment: box.environment.merging([name: value]) { $1 })
        #expect(with.status == 0 && with.out == "hello from nginx\n", "\(with)")
        try tv.stop()
    }
}
