import Synchronization

/// Which server certificates' DER a loop has already handed to the flow writer (issue 23's
/// `certificates` rows), so a repeating chain costs its fingerprints only. It starts over when it
/// holds `limit` fingerprints, when it is `maxAgeNanos` old, and when the process forgot every
/// certificate (`ServerCertificateMemory.forgetAll`, after delete-everything pruned the rows):
/// retention prunes only rows whose DER last arrived over an hour ago (`certificates.stored_at`),
/// so a chain written later never names a row pruned meanwhile. Pure: the clock and the
/// process's forget count come in.
struct SentCertificates {
    /// Fingerprints held before starting over (a certificate seen again after that is handed to
    /// the writer again, which only refreshes its `stored_at`).
    static let limit = 4_096
    /// Thirty minutes, in monotonic ns: half of retention's hour of grace.
    static let maxAgeNanos: UInt64 = 30 * 60 * 1_000_000_000

    private(set) var fingerprints: Set<String> = []
    /// When the set started (monotonic ns); nil before the first note.
    private var since: UInt64?
    /// The process's forget count the set started at.
    private var forgets: UInt64 = 0

    /// Records that `sha256`'s DER goes to the sink now (`now`: monotonic ns; `forgets`:
    /// `ServerCertificateMemory.forgets`); false when it already went since the set started.
    mutating func note(_ sha256: String, now: UInt64, forgets: UInt64) -> Bool {
        if fingerprints.count >= Self.limit || forgets != self.forgets || since.map({ now &- $0 >= Self.maxAgeNanos }) ?? true {
            fingerprints.removeAll(keepingCapacity: true)
            since = now
            self.forgets = forgets
        }
        return fingerprints.insert(sha256).inserted
    }
}

/// The process-wide count of "forget every certificate sent" (delete-everything pruned the
/// `certificates` rows the loops think the writer holds); each loop's `SentCertificates` starts
/// over when it changes.
public enum ServerCertificateMemory {
    private static let count = Atomic<UInt64>(0)

    /// Every loop hands each server certificate's DER to the writer again from now.
    public static func forgetAll() { count.add(1, ordering: .relaxed) }

    /// How many times `forgetAll` was called.
    static var forgets: UInt64 { count.load(ordering: .relaxed) }
}
