import Foundation
import Testing
@testable import Recording
import FlowTerms

/// Issue 12 §3: a database moved aside (as the corrupt-database advice says) or emptied to 0
/// bytes is replaced by a new one whose index names no segment; the segments kept before must
/// survive its sweeps.
@Suite struct SegmentRangeTests {
    let up = Direction.clientToServer

    @Test func aNewIndexVouchesForNothingInTheFolder() {
        #expect(SegmentRange.established(lowestReferenced: nil, highestInFolder: 0) == SegmentRange(first: 1, last: 0))
        #expect(SegmentRange.established(lowestReferenced: nil, highestInFolder: 7) == SegmentRange(first: 8, last: 7))
        #expect(!SegmentRange(first: 8, last: 7).contains(7))
        #expect(!SegmentRange(first: 8, last: 7).contains(8))
        #expect(SegmentRange(first: 8, last: 7).including(8) == SegmentRange(first: 8, last: 8))
        #expect(SegmentRange(first: 8, last: 9).including(12) == SegmentRange(first: 8, last: 12))
    }

    @Test func anIndexFromBeforeTheRangeVouchesFromItsLowestSegmentToTheHighestFile() {
        let range = SegmentRange.established(lowestReferenced: 3, highestInFolder: 9)
        #expect(range == SegmentRange(first: 3, last: 9))
        #expect(!range.contains(2))
        #expect(range.contains(3))
        #expect(range.contains(9))
        #expect(!range.contains(10))
        #expect(SegmentRange.established(lowestReferenced: 4, highestInFolder: 0) == SegmentRange(first: 4, last: 4))
    }

    @Test func theSweepLeavesAloneWhatTheIndexDidNotMakeAndDoesNotCountIt() {
        let now = testEpoch
        let plan = ContentRetentionPlanner.plan(segments: [
            SegmentFacts(sequence: 1, fileBytes: 500, rows: 0, madeByIndex: false),
            SegmentFacts(sequence: 2, fileBytes: 300, rows: 2, expiredRows: 2, madeByIndex: false),
            SegmentFacts(sequence: 3, fileBytes: nil, rows: 0, madeByIndex: false),
            SegmentFacts(sequence: 4, fileBytes: 40, rows: 0),
            SegmentFacts(sequence: 5, fileBytes: 60, rows: 1),
            SegmentFacts(sequence: 6, fileBytes: 70, rows: 1, isBeingWritten: true),
        ], now: now, expiry: .oneHour, ceiling: 200)
        // 1 predates the index (no row of it here); 2 does too, but its rows prove it is this
        // index's to expire; 4 is this index's and unreferenced.
        #expect(plan.leftAlone == [1])
        #expect(plan.drops == [
            .init(sequence: 2, reason: .expired, bytes: 300),
            .init(sequence: 4, reason: .unreferenced, bytes: 40),
        ])
        // 500 bytes left alone are not counted against the 200-byte ceiling: 5 and 6 stay.
        #expect(plan.bytesAfter == 130)
    }

    /// Writes one turn of `flow` with a new writer (a `tv run`), closes it.
    func record(_ home: TestHome, flow: Int64, _ count: Int, clock: ManualContentClock) throws {
        let session = ContentRecorder(writer: try ContentWriter(home.configuration(), clock: clock), policy: ContentPolicy(keep: true))
        let recorder = try #require(session.recorder(flow: flow))
        recorder.record(up, at: 0, bytes(count))
        recorder.finish()
        session.writer.flush()
        #expect(session.counters.turnsWritten == 1)
        session.writer.close()
    }

    func replaceDatabase(_ home: TestHome, with bytes: [UInt8]?) throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home.databasePath + suffix) }
        try FileManager.default.removeItem(atPath: home.databasePath)
        if let bytes { #expect(FileManager.default.createFile(atPath: home.databasePath, contents: Data(bytes))) }
    }

    @Test(arguments: ["moved aside", "0 bytes"])
    func segmentsKeptUnderTheOldDatabaseSurviveTheNewOne(_ how: String) throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        try record(home, flow: 1, 100, clock: clock)
        #expect(home.files() == ["content-00000001.seg"])
        let aside = home.folder + "/old.sqlite3"
        if how == "moved aside" {
            try FileManager.default.moveItem(atPath: home.databasePath, toPath: aside)
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home.databasePath + suffix) }
        } else {
            try FileManager.default.copyItem(atPath: home.databasePath, toPath: aside)
            try replaceDatabase(home, with: [])
        }

        // The next session: its start sweep and an explicit one leave segment 1 alone.
        clock.advance(by: 60_000_000)
        try record(home, flow: 2, 30, clock: clock)
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg"])
        let store = try home.store()
        let report = try store.sweep(now: clock.now(), expiry: .oneDay)
        #expect(report == ContentSweepReport(leftAlone: 1))
        #expect(try store.recordedTurns(flow: 2).map(\.bytes) == [bytes(30)])
        #expect(try store.turns(flow: 1) == [])
        #expect(try store.usage().predating == [1])
        store.close()
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg"])

        // Putting the old database back: its content reads again, and the new one's segment is
        // left alone in turn.
        try replaceDatabase(home, with: Array(try Data(contentsOf: URL(fileURLWithPath: aside))))
        let old = try home.store()
        defer { old.close() }
        #expect(try old.sweep(now: clock.now(), expiry: .oneDay) == ContentSweepReport(leftAlone: 1))
        #expect(try old.recordedTurns(flow: 1).map(\.bytes) == [bytes(100)])
        #expect(try old.usage().predating == [2])
        #expect(home.files() == ["content-00000001.seg", "content-00000002.seg"])
        // Deleting all content is the user's word: it takes both.
        #expect(try old.deleteAll().filesDeleted == 2)
        #expect(home.files() == [])
    }
}
