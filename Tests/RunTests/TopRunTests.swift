import Foundation
import Testing
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv top` driven in a real terminal (tmux): the strip, totals and talkers match
/// `tv status --json`; resizing redraws to the new size; s and p change the view; q quits and
/// leaves the alternate screen. Also `--once --json` and the failed start remembered.
@Suite("tv top in tmux (issue 20)", .serialized)
struct TopRunTests {
    struct TmuxFailed: Error { let stderr: String }

    /// A tmux server of its own (socket in the sandbox), one session running `command`.
    final class Tmux {
        let socket: String
        init(_ box: Sandbox, width: Int, height: Int, command: [String]) throws {
            socket = box.root + "/tmux.sock"
            // The command in a script; tmux's server must not inherit the pipes Run.process reads
            // (it outlives the client), so the client runs with its output on /dev/null.
            let script = box.root + "/top.sh"
            let line = (["exec", "env"] + box.environment.map { "\($0.key)=\($0.value)" } + command).map { "'\($0)'" }.joined(separator: " ")
            try Data((line + "\n").utf8).write(to: URL(fileURLWithPath: script))
            // The client starts the server, which outlives it: `Child` hands neither anything
            // past descriptor 2 nor the test runner's blocked signals.
            let errors = box.root + "/tmux.err"
            let errorsFD = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            defer { close(errorsFD) }
            let client = try Child("tmux", ["-S", socket, "new-session", "-d", "-x", String(width), "-y", String(height), "-s", "top", "sh " + script],
                                   environment: Run.environment(home: "/tmp"), stderr: errorsFD)
            guard client.wait(seconds: 10), client.status == 0 else {
                client.stop()
                throw TmuxFailed(stderr: box.text(errors))
            }
        }
        @discardableResult
        func run(_ arguments: [String]) throws -> ProcessOutput {
            try Run.process("tmux", ["-S", socket] + arguments, in: "/", environment: Run.environment(home: "/tmp"), timeout: 10)
        }
        func capture() throws -> [String] {
            // One line per row, each ended by a newline.
            var rows = try run(["capture-pane", "-p", "-t", "top"]).out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if rows.last == "" { rows.removeLast() }
            return rows
        }
        /// Captures until `condition` holds (≤ 10 s); the last capture either way.
        func wait(_ condition: ([String]) -> Bool) throws -> [String] {
            let deadline = Date().addingTimeInterval(10)
            var screen = try capture()
            while !condition(screen), Date() < deadline {
                usleep(100_000)
                screen = try capture()
            }
            return screen
        }
        var alive: Bool { ((try? run(["has-session", "-t", "top"]))?.status ?? 1) == 0 }
        deinit { _ = try? run(["kill-server"]) }
    }

    @Test("80×24 then 200×50: strip, totals and talkers as tv status --json says; resize redraws; s sorts, p pauses, q quits")
    func tmux() throws {
        guard (try? Run.resolve("tmux")) != nil else { Issue.record("tmux is needed (Scripts/packages.sh installs it)"); return }
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run()
        for _ in 0..<2 { _ = try world.curlThrough(tv, [world.url("/index.html")]) }
        _ = try box.closedFlows(2)
        #expect(try box.waitForNoOpenConnections() == 0)
        let status = try #require(try box.status())
        let term = try Tmux(box, width: 80, height: 24, command: [try TVBinary.require(), "--data-dir", box.dataDir, "top"])
        var screen = try term.wait { $0.contains { $0.hasPrefix("This session:") } && $0.contains { $0.hasPrefix("  localhost") } }
        #expect(screen.count == 24, "\(screen)")
        #expect(screen.allSatisfy { $0.count <= 80 })
        #expect(screen[0] == "tv top  LIVE  \(status.string("modeLabel") ?? "?") on \(status.string("listen") ?? "?")", "\(screen)")
        #expect(screen[1].hasPrefix("  inspection \(status.string("inspection") ?? "?") · content keeping \(status.string("contentKeeping") ?? "?") · up "))
        let received = ByteWords.binary(Int64(status.int("bytesFromServers") ?? -1))
        let sent = ByteWords.binary(Int64(status.int("bytesFromClients") ?? -1))
        let failed = status.object("closed")?.int("failed") ?? 0
        let closedFlows = (status.object("closed")?.values.compactMap { $0 as? Int } ?? []).reduce(0, +)
        #expect(screen.contains("This session: received \(received), sent \(sent), \(closedFlows) flow\(closedFlows == 1 ? "" : "s") (0 open), \(failed) failed"), "\(screen)")
        let talker = try #require((status["talkers"] as? [JSON])?.first)
        #expect(talker.string("host") == "localhost")
        let row = try #require(screen.first { $0.hasPrefix("  localhost ") })
        let flows: String = String(talker.int("flows") ?? -1)
        let down: String = ByteWords.binary(Int64(talker.int("bytesFromServer") ?? -1))
        let up: String = ByteWords.binary(Int64(talker.int("bytesFromClient") ?? -1))
        let words: [String] = row.split(separator: " ").map(String.init)
        #expect(words.joined(separator: " ") == "localhost \(flows) \(down) \(up)", "\(row)")
        #expect(screen.contains("Newest flows"))
        #expect(screen[23] == "q quit · s sort · p pause")

        // Resized: every line redrawn for 200×50 (the keys on the 50th row).
        try term.run(["resize-window", "-t", "top", "-x", "200", "-y", "50"])
        screen = try term.wait { $0.count >= 50 && $0[49] == "q quit · s sort · p pause" }
        #expect(screen.count == 50, "\(screen.count)")
        #expect(screen[49] == "q quit · s sort · p pause", "\(screen)")
        #expect(screen.first { $0.hasPrefix("Top talkers") }?.count == 200 || screen.contains { $0.hasPrefix("Top talkers") && $0.hasSuffix("SENT") })

        try term.run(["send-keys", "-t", "top", "s"])
        screen = try term.wait { $0[1].contains("sort: flows") }
        #expect(screen[1].contains("sort: flows"), "\(screen[1])")
        try term.run(["send-keys", "-t", "top", "p"])
        screen = try term.wait { $0[1].hasSuffix("PAUSED") }
        #expect(screen[1].hasSuffix("PAUSED"), "\(screen[1])")
        #expect(screen[49] == "q quit · s sort · p resume", "\(screen[49])")
        try term.run(["send-keys", "-t", "top", "q"])
        let deadline = Date().addingTimeInterval(5)
        while term.alive, Date() < deadline { usleep(100_000) }
        #expect(!term.alive, "q did not end tv top")
        try tv.stop()
    }

    /// `tv top --once --json` with no session: exit 3, as `tv status` (it said 0: a trial), and the sample.
    func offSample(_ box: Sandbox) throws -> JSON {
        let result = try box.tvArgs(["top", "--once", "--json"])
        #expect(result.status == 3, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? JSON)
    }

    @Test("--once --json: one sample with the state, the session, rates and talkers; off (piped: not cut, exit 3), and a failed start with its reason")
    func once() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try offSample(box).string("state") == "off")
        let tv = try world.run()
        _ = try world.curlThrough(tv, [world.url("/index.html")])
        _ = try box.closedFlows(1)
        let sample = try box.json("top", "--once")
        #expect(sample.string("state") == "live")
        #expect(sample.object("session")?.int("accepted") == 1)
        #expect(sample.object("rates")?.int("received") != nil)
        #expect((sample["talkers"] as? [JSON])?.first?.string("host") == "localhost")
        #expect((sample["newest"] as? [JSON])?.count == 1)
        // A second session on the same data folder is not a failed start; one on a taken port is.
        let clash = try box.tvArgs(["run", "--listen", "127.0.0.1:\(freeLoopbackPort())"])
        #expect(clash.status != 0)
        #expect(try box.json("top", "--once").string("state") == "live")
        try tv.stop()
        #expect(try offSample(box).string("state") == "off")
        // The next session's newest flows are its own: the last session's were listed under
        // "This session" (a trial).
        let next = try world.run()
        let fresh = try box.json("top", "--once")
        #expect(fresh.string("state") == "live" && (fresh["newest"] as? [JSON])?.isEmpty == true, "\(fresh)")
        try next.stop()
        // Piped (no terminal, no $COLUMNS), the screen is not cut to 80 columns.
        let off = try box.tvArgs(["top", "--once"])
        #expect(off.status == 3)
        #expect(off.out == "tv top  OFF  no session is running for \(box.dataDir); start one with `tv run`, or run one command through tv with `tv exec -- CMD`\n", "\(off)")
        let taken = try box.tvArgs(["run", "--listen", "127.0.0.1:\(world.nginx.tlsPort)"])
        #expect(taken.status != 0)
        let failed = try offSample(box)
        #expect(failed.string("state") == "failed", "\(failed)")
        let reason = try #require(failed.string("reason"))
        #expect(taken.err.contains(reason), "\(reason) vs \(taken)")
        let screen = try box.tvArgs(["top", "--once"]).out
        #expect(screen.hasPrefix("tv top  FAILED  the last start, at "), "\(screen)")
        #expect(box.mode(box.dataDir + "/run/session-state") == 0o600)
    }
}
