import FlowStore
import Foundation
import Testing

/// Issue 12 §9 as a user sees it: index values no writer writes are never printed as if true
/// ("-5 of 64 bytes kept"); the row is named as damaged, and everything else still reads.
@Suite(.serialized) struct DamagedRowCLITests {
    @Test("a damaged turn row and a damaged flow row: tv turns, tv flows and tv flow say which and go on")
    func damagedRows() throws {
        let (folder, dataDir) = try ContentCLITests.makeHome()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try SQLiteDatabase(path: dataDir + "/tunnelvision.sqlite3")
        // As a hand edit or a damaged page can: past the schema's CHECKs.
        try TurnRunDamage.set("kept_bytes", to: "-5", flow: 1, turn: 2, in: database)
        try TurnRunDamage.set("direction", to: "sideways", flow: 2, turn: 1, in: database)
        try database.execute("""
            PRAGMA ignore_check_constraints=ON;
            UPDATE flows SET bytes_up = -5 WHERE id = 3;
            """)
        database.close()

        let turns = try ContentCLITests.tv(["turns", "1"], dataDir: dataDir)
        #expect(turns.status == 0, "\(turns)")
        #expect(turns.err == "tv: The row of turn 2 of flow 1 is damaged (kept_bytes is -5); it is left out.\n", "\(turns)")
        #expect(turns.out.contains("GET /hello HTTP/1.1"), "\(turns)")
        #expect(!turns.out.contains("-5"), "\(turns)")
        #expect(!turns.out.contains("turn 2"), "\(turns)")

        let h2 = try ContentCLITests.tv(["turns", "2"], dataDir: dataDir)
        #expect(h2.err == "tv: The row of turn 1 of flow 2 is damaged (direction is 'sideways'); it is left out.\n", "\(h2)")
        #expect(!h2.out.contains("client to server"), "\(h2)")

        let flows = try ContentCLITests.tv(["flows"], dataDir: dataDir)
        #expect(flows.status == 0, "\(flows)")
        #expect(flows.out.contains("1 damaged row on this page is left out (a value no tv writes): flow 3: bytes_up is -5.\n"), "\(flows)")
        #expect(flows.out.contains("sealed.test") && flows.out.contains("h2.test") && !flows.out.contains("bin.test"), "\(flows)")

        let json = try ContentCLITests.tv(["flows", "--json"], dataDir: dataDir)
        let page = try #require(try JSONSerialization.jsonObject(with: json.data) as? [String: Any])
        #expect(page["damaged"] as? [String] == ["flow 3: bytes_up is -5"])
        #expect((page["flows"] as? [Any])?.count == 3)

        let flow = try ContentCLITests.tv(["flow", "3"], dataDir: dataDir)
        #expect(flow.status == 1)
        #expect(flow.err.contains("The row of flow 3 in the flow database at \(dataDir)/tunnelvision.sqlite3 is damaged (bytes_up is -5), so tv cannot show it; the other rows are unaffected."), "\(flow)")
        #expect(try ContentCLITests.tv(["flow", "4"], dataDir: dataDir).status == 0)
    }
}

@Suite(.serialized) struct DamagedRowEdgeCLITests {
    @Test("every turn row of a flow damaged: the cause is the index, not 'nothing was kept'; a cut segment leaves one flow out of a HAR, not the export")
    func everyRowDamagedAndACutSegment() throws {
        let (folder, dataDir) = try ContentCLITests.makeHome()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let database = try SQLiteDatabase(path: dataDir + "/tunnelvision.sqlite3")
        try TurnRunDamage.set("kept_bytes", to: "-5", flow: 1, in: database)
        try TurnRunDamage.set("segment_offset", to: "999999999", flow: 2, in: database)
        database.close()

        let turns = try ContentCLITests.tv(["turns", "1"], dataDir: dataDir)
        #expect(turns.status == 0, "\(turns)")
        #expect(turns.err == "tv: The row of turn 1 of flow 1 is damaged (kept_bytes is -5); it is left out.\ntv: The row of turn 2 of flow 1 is damaged (kept_bytes is -5); it is left out.\n", "\(turns)")
        #expect(turns.out.hasSuffix("\nNothing can be shown: turns of this connection were kept, but every one of their index rows is damaged (each is named above).\n"), "\(turns)")

        let short = try ContentCLITests.tv(["turns", "2"], dataDir: dataDir)
        #expect(!short.out.contains("tv content delete") && !short.err.contains("tv content delete"), "\(short)")

        // Flow 2's bytes cannot be read; flow 1 has no sound row: nothing to export, said per flow.
        let har = try ContentCLITests.tv(["export", "har", "1", "2", "-o", folder + "/x.har"], dataDir: dataDir)
        #expect(har.err.contains("tv: left out flow 2: its kept bytes cannot be read — The segment file "), "\(har)")
        #expect(har.err.contains("the other turns are unaffected."), "\(har)")
    }
}
