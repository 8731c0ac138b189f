/// What one sweep removes: rows older than the expiry cutoff, then whole segments (their rows
/// and their file together). A segment being written is never in `drops`.
public struct ContentRetentionPlan: Sendable, Equatable {
    /// Why a segment goes.
    public enum Reason: String, Sendable, Equatable {
        /// No row points into it (deleted, or never indexed).
        case unreferenced
        /// Every row pointing into it is past the expiry.
        case expired
        /// Its file is missing, so its rows point at nothing.
        case fileMissing = "file_missing"
        /// The files together are over the ceiling; oldest content goes first.
        case overCeiling = "over_ceiling"
    }

    /// One segment to drop.
    public struct Drop: Sendable, Equatable {
        public var sequence: Int
        public var reason: Reason
        /// The file's size (0 when it is missing).
        public var bytes: Int64
        public init(sequence: Int, reason: Reason, bytes: Int64) {
            self.sequence = sequence
            self.reason = reason
            self.bytes = bytes
        }
    }

    /// Rows recorded before this moment (µs since the epoch) are deleted.
    public var expireBefore: Int64
    /// Segments to drop, oldest first.
    public var drops: [Drop]
    /// Bytes of segment files left after the plan (the one being written included; the
    /// segments left alone not).
    public var bytesAfter: Int64
    /// Segments the index did not make and has no row of (they predate the database), oldest
    /// first: never deleted by a sweep, only by `tv content delete`.
    public var leftAlone: [Int]
    /// Segments holding a turn of audit evidence, oldest first: kept whole, rows and file, past
    /// the expiry and over the ceiling, until no live session holds their flows.
    public var keptAsEvidence: [Int]

    public init(expireBefore: Int64, drops: [Drop], bytesAfter: Int64, leftAlone: [Int] = [], keptAsEvidence: [Int] = []) {
        self.keptAsEvidence = keptAsEvidence
        self.expireBefore = expireBefore
        self.drops = drops
        self.bytesAfter = bytesAfter
        self.leftAlone = leftAlone
    }

    /// Bytes of files the plan deletes.
    public var bytesFreed: Int64 { drops.reduce(0) { $0 + $1.bytes } }
}
