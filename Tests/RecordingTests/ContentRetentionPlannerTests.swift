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

    @Test func aSegmentHoldingAnEvidenceTurnIsKeptWholePastTheExpiryAndOverTheCeiling() {
        let segments = [
            SegmentFacts(sequence: 1, fileBytes: 100, rows: 3, expiredRows: 3, flows: [7]),
            SegmentFacts(sequence: 2, fileBytes: 100, rows: 2, expiredRows: 2),
            SegmentFacts(sequence: 3, fileBytes: 100, rows: 2, flows: [8]),
            SegmentFacts(sequence: 4, fileBytes: 100, rows: 2),
            SegmentFacts(sequence: 5, fileBytes: 0, rows: 0),
        ]
        let evidence = AuditEvidence.known(captures: [], flows: [7, 8, 99])
        let plan = ContentRetentionPlanner.plan(segments: segments, now: now, expiry: .oneHour, evidence: evidence, ceiling: 150)
        #expect(plan.keptAsEvidence == [1, 3])
        #expect(plan.drops == [
            .init(sequence: 2, reason: .expired, bytes: 100),
            .init(sequence: 4, reason: .overCeiling, bytes: 100),
            .init(sequence: 5, reason: .unreferenced, bytes: 0),
        ])
        // The evidence still counts towards the ceiling, which it alone is over.
        #expect(plan.bytesAfter == 200)

        // Once its session is deleted, the next pass takes the evidence's segments as usual.
        let after = ContentRetentionPlanner.plan(segments: segments, now: now, expiry: .oneHour, evidence: .none, ceiling: 150)
        #expect(after.keptAsEvidence == [])
        #expect(after.drops == [
            .init(sequence: 1, reason: .expired, bytes: 100),
            .init(sequence: 2, reason: .expired, bytes: 100),
            .init(sequence: 3, reason: .overCeiling, bytes: 100),
            .init(sequence: 5, reason: .unreferenced, bytes: 0),
        ])
        #expect(after.bytesAfter == 100)
    }

    @Test func unknownEvidenceKeepsEverySegmentWithARow() {
        let plan = ContentRetentionPlanner.plan(segments: [
            SegmentFacts(sequence: 1, fileBytes: 100, rows: 3, expiredRows: 3),
            SegmentFacts(sequence: 2, fileBytes: 40, rows: 0),
            SegmentFacts(sequence: 3, fileBytes: 100, rows: 1, isBeingWritten: true),
        ], now: now, expiry: .oneHour, evidence: .unknown, ceiling: 50)
        #expect(plan.keptAsEvidence == [1])
        #expect(plan.drops == [.init(sequence: 2, reason: .unreferenced, bytes: 40)])
        #expect(plan.bytesAfter == 200)
    }
}
