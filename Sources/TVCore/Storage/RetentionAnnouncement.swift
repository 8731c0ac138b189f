import Recording

/// When a running session says what its automatic retention passes deleted (pure): at once when
/// it last said something `minimumGapNanos` or more ago, else the pass's report is held and said,
/// summed with those after it, once the gap has passed (`due`) or the session stops (`flush`).
/// A trial's session with `capture.rotateBytes 1MB` and `captures.maxBytes 3MB` printed "Deleted
/// N decrypted captures" about 80 times in 6 s (a pass per rotation); the passes still run at
/// each rotation, only their sentences are paced.
struct RetentionAnnouncement {
    /// The least time between two announcements: 10 s.
    static let minimumGapNanos: UInt64 = 10_000_000_000

    /// What was deleted since the last announcement and not said yet (nil: nothing).
    private(set) var held: StorageReport?
    /// When the last announcement was said (monotonic ns; nil: never).
    private var lastSaid: UInt64?

    enum Verdict: Equatable {
        /// Say this report (the pass's, with what was held before it) now.
        case say(StorageReport)
        /// Held: ask `due` at this time (monotonic ns).
        case hold(until: UInt64)
        /// Nothing was deleted and nothing is held.
        case nothing
    }

    /// A pass ended at `now` (monotonic ns) with `report`.
    mutating func passed(_ report: StorageReport, atNanos now: UInt64) -> Verdict {
        guard !report.deletedNothing || held != nil else { return .nothing }
        var total = held ?? StorageReport()
        total.absorb(report)
        if let lastSaid, now &- lastSaid < Self.minimumGapNanos {
            held = total
            return .hold(until: lastSaid + Self.minimumGapNanos)
        }
        held = nil
        lastSaid = now
        return .say(total)
    }

    /// What is held, when the gap has passed at `now`; nil otherwise (or when nothing is held).
    mutating func due(atNanos now: UInt64) -> StorageReport? {
        guard let held, let lastSaid, now &- lastSaid >= Self.minimumGapNanos else { return nil }
        self.held = nil
        self.lastSaid = now
        return held
    }

    /// What is held, whatever the time (the session stops).
    mutating func flush() -> StorageReport? {
        defer { held = nil }
        return held
    }
}

extension StorageReport {
    /// Adds what `later` deleted to this report's counts; the states a report ends in (what
    /// was spared, what is still over its limit, what is left in the log) become `later`'s.
    mutating func absorb(_ later: StorageReport) {
        flowsDeleted += later.flowsDeleted
        packetsDeleted += later.packetsDeleted
        exchangesDeleted += later.exchangesDeleted
        flowContentRowsDeleted += later.flowContentRowsDeleted
        certificatesDeleted += later.certificatesDeleted
        namesDeleted += later.namesDeleted
        captureFilesDeleted += later.captureFilesDeleted
        captureBytesFreed += later.captureBytesFreed
        decryptedCapturesDeleted += later.decryptedCapturesDeleted
        decryptedCaptureBytesFreed += later.decryptedCaptureBytesFreed
        packetsMarkedGone += later.packetsMarkedGone
        pinsForgotten += later.pinsForgotten
        captureSecretsBlanked += later.captureSecretsBlanked
        content.rowsDeleted += later.content.rowsDeleted
        content.filesDeleted += later.content.filesDeleted
        content.bytesFreed += later.content.bytesFreed
        content.queriesRemoved += later.content.queriesRemoved
        content.spared = later.content.spared
        content.leftAlone = later.content.leftAlone
        content.queriesLeftBefore = later.content.queriesLeftBefore
        sparedDecryptedCapture = later.sparedDecryptedCapture
        sparedRecording = later.sparedRecording
        capturesStillOver = later.capturesStillOver
        evidenceFlowsKept = later.evidenceFlowsKept
        evidenceCapturesKept = later.evidenceCapturesKept
        evidenceDecryptedCapturesKept = later.evidenceDecryptedCapturesKept
        openFlowsKept = later.openFlowsKept
        evidenceFlowsPastAge = later.evidenceFlowsPastAge
        openFlowsPastAge = later.openFlowsPastAge
        walBytesLeft = later.walBytesLeft
    }
}
