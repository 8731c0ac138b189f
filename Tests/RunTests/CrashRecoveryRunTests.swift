import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §7 through the real binary: a `tv run` killed with SIGKILL while connections are
/// open leaves their rows open; the next session closes them as interrupted at their last
/// recorded activity and says so once.
@Suite("tv run: flows left open by a killed session (issue 12 §7)", .serialized)
struct CrashRecoveryRunTests {
    @Test("kill -9 with two tunnels open: the rows stay open until the next tv run closes them as interrupted")
    func killedSessionsOpenFlowsAreInterruptedAtNextStart() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let tv = try world.run("--inspect")
        let held = try HeldTunnels(box, proxyPort: tv.port)
        defer { held.stop() }
        var rows = try held.waitUntilBothCarried { try box.flowRows() }
        try #require(rows.count == 2, "\(rows)")
        tv.kill()
        held.releaseClients()
        // What the bug looked like: open for ever.
        rows = try box.flowRows()
        #expect(rows.allSatisfy { $0["duration"] is NSNull }, "\(rows)")
        // …and the list and both JSON forms say they were left open, not "open" (a trial).
        #expect(rows.allSatisfy { $0["leftOpen"] as? String == "killed" }, "\(rows)")
        let leftList = try box.tv("flows").out
        #expect(leftList.components(separatedBy: " unknown  left open: its session was killed\n").count == 3
                && !leftList.contains(" open "), "\(leftList)")
        let leftJSON = try box.tv("flow", String(rows[0].int("id") ?? 0), "--json").out
        #expect(leftJSON.contains(#""leftOpen": "killed""#), "\(leftJSON)")
        // Meanwhile `tv flow` says it was left open, not "open, N so far" growing (a trial).
        let left = try box.tv("flow", String(rows[0].int("id") ?? 0)).out
        #expect(left.contains("\n  duration     unknown: its session ended without closing it (killed or crashed); the next tv run or tv exec closes it as interrupted\n")
                && !left.contains("so far") && !left.contains("(still open)"), "\(left)")

        let next = try world.run("--inspect")
        #expect(next.log().contains("2 flows left open by an earlier tv session that ended without stopping (killed or crashed) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted).\n"), "\(next.log())")
        rows = try box.flowRows()
        try #require(rows.count == 2)
        for row in rows {
            #expect(row.string("status") == "interrupted")
            #expect(row.int("duration") == (row.int("lastActivityTime") ?? 0) - (row.int("startTime") ?? 0), "\(row)")
            #expect(row.int("bytesUp") == 7)
            #expect(row["leftOpen"] is NSNull, "\(row)")
        }
        let listed = try box.tv("flows", "--status", "interrupted")
        #expect(listed.status == 0)
        #expect(listed.out.split(separator: "\n").filter { $0.hasSuffix("interrupted") }.count == 2, "\(listed)")
        let detail = try box.tv("flow", String(rows[0].int("id")!))
        #expect(detail.out.contains("  status       interrupted — its end was never recorded: the tv session carrying it was killed, crashed or lost power, or stopped unable to save it (a full disk); it ends here at its last recorded activity\n"), "\(detail)")
        // A clean stop leaves nothing for the session after it.
        try next.stop()
        let third = try world.run("--inspect")
        #expect(!third.log().contains("left open"), "\(third.log())")
        try third.stop()
        let locks = try FileManager.default.contentsOfDirectory(atPath: box.dataDir).filter { $0.hasSuffix(".lock") }
        #expect(locks == [])
    }

    /// A server that answers any GET with a 6 MB body sent 64 KiB every 100 ms (~10 s): its
    /// bytes keep moving through tv for seconds whatever the sockets' buffers hold.
    static let slowServer = """
        import socket, sys, threading, time
        srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", int(sys.argv[1]))); srv.listen(8)
        def serve(c):
            try:
                c.recv(65536)
                c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 6291456\\r\\nConnection: close\\r\\n\\r\\n")
                for _ in range(96):
                    c.sendall(b"a" * 65536); time.sleep(0.1)
            except OSError:
                pass
            c.close()
        while True:
            c, _ = srv.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """

    /// Found by a new-user trial: a slow download showed 0 B in `tv flows` for as long as it
    /// lasted, and a session killed under it left the flow "interrupted" after 0 µs with 0 B.
    @Test("slow downloads' open rows show their bytes while they last (told every 2 s), plain through the proxy and through a CONNECT tunnel; a session killed under them leaves each row interrupted at its recorded activity, with those bytes")
    func openFlowsShowTheirBytesAndSurviveAKill() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let slow = try PythonServer(Self.slowServer)
        defer { slow.stop() }
        let tv = try world.run()
        let url = "http://127.0.0.1:\(slow.port)/slow.bin"
        let plain = try Background(["curl", "-sS", "-x", tv.proxyURL, "-o", "/dev/null", url], logPath: box.root + "/slow-plain.log")
        defer { plain.stop() }
        let tunnel = try Background(["curl", "-sS", "-p", "-x", tv.proxyURL, "-o", "/dev/null", url], logPath: box.root + "/slow-tunnel.log")
        defer { tunnel.stop() }
        var open: [JSON] = []
        for _ in 0..<200 {
            open = try box.flowRows().filter { $0["duration"] is NSNull && ($0.int("bytesDown") ?? 0) > 100_000 }
            if open.count == 2 { break }
            usleep(50_000)
        }
        let seen = try box.flowRows()
        try #require(open.count == 2, "not two open rows with their bytes: \(seen)")
        for row in open { #expect((row.int("lastActivityTime") ?? 0) > (row.int("startTime") ?? 0) + 1_000_000, "\(row)") }
        tv.kill()
        plain.stop()
        tunnel.stop()
        let next = try world.run()
        defer { try? next.stop() }
        for row in open {
            let closed = try #require(try box.flowRows().first { $0.int("id") == row.int("id") })
            #expect(closed.string("status") == "interrupted", "\(closed)")
            #expect((closed.int("duration") ?? 0) >= 1_000_000 && (closed.int("bytesDown") ?? 0) >= (row.int("bytesDown") ?? 0), "\(closed)")
        }
    }
}
