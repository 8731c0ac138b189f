import XCTest
@testable import Recording

/// Exact plans for every case of `RetentionPlanner` (history, captures, content, evidence, the
/// recording file, delete-everything).
final class RetentionPlannerTests: XCTestCase {
    let day: Int64 = 86_400_000_000
    let now: Int64 = 1_800_000_000_000_000
    let mb: Int64 = 1_000_000

    func limits(history: Int64? = nil, bytes: Int64? = nil, age: Int64? = nil) -> StorageLimits {
        StorageLimits(historyMaxAge: history, capturesMaxBytes: bytes, capturesMaxAge: age)
    }

    func capture(_ seq: Int, daysAgo: Int64, mb size: Int64, recording: Bool = false, row: Bool = true) -> CaptureFileFacts {
        CaptureFileFacts(sequence: seq, startedAt: now - daysAgo * day - 3_600_000_000, endedAt: recording ? nil : now - daysAgo * day,
                         bytes: size * mb, isRecording: recording, hasRow: row)
    }

    var noContent: ContentRetentionPlan { ContentRetentionPlan(expireBefore: now - ContentExpiry.oneDay.microseconds, drops: [], bytesAfter: 0) }

    func testAnEmptyStoreDeletesNothing() {
        let plan = RetentionPlanner.plan(inventory: StorageInventory(oldestFlowStart: nil), limits: .factory, now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: nil, captureDrops: [], capturesBytesAfter: 0, content: noContent))
    }

    func testFlowsOlderThanTheHistoryAgeGoAndYoungerOnesDoNot() {
        let old = RetentionPlanner.plan(inventory: StorageInventory(oldestFlowStart: now - 31 * day), limits: limits(history: 30 * day), now: now)
        XCTAssertEqual(old.deleteFlowsStartedBefore, now - 30 * day)
        let young = RetentionPlanner.plan(inventory: StorageInventory(oldestFlowStart: now - 29 * day), limits: limits(history: 30 * day), now: now)
        XCTAssertNil(young.deleteFlowsStartedBefore)
        let unlimited = RetentionPlanner.plan(inventory: StorageInventory(oldestFlowStart: now - 3_000 * day), limits: limits(), now: now)
        XCTAssertNil(unlimited.deleteFlowsStartedBefore)
    }

    /// The files being recorded that a limit deletes once they close: taken as closed now (their
    /// age from now), planned with the closed ones, the oldest first.
    func testTheRecordingFilesALimitDeletesOnceTheyClose() {
        let inventory = StorageInventory(oldestFlowStart: nil, captures: [
            capture(1, daysAgo: 3, mb: 5), capture(2, daysAgo: 40, mb: 40, recording: true), capture(3, daysAgo: 1, mb: 2, recording: true),
        ])
        // 10 MB: the closed 5 MB file goes first, then the 40 MB one being recorded; the 2 MB one fits.
        XCTAssertEqual(RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: [2, 3], limits: limits(bytes: 10 * mb), now: now),
                       [.init(sequence: 2, reason: .overLimit, bytes: 40 * mb)])
        XCTAssertEqual(RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: [2, 3], limits: limits(bytes: 50 * mb), now: now), [])
        // An age counts from the close: a file started 40 days ago and still written is not old.
        XCTAssertEqual(RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: [2, 3], limits: limits(age: 30 * day), now: now), [])
        // Audit evidence stays, and the files after it go for the room it takes; nothing
        // recorded, nothing said.
        XCTAssertEqual(RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: [2, 3], limits: limits(bytes: 10 * mb),
                                                                  evidence: .known(captures: [2], flows: []), now: now),
                       [.init(sequence: 3, reason: .overLimit, bytes: 2 * mb)])
        XCTAssertEqual(RetentionPlanner.recordingDoomedOnceClosed(inventory: inventory, recording: [], limits: limits(bytes: 1 * mb), now: now), [])
        // The plan of the files as they are still spares both.
        XCTAssertEqual(RetentionPlanner.plan(inventory: inventory, limits: limits(bytes: 10 * mb), now: now).captureDrops.map(\.sequence), [1])
    }

    func testExpiredCapturesGoButTheRecordingFileNeverDoes() {
        let inventory = StorageInventory(oldestFlowStart: nil, captures: [
            capture(1, daysAgo: 10, mb: 5), capture(2, daysAgo: 8, mb: 6), capture(3, daysAgo: 2, mb: 7),
            capture(4, daysAgo: 9, mb: 8, recording: true),
        ])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(age: 7 * day), now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: nil,
                                           captureDrops: [.init(sequence: 1, reason: .expired, bytes: 5 * mb),
                                                          .init(sequence: 2, reason: .expired, bytes: 6 * mb)],
                                           capturesBytesAfter: 15 * mb, sparedRecording: 4, content: noContent))
    }

    func testOverTheSizeLimitTheOldestGoFirstUntilUnder() {
        let inventory = StorageInventory(oldestFlowStart: nil, captures: [
            capture(3, daysAgo: 1, mb: 30), capture(1, daysAgo: 3, mb: 40), capture(2, daysAgo: 2, mb: 20),
            capture(4, daysAgo: 0, mb: 10, recording: true),
        ])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(bytes: 50 * mb), now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: nil,
                                           captureDrops: [.init(sequence: 1, reason: .overLimit, bytes: 40 * mb),
                                                          .init(sequence: 2, reason: .overLimit, bytes: 20 * mb)],
                                           capturesBytesAfter: 40 * mb, sparedRecording: 4, content: noContent))
    }

    func testExpiryThenSizeAndTheRecordingFileAloneOverTheLimitIsSaid() {
        let inventory = StorageInventory(oldestFlowStart: nil, captures: [
            capture(1, daysAgo: 40, mb: 5), capture(2, daysAgo: 1, mb: 20), capture(3, daysAgo: 0, mb: 90, recording: true),
        ])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(bytes: 50 * mb, age: 30 * day), now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: nil,
                                           captureDrops: [.init(sequence: 1, reason: .expired, bytes: 5 * mb),
                                                          .init(sequence: 2, reason: .overLimit, bytes: 20 * mb)],
                                           capturesBytesAfter: 90 * mb, capturesStillOver: .recording, sparedRecording: 3,
                                           content: noContent))
    }

    func testAFileWithoutARowGoesWhateverItsAge() {
        let inventory = StorageInventory(oldestFlowStart: nil, captures: [capture(1, daysAgo: 0, mb: 3, row: false),
                                                                          capture(2, daysAgo: 0, mb: 4, recording: true, row: false)])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(), now: now)
        XCTAssertEqual(plan.captureDrops, [.init(sequence: 1, reason: .unreferenced, bytes: 3 * mb)])
        XCTAssertEqual(plan.capturesBytesAfter, 4 * mb)
        XCTAssertEqual(plan.sparedRecording, 2)
    }

    func testAuditEvidenceIsExemptFromEveryLimit() {
        let inventory = StorageInventory(oldestFlowStart: now - 90 * day, captures: [
            capture(1, daysAgo: 60, mb: 40), capture(2, daysAgo: 50, mb: 40), capture(3, daysAgo: 1, mb: 40),
        ])
        let evidence = AuditEvidence.known(captures: [1, 3], flows: [7, 9])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(history: 30 * day, bytes: 50 * mb, age: 30 * day),
                                         evidence: evidence, now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: now - 30 * day, exemptFlows: [7, 9],
                                           captureDrops: [.init(sequence: 2, reason: .expired, bytes: 40 * mb)],
                                           capturesBytesAfter: 80 * mb, capturesStillOver: .evidence, content: noContent))
    }

    func testUnknownEvidenceDeletesNoCaptureAndNoFlow() {
        let inventory = StorageInventory(oldestFlowStart: now - 90 * day, captures: [capture(1, daysAgo: 60, mb: 80)])
        let plan = RetentionPlanner.plan(inventory: inventory, limits: limits(history: 30 * day, bytes: 50 * mb, age: 30 * day),
                                         evidence: .unknown, now: now)
        XCTAssertEqual(plan, RetentionPlan(deleteFlowsStartedBefore: nil, captureDrops: [], capturesBytesAfter: 80 * mb,
                                           capturesStillOver: .evidenceUnknown, content: noContent))
    }

    func testTheContentHalfIsTheContentPlannersOwnPlan() {
        let segments = [SegmentFacts(sequence: 1, fileBytes: 100, rows: 2, expiredRows: 2),
                        SegmentFacts(sequence: 2, fileBytes: 300, rows: 1),
                        SegmentFacts(sequence: 3, fileBytes: 50, rows: 1, isBeingWritten: true)]
        var l = limits()
        l.contentExpiry = .oneHour
        l.contentCeiling = 200
        let plan = RetentionPlanner.plan(inventory: StorageInventory(oldestFlowStart: nil, contentSegments: segments), limits: l, now: now)
        XCTAssertEqual(plan.content, ContentRetentionPlan(expireBefore: now - 3_600_000_000,
                                                          drops: [.init(sequence: 1, reason: .expired, bytes: 100),
                                                                  .init(sequence: 2, reason: .overCeiling, bytes: 300)],
                                                          bytesAfter: 50))
    }

    func testDeleteEverythingSparesTheRecordingFileAndEvidence() {
        let inventory = StorageInventory(oldestFlowStart: now - day, captures: [
            capture(1, daysAgo: 2, mb: 1), capture(2, daysAgo: 1, mb: 2), capture(3, daysAgo: 0, mb: 3, recording: true),
        ])
        let plan = RetentionPlanner.everything(inventory: inventory, evidence: .known(captures: [2], flows: [5]), now: now)
        var expected = RetentionPlan(deleteFlowsStartedBefore: Int64.max, exemptFlows: [5],
                                     captureDrops: [.init(sequence: 1, reason: .requested, bytes: 1 * mb)],
                                     capturesBytesAfter: 5 * mb, sparedRecording: 3, content: noContent)
        expected.deletesAllContent = true
        XCTAssertEqual(plan, expected)
        let empty = RetentionPlanner.everything(inventory: StorageInventory(oldestFlowStart: nil), now: now)
        XCTAssertNil(empty.deleteFlowsStartedBefore)
        XCTAssertEqual(empty.captureDrops, [])
    }
}
