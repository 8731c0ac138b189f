import Foundation
import Testing

/// Issue 23: an audit session's decrypted content is exempt from `content.expiry` until the
/// session is deleted (`ContentRetentionPlanner`'s evidence input), and
/// `tv storage delete-everything` spares it; through real `tv run` sessions with curl.
@Suite("tv audit: the session's kept content outlives content.expiry until the session is deleted (issue 23)", .serialized)
struct AuditContentRunTests {
    /// `flow id: [segments]` of the content index, read with Python's sqlite3.
    func turns(_ box: Sandbox) throws -> String {
        let read = try box.tool("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            rows = db.execute('SELECT flow_id, group_concat(DISTINCT segment) FROM content_turn_runs GROUP BY flow_id ORDER BY flow_id')
            print(' '.join('%d:%s' % row for row in rows))
            """, box.dataDir + "/tunnelvision.sqlite3"])
        #expect(read.status == 0, "\(read)")
        return read.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func segments(_ box: Sandbox) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: box.dataDir + "/content").filter { $0.hasSuffix(".seg") }.sorted()
    }

    @Test("content.expiry 1h, every turn recorded 2 h ago: tv storage apply takes the other flow's older segment and keeps the session's; delete-everything spares it; after tv audit delete the next pass takes it")
    func sessionContentOutlivesItsExpiry() throws {
        let world = try RunWorld()
        let box = world.sandbox
        #expect(try box.tv("settings", "set", "content.expiry", "1h").status == 0)
        #expect(try box.tv("audit", "project", "new", "app").status == 0)

        // A flow outside any session, in the first segment.
        let plain = try world.run("--inspect", "--keep-content")
        #expect(try world.curlThrough(plain, ["--http1.1", world.url("/index.html?plain")]).out == "hello from nginx\n")
        let other = try #require(try box.closedFlows(1).first?.int("id"))
        _ = try plain.stop()
        // The session's flow, in the next segment (each run writes its own).
        let audited = try world.run("--inspect", "--keep-content", "--audit", "app")
        #expect(try world.curlThrough(audited, ["--http1.1", world.url("/index.html?session")]).out == "hello from nginx\n")
        let session = try #require(try box.closedFlows(2).compactMap { $0.int("id") }.max())
        _ = try audited.stop()
        #expect(try segments(box) == ["content-00000001.seg", "content-00000002.seg"])
        #expect(try turns(box) == "\(other):1 \(session):2")

        // Every turn recorded two hours ago: all past the one-hour expiry.
        let age = try box.tool("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute('UPDATE content_turn_runs SET recorded_at = recorded_at - 7200000000')
            db.commit()
            """, box.dataDir + "/tunnelvision.sqlite3"])
        #expect(age.status == 0, "\(age)")

        let apply = try box.tv("storage", "apply")
        #expect(apply.status == 0, "\(apply)")
        #expect(try turns(box) == "\(session):2")
        #expect(try segments(box) == ["content-00000002.seg"])
        // Its response is still readable.
        let response = box.work + "/response.bin"
        let turn = try box.tv("turns", "\(session)", "--turn", "2", "--raw", "-o", response)
        #expect(turn.status == 0 && String(decoding: box.read(response), as: UTF8.self).hasSuffix("hello from nginx\n"), "\(turn)")

        let everything = try box.tv("storage", "delete-everything", "--yes")
        #expect(everything.status == 0, "\(everything)")
        #expect(try turns(box) == "\(session):2")
        #expect(try segments(box) == ["content-00000002.seg"])

        // `tv content delete` would take it: said before asking (it went unsaid: a trial).
        let asked = try box.tv("content", "delete")
        #expect(asked.status != 0 && asked.err.contains("1 of those flows is evidence of an audit session: its content goes too, and a bundle of that session will carry none"), "\(asked)")
        #expect(try turns(box) == "\(session):2")

        let delete = try box.tv("audit", "delete", "1", "--yes")
        #expect(delete.status == 0, "\(delete)")
        #expect(try box.tv("storage", "apply").status == 0)
        #expect(try turns(box) == "")
        #expect(try segments(box) == [])
    }
}
