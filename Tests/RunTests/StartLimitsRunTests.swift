import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How `tv run` starts under a scarce file-descriptor limit, and when two start at once on one
/// data folder, through the real binary on 127.0.0.1. Found by a new-user trial: under
/// `ulimit -n 24` tv died of SIGILL with no word (libdispatch traps when it cannot make its epoll
/// instance), under 16 it called a good CA file unreadable PEM, under 20 it said one sentence
/// twice nested, under 28 it printed its banner and then blamed the folder's permissions, under
/// 32 its first retention pass failed, under 64 its cap of 4 went unsaid; three `tv run` started
/// together all printed the banner, two then refused and left files behind.
@Suite("tv run: start under low descriptor limits, and two at once", .serialized)
struct StartLimitsRunTests {
    /// Runs `tv ARGS…` (argv 2…) once per limit in argv 1 (comma-separated), each with that soft
    /// and hard RLIMIT_NOFILE and only the three standard streams open (stdin /dev/null), and
    /// prints, as JSON, each run's exit code, output and the data folder's entries it made or removed
    /// (argv 2 is the data folder; the command follows).
    static let limited = """
    import json, os, resource, subprocess, sys
    limits, data, command = [int(n) for n in sys.argv[1].split(',')], sys.argv[2], sys.argv[3:]
    def entries():
        found = set()
        for top, dirs, files in os.walk(data):
            for name in dirs + files: found.add(os.path.relpath(os.path.join(top, name), data))
        if os.path.exists(data): found.add('.')
        return found
    runs = []
    for n in limits:
        before = entries()
        p = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                           preexec_fn=lambda n=n: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)))
        after = entries()
        runs.append({'limit': n, 'rc': p.returncode, 'out': p.stdout, 'err': p.stderr,
                     'made': sorted(after - before), 'removed': sorted(before - after)})
    print(json.dumps(runs))
    """

    /// What tv needs with the three standard streams and 2 loops: 3 + 14 (its wiring) + 2 × 2
    /// (loops) + 13 (after the proxy starts) + 16 (room while running) + 4 × 3 (connections).
    static let needed = 62

    static func refusal(_ limit: Int) -> String {
        "tv needs at least \(needed) open files (to start, and to take 4 connections at once), and this process may have only \(limit) "
            + "(the hard limit, `ulimit -Hn`); raise it (`ulimit -n 1024` in the shell that starts tv; above the hard limit, "
            + "as root or with a nofile line in /etc/security/limits.conf) and start tv again.\n"
    }

    func runs(_ sandbox: Sandbox, limits: [Int], _ command: [String]) throws -> [JSON] {
        let r = try sandbox.python(Self.limited, [limits.map(String.init).joined(separator: ","), sandbox.dataDir] + command, timeout: 300)
        #expect(r.status == 0, "\(r)")
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [JSON], "\(r)")
    }

    @Test("under hard limits of 16 to 61 (2 loops) tv run refuses at once with one sentence naming the limit and ulimit -n, exit 1, and makes nothing: not the data folder, not a file in one that exists")
    func refusedUnderLowHardLimits() throws {
        let world = try RunWorld(createCA: false)
        let tv = try TVBinary.require()
        let command = [tv, "--data-dir", world.sandbox.dataDir, "run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--workers", "2",
                       "--upstream-ca", world.pki.upstreamCA]
        // No data folder yet: none is made.
        let limits = [16, 20, 24, 28, 32, 40, 48, 61]
        for run in try runs(world.sandbox, limits: limits, command) {
            let limit = run.int("limit") ?? 0
            #expect(run.int("rc") == 1, "\(run)")
            #expect(run.string("err") == Self.refusal(limit), "\(run)")
            #expect(run.string("out") == "", "\(run)")
            #expect(run.strings("made") == [], "\(run)")
        }
        // A data folder with a CA, inspecting and writing a decrypted capture: nothing is added.
        try world.sandbox.createCA()
        #expect(try world.sandbox.tv("settings", "set", "capture.decrypted", "on").status == 0)
        for run in try runs(world.sandbox, limits: [24, 28, 61], command + ["--inspect"]) {
            #expect(run.int("rc") == 1, "\(run)")
            #expect(run.string("err") == Self.refusal(run.int("limit") ?? 0), "\(run)")
            #expect(run.strings("made") == [] && run.strings("removed") == [], "\(run)")
        }
    }

    @Test("tv exec --proxy starting a session of its own refuses the same way, before it writes its trust files")
    func execProxyRefused() throws {
        let world = try RunWorld()
        let tv = try TVBinary.require()
        let command = [tv, "--data-dir", world.sandbox.dataDir, "exec", "--proxy", "--workers", "2", "--", "true"]
        for run in try runs(world.sandbox, limits: [28], command) {
            #expect(run.int("rc") == 1, "\(run)")
            #expect(run.string("err") == Self.refusal(28), "\(run)")
            #expect(run.strings("made") == [] && run.strings("removed") == [], "\(run)")
        }
    }

    @Test("at the least it needs (62, 2 loops) tv runs and serves a request, saying nothing of descriptors but its small cap, in the banner")
    func runsAtTheLeast() throws {
        let world = try RunWorld()
        #expect(try world.sandbox.tv("settings", "set", "capture.decrypted", "on").status == 0)
        let session = try TVSession(world.sandbox, ["--workers", "2", "--inspect", "--keep-content", "--upstream-ca", world.pki.upstreamCA],
                                    launcher: ["/usr/bin/prlimit", "--nofile=\(Self.needed):\(Self.needed)", "--"])
        let status = try #require(try world.sandbox.status())
        #expect(status.int("descriptorLimit") == Self.needed, "\(status)")
        // The start's estimate is 4; the proxy sizes it again from what is open then, which may be
        // fewer than the estimate allows for.
        let cap = try #require(status.int("connectionCap"))
        #expect(cap >= 4 && cap <= 8, "\(status)")
        let ok = try world.curlThrough(session, ["-sS", world.url("/index.html")])
        #expect(ok.out == "hello from nginx\n", "\(ok)")
        let stopped = try session.stop()
        #expect(stopped.status == 0, "\(stopped)")
        let log = session.log()
        #expect(log.components(separatedBy: "\n").filter { $0.hasPrefix("  connections ") }
                == ["  connections at most \(cap) at once, as the open-file limit is \(Self.needed); more are refused until some close (raise the limit with `ulimit -n` before starting tv)"],
                "\(log)")
        #expect(!log.contains("too many open files") && !log.contains("Too many open files") && !log.contains("did not run"), "\(log)")
    }

    @Test("a soft limit under a high hard one is raised without a word: no cap line, no sentence about descriptors")
    func raisedSilently() throws {
        let world = try RunWorld(createCA: false)
        let session = try TVSession(world.sandbox, ["--workers", "2"], launcher: ["/usr/bin/prlimit", "--nofile=16:4096", "--"])
        let status = try #require(try world.sandbox.status())
        #expect(status.int("descriptorLimit") == 4096, "\(status)")
        try session.stop()
        let log = session.log()
        #expect(!log.contains("\n  connections ") && !log.contains("open files") && !log.contains("ulimit"), "\(log)")
    }

    @Test("its control socket outlives a moment with no descriptor left: accept failing with EMFILE is waited out, and tv stop then stops it")
    func controlSocketOutlivesEMFILE() throws {
        let world = try RunWorld(createCA: false)
        let session = try TVSession(world.sandbox, ["--workers", "1"])
        // The lowest free descriptor number: the next one the kernel would hand out.
        let open = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(session.pid)/fd")) ?? []).compactMap { Int($0) })
        let lowest = (0...).first { !open.contains($0) }!
        let lowered = try world.sandbox.tool("prlimit", ["--pid", String(session.pid), "--nofile=\(lowest):4096"])
        #expect(lowered.status == 0, "\(lowered)")
        // The accept(2) waiting already took its descriptor before the limit fell: this one is
        // answered, and the next accept fails (EMFILE) while the limit stands, its question unanswered.
        let answered = try world.sandbox.tv("status")
        #expect(answered.status == 0, "\(answered)")
        let unanswered = try world.sandbox.tv("status")
        #expect(unanswered.status != 0, "\(unanswered)")
        let raised = try world.sandbox.tool("prlimit", ["--pid", String(session.pid), "--nofile=4096:4096"])
        #expect(raised.status == 0, "\(raised)")
        let stopped = try session.stop()
        #expect(stopped.status == 0, "\(stopped) \(session.log())")
        #expect(session.exitStatus == 0, "\(session.log())")
    }

    /// Starts argv 3 `tv run`s (argv 1, data folder argv 2, each on its own free port) at the same
    /// moment: each waits on one pipe, and all are released by one write. Once all but one have
    /// exited and it answers `tv status`, records the data folder's new entries, the exit codes,
    /// sends one HTTPS request through the one left (CONNECT to nginx's port argv 5, trusting tv's
    /// root argv 6) and stops it with `tv stop`; then records what each said and the entries left.
    /// Argv 4 rounds; the rest are `tv run` options. Prints the rounds as JSON.
    static let race = """
    import json, os, socket, ssl, subprocess, sys, time
    tv, data, count, rounds, nginx, root = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    extra = sys.argv[7:]
    def entries():
        found = set()
        for top, dirs, files in os.walk(data):
            for name in dirs + files: found.add(os.path.relpath(os.path.join(top, name), data))
        return found
    def free_port():
        s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close(); return port
    def through(port):
        s = socket.create_connection(('127.0.0.1', port), timeout=20)
        s.sendall(b'CONNECT localhost:%d HTTP/1.1\\r\\nHost: localhost:%d\\r\\n\\r\\n' % (nginx, nginx))
        head = b''
        while b'\\r\\n\\r\\n' not in head: head += s.recv(1)
        s = ssl.create_default_context(cafile=root).wrap_socket(s, server_hostname='localhost')
        s.sendall(b'GET /index.html HTTP/1.1\\r\\nHost: localhost:%d\\r\\nConnection: close\\r\\n\\r\\n' % nginx)
        got = b''
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            got += chunk
        return got.split(b'\\r\\n', 1)[0].decode()
    wait_then_exec = 'import os, sys; r = int(sys.argv[1]); os.read(r, 1); os.close(r); os.execv(sys.argv[2], sys.argv[2:])'
    out = []
    for n in range(rounds):
        before = entries()
        r, w = os.pipe()
        children = []
        for i in range(count):
            log = open(f'race-{n}-{i}.log', 'w+')
            port = free_port()
            p = subprocess.Popen([sys.executable, '-c', wait_then_exec, str(r), tv, '--data-dir', data, 'run',
                                  '--listen', f'127.0.0.1:{port}', '--workers', '1'] + extra,
                                 pass_fds=(r,), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            children.append((p, log, port))
        os.close(r)
        os.write(w, b'x' * count)
        os.close(w)
        deadline = time.time() + 60
        while time.time() < deadline and sum(p.poll() is None for p, _, _ in children) > 1: time.sleep(0.05)
        # The one left is serving once tv status answers (the losers have all exited by now).
        while time.time() < deadline and subprocess.run([tv, '--data-dir', data, 'status'], capture_output=True).returncode != 0:
            time.sleep(0.05)
        made = sorted(entries() - before)
        codes = [p.poll() for p, _, _ in children]
        answer = [through(port) if p.poll() is None else None for p, _, port in children]
        stop = subprocess.run([tv, '--data-dir', data, 'stop'], capture_output=True, text=True)
        for p, _, _ in children:
            try: p.wait(timeout=30)
            except subprocess.TimeoutExpired: p.kill(); p.wait()
        said = []
        for p, log, _ in children:
            log.seek(0); said.append(log.read()); log.close()
        out.append({'running': codes, 'made': made, 'answer': answer, 'stop': stop.returncode,
                    'exits': [p.returncode for p, _, _ in children], 'said': said, 'left': sorted(entries() - before)})
    print(json.dumps(out))
    """

    @Test("three tv run started at the same moment on one folder, 12 rounds: exactly one runs and serves; the others say only that a session runs, exit 1, and leave nothing (no writer lock, no decrypted capture)")
    func twoAtOnce() throws {
        let world = try RunWorld()
        #expect(try world.sandbox.tv("settings", "set", "capture.decrypted", "on").status == 0)
        #expect(try world.sandbox.tv("settings", "set", "intro.seen", "true").status == 0)
        let data = world.sandbox.dataDir
        let refusal = "tv: A tv session is already running for this data folder (control socket \(data)/run/control.sock); stop it with `tv stop` first.\n"
        let r = try world.sandbox.python(Self.race, [try TVBinary.require(), data, "3", "12", String(world.nginx.tlsPort), world.tvRoot,
                                                     "--inspect", "--upstream-ca", world.pki.upstreamCA],
                                         timeout: 900)
        #expect(r.status == 0, "\(r)")
        let rounds = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [JSON], "\(r)")
        #expect(rounds.count == 12)
        for (n, round) in rounds.enumerated() {
            let running = (round["running"] as? [Any]) ?? []
            let winners = running.indices.filter { running[$0] is NSNull }
            #expect(winners.count == 1, "round \(n): \(round)")
            let said = (round["said"] as? [String]) ?? []
            let exits = (round["exits"] as? [Int]) ?? []
            for i in running.indices where !winners.contains(i) {
                #expect(exits[i] == 1 && said[i] == refusal, "round \(n), tv \(i): \(said[i])")
            }
            let answers = (round["answer"] as? [Any]) ?? []
            for i in winners {
                #expect(said[i].contains("tv is running: explicit proxy"), "round \(n): \(said[i])")
                #expect(answers[i] as? String == "HTTP/1.1 200 OK", "round \(n): \(round)")
                #expect(exits[i] == 0, "round \(n): \(said[i])")
            }
            // While the winner ran: its own writer lock, and nobody else's.
            let made = round.strings("made") ?? []
            #expect(made.filter { $0.hasPrefix("tunnelvision.sqlite3-writer-") && $0.hasSuffix(".lock") }.count == 1, "round \(n): \(made)")
            #expect(round.int("stop") == 0, "round \(n): \(round)")
            // After it stopped: its decrypted capture (it inspected one request), nobody else's,
            // and no lock of any kind.
            let left = round.strings("left") ?? []
            #expect(left.filter { $0.hasPrefix("captures/decrypted-") }.count == 1, "round \(n): \(left)")
            #expect(left.filter { $0.hasSuffix(".lock") || $0 == "run/control.sock" }.isEmpty, "round \(n): \(left)")
        }
    }
}
