import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `tv run` and two `tv exec`s live at once on one data folder, read through the built `tv`
/// by `tv status`, `tv diag` and `tv top`: each session is shown, with how many there are and
/// what they add up to, and `--session PID` shows one (only the first was shown, and nothing
/// said a second ran: a new-user trial). Then the closing lines of commands that sent nothing
/// or were killed. Everything runs in a network namespace of its own (`wtl-…`), on loopback.
@Suite("several sessions on one data folder, through the built tv", .serialized,
       .enabled(if: LiveSessionsLab.met, "needs root, /dev/net/tun, ip and the built tv"))
final class LiveSessionsExecTests {
    let lab: LiveSessionsLab

    init() throws { lab = try LiveSessionsLab() }
    deinit { lab.close() }

    func json(_ output: Output) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(output.out.utf8))) as? [String: Any]) ?? [:]
    }

    /// Waits (up to 20 s) until `tv status --json` counts `n` sessions (1: no `sessionCount`).
    func waitForSessions(_ n: Int) -> [String: Any] {
        var last: [String: Any] = [:]
        for _ in 0..<200 {
            let status = lab.tv(["status", "--json"])
            last = json(status)
            if status.status == 0, (last["sessionCount"] as? Int ?? 1) == n { return last }
            usleep(100_000)
        }
        return last
    }

    @Test("tv status, tv diag and tv top see every live session: how many, each one, the sums; --session PID shows one; a pid no session has is refused")
    func everySessionShown() throws {
        let run = try Daemon(lab.inside(["run", "--quiet", "--listen", "127.0.0.1:19811"]), log: lab.dir + "/run.log")
        defer { run.stop(signal: SIGTERM) }
        let alone = waitForSessions(1)
        #expect(alone["pid"] as? Int == Int(run.pid) && alone["sessionCount"] == nil && alone["sessions"] == nil, "\(alone) \(run.output)")
        let one = lab.tv(["status"])
        #expect(one.out.hasPrefix("tv is running (pid \(run.pid)): explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:19811\n"), "\(one)")

        let gate = lab.dir + "/gate"
        let wait = "i=0; while [ ! -e \(gate) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
        let first = try Daemon(lab.inside(["exec", "--yes", "--quiet", "--", "sh", "-c", wait]), log: lab.dir + "/first.log")
        defer { first.stop() }
        _ = waitForSessions(2)
        let second = try Daemon(lab.inside(["exec", "--yes", "--quiet", "--", "sh", "-c", wait]), log: lab.dir + "/second.log")
        defer { second.stop() }
        let three = waitForSessions(3)
        let pids = (three["sessions"] as? [[String: Any]] ?? []).compactMap { $0["pid"] as? Int }
        #expect(pids == [Int(run.pid), Int(first.pid), Int(second.pid)], "\(three) \(first.output) \(second.output)")
        #expect(three["pid"] as? Int == Int(run.pid) && three["running"] as? Bool == true)
        #expect((three["totals"] as? [String: Any])?["openConnections"] as? Int == 0, "\(three)")

        let text = lab.tv(["status"])
        let lines = text.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(text.status == 0 && lines[0] == "3 tv sessions are running for \(lab.dataDir); each is shown below (`tv status --session PID` shows one).", "\(text)")
        #expect(lines[1] == "  together          0 connections open, 0 accepted; ↑ 0 B from clients, ↓ 0 B from servers; 0 flows closed (0 failed)", "\(text)")
        let label = "tv exec of sh -c '\(wait)' on a TUN in its own network namespace"
        let titles = lines.filter { $0.hasPrefix("tv is running") }
        #expect(titles == ["tv is running (pid \(run.pid)): explicit proxy (HTTP CONNECT and plain HTTP) on 127.0.0.1:19811",
                           "tv is running (pid \(first.pid)): \(label)", "tv is running (pid \(second.pid)): \(label)"], "\(text)")

        let chosen = lab.tv(["status", "--json", "--session", String(second.pid)])
        #expect(chosen.status == 0 && json(chosen)["pid"] as? Int == Int(second.pid) && json(chosen)["sessionCount"] == nil, "\(chosen)")
        let chosenText = lab.tv(["status", "--session", String(first.pid)])
        #expect(chosenText.out.hasPrefix("tv is running (pid \(first.pid)): \(label)\n  inspection        off\n"), "\(chosenText)")
        let nobody = lab.tv(["status", "--session", "1"])
        #expect(nobody.status == 3 && nobody.err.hasPrefix("tv: No session live on \(lab.dataDir) has pid 1; the live ones are pid \(run.pid): "), "\(nobody)")
        let notPID = lab.tv(["diag", "--session", "abc"])
        #expect(notPID.status == 2 && notPID.err.contains("--session takes a live session's process id"), "\(notPID)")

        let diag = lab.tv(["diag"])
        #expect(diag.status == 0 && diag.out.hasPrefix("3 tv sessions are running for \(lab.dataDir); each is diagnosed below (`tv diag --session PID` diagnoses one).\n\nSession pid \(run.pid): "), "\(diag)")
        #expect(diag.out.contains("\nSession pid \(second.pid): \(label)\n"), "\(diag)")
        let diagJSON = json(lab.tv(["diag", "--json"]))
        #expect(diagJSON["sessionCount"] as? Int == 3 && (diagJSON["sessions"] as? [Any])?.count == 3, "\(diagJSON)")

        let top = lab.tv(["top", "--once"])
        #expect(top.status == 0 && top.out.hasPrefix("tv top  LIVE  3 sessions, added up (`tv top --session PID` shows one)\n  pid \(run.pid): explicit proxy"), "\(top)")
        #expect(top.out.contains("\nAll 3 sessions: received 0 B, sent 0 B, 0 flows (0 open), 0 failed\n"), "\(top)")
        let topJSON = json(lab.tv(["top", "--once", "--json"]))
        #expect(topJSON["sessionCount"] as? Int == 3 && (topJSON["session"] as? [String: Any])?["pid"] as? Int == Int(run.pid), "\(topJSON)")
        let topOne = json(lab.tv(["top", "--once", "--json", "--session", String(first.pid)]))
        #expect(topOne["sessionCount"] == nil && (topOne["session"] as? [String: Any])?["pid"] as? Int == Int(first.pid), "\(topOne)")

        FileManager.default.createFile(atPath: gate, contents: Data())
        #expect(first.wait(timeout: 30) == 0, "\(first.output)")
        #expect(second.wait(timeout: 30) == 0, "\(second.output)")
        let back = waitForSessions(1)
        #expect(back["pid"] as? Int == Int(run.pid) && back["sessionCount"] == nil, "\(back)")
        run.stop(signal: SIGTERM)
        let none = lab.tv(["status"])
        #expect(none.status == 3 && none.out == "No tv session is running for \(lab.dataDir); start one with `tv run`, or run one command through tv with `tv exec -- CMD`.\n", "\(none)")
        // Neither exec sent a packet: no capture file was kept.
        let captures = (try? FileManager.default.contentsOfDirectory(atPath: lab.dataDir + "/captures")) ?? []
        #expect(!captures.contains { $0.hasPrefix("capture-") }, "\(captures)")
    }

    @Test("the closing line: a command that sent nothing made no flow (and left no capture file); one killed names the signal; one not executable exits 126, one missing 127")
    func closingLines() throws {
        let quiet = lab.tv(["exec", "--yes", "--", "true"])
        #expect(quiet.status == 0, "\(quiet)")
        #expect(quiet.err.contains("tv: true exited with 0; it made no connection and sent no datagram through tv, so no flow was recorded.\n"), "\(quiet)")
        #expect(!quiet.err.contains("its packets") && !quiet.err.contains("its connections are in"), "\(quiet)")
        let killed = lab.tv(["exec", "--yes", "--", "sh", "-c", "kill -KILL $$"])
        #expect(killed.status == 137, "\(killed)")
        #expect(killed.err.contains("tv: sh was killed by SIGKILL (9), so tv exits with 137; it made no connection"), "\(killed)")
        let script = lab.dir + "/not-executable.sh"
        try "#!/bin/sh\necho hi\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let refused = lab.tv(["exec", "--yes", "--quiet", "--", script])
        #expect(refused.status == 126 && refused.err.contains("check that it is a program you may run"), "\(refused)")
        let missing = lab.tv(["exec", "--yes", "--quiet", "--", "no-such-command-wtl"])
        #expect(missing.status == 127 && missing.err.contains("check the command name and PATH"), "\(missing)")
    }
}

/// A network namespace of the test's own (`wtl-TAG`, loopback up) and a data folder; removed at
/// `close`.
final class LiveSessionsLab: Sendable {
    let namespace: String
    let dir: String
    var dataDir: String { dir + "/data" }

    static let met: Bool = {
        guard geteuid() == 0, access("/dev/net/tun", R_OK | W_OK) == 0, TVBinary.path != nil else { return false }
        return Sh.run(["which", "ip"]).status == 0
    }()

    init() throws {
        let tag = String(UUID().uuidString.prefix(6)).lowercased()
        namespace = "wtl-\(tag)"
        dir = NSTemporaryDirectory() + "wtl-\(tag)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Sh.must(["ip", "netns", "add", namespace])
        try Sh.must(["ip", "-n", namespace, "link", "set", "lo", "up"])
    }

    /// `tv --data-dir DATA ARGS…` run inside the namespace (for a `Daemon`).
    func inside(_ arguments: [String]) -> [String] {
        ["ip", "netns", "exec", namespace, TVBinary.path!, "--data-dir", dataDir] + arguments
    }

    /// Runs `tv ARGS…` inside the namespace to its end.
    func tv(_ arguments: [String], timeout: Double = 60) -> Output {
        Sh.run(inside(arguments), timeout: timeout)
    }

    func close() {
        Sh.run(["ip", "netns", "del", namespace])
        try? FileManager.default.removeItem(atPath: dir)
    }
}
