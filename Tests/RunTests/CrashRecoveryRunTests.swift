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

        let next = try world.run("--inspect")
        #expect(next.log().contains("2 flows left open by an earlier tv session that ended without stopping (killed or crashed) are now closed as interrupted, at their last recorded activity (tv flows --status interrupted).\n"), "\(next.log())")
        rows = try box.flowRows()
        try #require(rows.count == 2)
        for row in rows {
            #expect(row.string("status") == "interrupted")
            #expect(row.int("duration") == (row.int("lastActivityTime") ?? 0) - (row.int("startTime") ?? 0), "\(row)")
            #expect(row.int("bytesUp") == 7)
        }
        let listed = try box.tv("flows", "--status", "interrupted")
        #expect(listed.status == 0)
        #expect(listed.out.split(separator: "\n").filter { $0.hasSuffix("interrupted") }.count == 2, "\(listed)")
        let detail = try box.tv("flow", String(rows[0].int("id")!))
        #expect(detail.out.contains("  status       interrupted — the tv session carrying it ended without closing it (killed, crashed or lost power); it ends here at its last recorded activity\n"), "\(detail)")
        // A clean stop leaves nothing for the session after it.
        try next.stop()
        let third = try world.run("--inspect")
        #expect(!third.log().contains("left open"), "\(third.log())")
        try third.stop()
        let locks = try FileManager.default.contentsOfDirectory(atPath: box.dataDir).filter { $0.hasSuffix(".lock") }
        #expect(locks == [])
    }
}
