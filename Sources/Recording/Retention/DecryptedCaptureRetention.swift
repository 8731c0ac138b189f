/// Which decrypted captures (`captures/decrypted-*.pcapng`, one per session that inspected a
/// flow) a retention pass deletes (pure). They are capture files of another kind and live
/// under the captures' limits: a file whose last packet (its modification time) is older than
/// `capturesMaxAge` goes, then the oldest while they exceed what `capturesMaxBytes` leaves
/// after the packet captures (`roomBytes`). The file a running session writes is never deleted.
/// No row describes them (tshark reads them, `tv` does not), so nothing else is marked.
public enum DecryptedCaptureRetention {
    /// One decrypted capture on disk.
    public struct File: Sendable, Equatable {
        public var name: String
        public var bytes: Int64
        /// Its last write (µs since the epoch): its newest packet.
        public var modified: Int64
        /// Whether a running session holds it (its exclusive flock).
        public var isRecording: Bool

        public init(name: String, bytes: Int64, modified: Int64, isRecording: Bool) {
            self.name = name
            self.bytes = bytes
            self.modified = modified
            self.isRecording = isRecording
        }
    }

    /// The names to delete, oldest first.
    /// - Parameters:
    ///   - maxAge: `StorageLimits.capturesMaxAge` (µs; nil: no age limit).
    ///   - roomBytes: what `capturesMaxBytes` leaves after the packet captures kept (nil: no
    ///     size limit; below zero counts as zero).
    ///   - now: µs since the epoch.
    public static func doomed(_ files: [File], maxAge: Int64?, roomBytes: Int64?, now: Int64) -> [String] {
        var kept: [File] = []
        var out: [String] = []
        for file in files.sorted(by: { ($0.modified, $0.name) < ($1.modified, $1.name) }) {
            if !file.isRecording, let maxAge, file.modified < now - maxAge {
                out.append(file.name)
            } else {
                kept.append(file)
            }
        }
        guard let roomBytes else { return out }
        var total = kept.reduce(Int64(0)) { $0 + $1.bytes }
        for file in kept where total > max(0, roomBytes) && !file.isRecording {
            out.append(file.name)
            total -= file.bytes
        }
        return out
    }
}
