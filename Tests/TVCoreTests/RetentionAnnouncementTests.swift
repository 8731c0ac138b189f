import Recording
import Testing
@testable import TVCore

/// `RetentionAnnouncement`: automatic passes' deletions said at most every 10 s, summed while
/// held (a trial's session printed "Deleted N decrypted captures" ~80 times in 6 s).
@Suite("Retention announcements paced")
struct RetentionAnnouncementTests {
    static func deleted(captures: Int, bytes: Int64, turns: Int = 0) -> StorageReport {
        var r = StorageReport()
        r.decryptedCapturesDeleted = captures
        r.decryptedCaptureBytesFreed = bytes
        r.content.rowsDeleted = turns
        return r
    }

    @Test("the first is said; those within 10 s are held and summed, said when due; nothing deleted says nothing")
    func paced() {
        let s: UInt64 = 1_000_000_000
        var pacing = RetentionAnnouncement()
        #expect(pacing.passed(StorageReport(), atNanos: 1 * s) == .nothing)
        #expect(pacing.passed(Self.deleted(captures: 1, bytes: 100), atNanos: 2 * s) == .say(Self.deleted(captures: 1, bytes: 100)))
        #expect(pacing.passed(Self.deleted(captures: 2, bytes: 300), atNanos: 3 * s) == .hold(until: 12 * s))
        #expect(pacing.passed(StorageReport(), atNanos: 4 * s) == .hold(until: 12 * s))
        #expect(pacing.passed(Self.deleted(captures: 1, bytes: 50, turns: 4), atNanos: 5 * s) == .hold(until: 12 * s))
        #expect(pacing.due(atNanos: 11 * s) == nil)
        #expect(pacing.due(atNanos: 12 * s) == Self.deleted(captures: 3, bytes: 350, turns: 4))
        #expect(pacing.due(atNanos: 30 * s) == nil, "nothing held")
        // The next within 10 s of that is held again; a stop says it whatever the time.
        #expect(pacing.passed(Self.deleted(captures: 1, bytes: 10), atNanos: 13 * s) == .hold(until: 22 * s))
        #expect(pacing.flush() == Self.deleted(captures: 1, bytes: 10))
        #expect(pacing.flush() == nil)
        #expect(pacing.passed(Self.deleted(captures: 1, bytes: 10), atNanos: 40 * s) == .say(Self.deleted(captures: 1, bytes: 10)))
    }

    @Test("absorbing sums what was deleted and keeps the later pass's states")
    func absorb() {
        var first = Self.deleted(captures: 1, bytes: 100, turns: 2)
        first.flowsDeleted = 3
        first.sparedRecording = 7
        var later = Self.deleted(captures: 2, bytes: 5, turns: 1)
        later.flowsDeleted = 1
        later.sparedRecording = 9
        first.absorb(later)
        #expect(first.decryptedCapturesDeleted == 3 && first.decryptedCaptureBytesFreed == 105 && first.content.rowsDeleted == 3)
        #expect(first.flowsDeleted == 4 && first.sparedRecording == 9)
        #expect(StoragePresentation.report(first, automatic: true).first?.hasPrefix("Deleted 4 connections, 3 decrypted captures (105 B)") == true,
                "\(StoragePresentation.report(first, automatic: true))")
    }
}
