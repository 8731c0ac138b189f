/// Which decrypted captures (`captures/decrypted-*.pcapng`, the files of sessions that inspected
/// flows) a retention pass deletes (pure). They are capture files of another kind and live
/// under the captures' limits: a file whose last packet (its modification time) is older than
/// `capturesMaxAge` goes, then the oldest while they exceed what `capturesMaxBytes` leaves
/// after the packet captures (`roomBytes`). They hold plaintext, so they are content too
/// (DESIGN §5: decrypted content expires, 1 h / 1 d / 1 w, never forever): one older than
/// `content.expiry` goes as well, whichever is sooner (`maxAge(capturesMaxAge:contentExpiry:)`);
/// before, they followed `captures.maxAge` alone and outlived a 1 h content expiry 700-fold
/// (a trial). The file a running session writes is never deleted,
/// nor one an audit session holds: `tv audit bundle` cuts its `decrypted.pcapng` from the files
/// whose span (`started` to `modified`) meets the audit session's, so such a file is evidence
/// until that session is deleted, as its flows and packet captures are. No row describes
/// them (tshark reads them, `tv` does not), so nothing else is marked.
public enum DecryptedCaptureRetention {
    /// One decrypted capture on disk.
    public struct File: Sendable, Equatable {
        public var name: String
        public var bytes: Int64
        /// Its session's start (µs since the epoch; its name says it to the second).
        public var started: Int64
        /// Its last write (µs since the epoch): its newest packet.
        public var modified: Int64
        /// Whether a running session holds it (its exclusive flock).
        public var isRecording: Bool

        public init(name: String, bytes: Int64, started: Int64 = 0, modified: Int64, isRecording: Bool) {
            self.name = name
            self.bytes = bytes
            self.started = started
            self.modified = modified
            self.isRecording = isRecording
        }
    }

    /// An audit session's span (µs; `to` nil while it records).
    public typealias Span = (from: Int64, to: Int64?)

    /// How long a closed decrypted capture is kept (µs): the sooner of `captures.maxAge` (nil:
    /// off) and `content.expiry`, which is never off.
    public static func maxAge(capturesMaxAge: Int64?, contentExpiry: Int64) -> Int64 {
        min(capturesMaxAge ?? .max, contentExpiry)
    }

    /// Whether `file` holds packets an audit session of `spans` would cut into its bundle.
    public static func isEvidence(_ file: File, spans: [Span]) -> Bool {
        spans.contains { file.started <= ($0.to ?? .max) && file.modified >= $0.from }
    }

    /// The names to delete, oldest first.
    /// - Parameters:
    ///   - evidence: the audit sessions' spans (`isEvidence`); nil when they cannot be read:
    ///     then nothing is deleted (deleting evidence cannot be undone).
    ///   - maxAge: how long a closed one is kept (µs; `maxAge(capturesMaxAge:contentExpiry:)`;
    ///     nil: no age limit).
    ///   - roomBytes: what `capturesMaxBytes` leaves after the packet captures kept (nil: no
    ///     size limit; below zero counts as zero).
    ///   - now: µs since the epoch.
    public static func doomed(_ files: [File], evidence: [Span]? = [], maxAge: Int64?, roomBytes: Int64?, now: Int64) -> [String] {
        guard let spans = evidence else { return [] }
        // What stays after the age, oldest first, each with whether it may go at all.
        var kept: [(file: File, deletable: Bool)] = []
        var out: [String] = []
        for file in files.sorted(by: { ($0.modified, $0.name) < ($1.modified, $1.name) }) {
            let deletable = !file.isRecording && !isEvidence(file, spans: spans)
            if deletable, let maxAge, file.modified < now - maxAge {
                out.append(file.name)
            } else {
                kept.append((file, deletable))
            }
        }
        guard let roomBytes else { return out }
        var total = kept.reduce(Int64(0)) { $0 + $1.file.bytes }
        for (file, deletable) in kept where total > max(0, roomBytes) && deletable {
            out.append(file.name)
            total -= file.bytes
        }
        return out
    }
}
