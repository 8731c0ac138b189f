import Testing
@testable import Recording

@Suite struct ContentRetentionPlannerTests {
    let now = testEpoch

    @Test func theCeilingIsTheFixed512MiB() {
        #expect(ContentRetentionPlanner.ceilingBytes == 536_870_912)
    }

    @Test func expiryDropsOnlySegmentsWhoseEveryRowExpired() {
        let plan = ContentRetentionPlanner.plan(segments: [
            SegmentFacts(sequence: 1, fileBytes: 100, rows: 3, expiredRows: 3),
            SegmentFacts(sequence: 2, fileBytes: 200, rows: 3, expiredRows: 2),
            SegmentFacts(sequence: 3, fileBytes: 50, rows: 0),
            SegmentFacts(sequence: 4, fileBytes: nil, rows: 2),
            SegmentFacts(sequence: 5, fileBytes: 70, rows: 1, expiredRows: 1, isBeingWritten: true),
        ], now: now, expiry: .oneHour)
        #expect(plan.expireBefore == now - 3_600_000_000)
        #expect(plan.drops == [
            .init(sequence: 1, reason: .expired, bytes: 100),
            .init(sequence: 3, reason: .unreferenced, bytes: 50),
            .init(sequence: 4, reason: .fileMissing, bytes: 0),
        ])
        #expect(plan.bytesFreed == 150)
        #expect(plan.bytesAfter == 270)
    }

    @Test func overTheCeilingTheOldestGoFirstButNeverTheOneBeingWritten() {
        let segments = [
            SegmentFacts(sequence: 7, fileBytes: 40, rows: 1),
            SegmentFacts(sequence: 8, fileBytes: 40, rows: 1),
            SegmentFacts(sequence: 9, fileBytes: 40, rows: 1),
            SegmentFacts(sequence: 10, fileBytes: 40, rows: 1, isBeingWritten: true),
        ]
        let plan = ContentRetentionPlanner.plan(segments: segments, now: now, expiry: .oneWeek, ceiling: 100)
        #expect(plan.drops == [.init(sequence: 7, reason: .overCeiling, bytes: 40), .init(sequence: 8, reason: .overCeiling, bytes: 40)])
        #expect(plan.bytesAfter == 80)
        // The segment being written alone over the ceiling stays: there is nothing older to drop.
        let alone = ContentRetentionPlanner.plan(segments: [segments[3]], now: now, expiry: .oneWeek, ceiling: 10)
        #expect(alone.drops == [])
        #expect(alone.bytesAfter == 40)
    }
}
