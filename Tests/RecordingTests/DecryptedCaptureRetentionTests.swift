import Testing
@testable import Recording

/// Which decrypted captures a retention pass deletes (`DecryptedCaptureRetention`), with exact
/// names: the captures' age first, then the oldest while past the room the size limit leaves;
/// the file a session writes never.
@Suite struct DecryptedCaptureRetentionTests {
    let day: Int64 = 86_400_000_000
    let now: Int64 = 1_764_620_000_000_000

    func file(_ name: String, _ bytes: Int64, daysOld: Int64, recording: Bool = false) -> DecryptedCaptureRetention.File {
        .init(name: name, bytes: bytes, modified: now - daysOld * day, isRecording: recording)
    }

    @Test func ageThenSizeOldestFirstNeverTheOneBeingWritten() {
        let files = [file("d-c", 300, daysOld: 2), file("d-a", 100, daysOld: 40), file("d-live", 50, daysOld: 45, recording: true),
                     file("d-b", 300, daysOld: 3), file("d-d", 200, daysOld: 1)]
        // Age only: the 40-day one; the 45-day one is being written.
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: 30 * day, roomBytes: nil, now: now) == ["d-a"])
        // Size only: 950 bytes in 600 of room: the oldest (never the live one) until within.
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: nil, roomBytes: 600, now: now) == ["d-a", "d-b"])
        // Both: the age first, then b and c (850 − 300 − 300 = 250 ≤ 300).
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: 30 * day, roomBytes: 300, now: now) == ["d-a", "d-b", "d-c"])
        // The packet captures took all the room (or more): every file but the live one.
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: nil, roomBytes: -5, now: now) == ["d-a", "d-b", "d-c", "d-d"])
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: nil, roomBytes: nil, now: now) == [])
        #expect(DecryptedCaptureRetention.doomed([], maxAge: day, roomBytes: 0, now: now) == [])
    }

    @Test func filesMeetingAnAuditSessionAreEvidenceAndStay() {
        // b spans 4–3 days ago, c 2–1; the audit session 3.5–3.2 days ago meets b only.
        let a = DecryptedCaptureRetention.File(name: "d-a", bytes: 100, started: now - 41 * day, modified: now - 40 * day, isRecording: false)
        let b = DecryptedCaptureRetention.File(name: "d-b", bytes: 300, started: now - 4 * day, modified: now - 3 * day, isRecording: false)
        let c = DecryptedCaptureRetention.File(name: "d-c", bytes: 300, started: now - 2 * day, modified: now - 1 * day, isRecording: false)
        let session: DecryptedCaptureRetention.Span = (now - 7 * day / 2, now - 16 * day / 5)
        #expect(DecryptedCaptureRetention.isEvidence(b, spans: [session]) && !DecryptedCaptureRetention.isEvidence(c, spans: [session]))
        // A session still recording meets every file since its start.
        #expect(DecryptedCaptureRetention.isEvidence(c, spans: [(now - 2 * day, nil)]) && !DecryptedCaptureRetention.isEvidence(a, spans: [(now - 2 * day, nil)]))
        #expect(DecryptedCaptureRetention.doomed([a, b, c], evidence: [session], maxAge: 2 * day, roomBytes: 0, now: now) == ["d-a", "d-c"])
        #expect(DecryptedCaptureRetention.doomed([a, b, c], evidence: [], maxAge: 2 * day, roomBytes: 0, now: now) == ["d-a", "d-b", "d-c"])
        // The sessions cannot be read: nothing goes.
        #expect(DecryptedCaptureRetention.doomed([a, b, c], evidence: nil, maxAge: 2 * day, roomBytes: 0, now: now) == [])
    }

    @Test("they are content: kept the sooner of captures.maxAge and content.expiry (a trial's 1 h content outlived by 30-day decrypted captures)")
    func contentExpiryWhenSooner() {
        let hour: Int64 = 3_600_000_000
        #expect(DecryptedCaptureRetention.maxAge(capturesMaxAge: 30 * day, contentExpiry: hour) == hour)
        #expect(DecryptedCaptureRetention.maxAge(capturesMaxAge: 2 * hour, contentExpiry: 7 * day) == 2 * hour)
        #expect(DecryptedCaptureRetention.maxAge(capturesMaxAge: nil, contentExpiry: day) == day)
        let files = [DecryptedCaptureRetention.File(name: "d-1", bytes: 10, modified: now - 2 * hour, isRecording: false),
                     DecryptedCaptureRetention.File(name: "d-2", bytes: 10, modified: now - hour / 2, isRecording: false),
                     DecryptedCaptureRetention.File(name: "d-3", bytes: 10, modified: now - 3 * hour, isRecording: true)]
        let maxAge = DecryptedCaptureRetention.maxAge(capturesMaxAge: 30 * day, contentExpiry: hour)
        #expect(DecryptedCaptureRetention.doomed(files, maxAge: maxAge, roomBytes: nil, now: now) == ["d-1"])
    }
}
