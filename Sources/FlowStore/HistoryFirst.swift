import Synchronization
import TVHome

/// Which writer gets the room on the data folder's disk (pure): the flow history first. The
/// flow writer says where it stands after each attempt (`standing`); the content writer and the
/// decrypted capture's writer ask before each batch (`permission`): they never take the last
/// `reserveBytes`, and take none while flows wait for room; when held, they take no room and
/// count what they did not save, as they count a failed write.
///
/// Why (trial 43, `tv run` with content keeping and the decrypted capture on, the data folder on
/// a 40 MB tmpfs): the disk full, 4,238 flows waited in memory; 34 MB freed, the flow writer
/// (retrying every second) wrote them, but kept content took the other 30 MB within seconds, the
/// flows failed again, and the stop said 1,870 flows never written beside 33.0 MiB of content
/// kept, the whole history 4.1 MiB for 4,741 flows. A flow row is ~1 KB (its request row and
/// index entries with it); a turn of content up to 64 KiB, and the decrypted capture all of the
/// plaintext. The history is the record a user needs most.
public enum HistoryFirst {
    /// Where the flow writer stands, as the other writers read it (`HistoryFirstSignal`).
    public enum Standing: UInt8, Sendable, Equatable {
        /// No flow waits: the others write while they leave `reserveBytes` free.
        case clear = 0
        /// Flows wait in memory after a write failed for a full disk: the others take no room
        /// until they are written.
        case flowsWaiting = 1
    }

    /// Where the flow writer stands after an attempt.
    /// - Parameters:
    ///   - flowsWaiting: flows kept in memory for the next attempt.
    ///   - failure: how the attempt failed (nil: it committed).
    public static func standing(flowsWaiting: Int, failure: FlowStoreError?) -> Standing {
        if flowsWaiting > 0, case .diskFull = failure { return .flowsWaiting }
        return .clear
    }

    /// Bytes the other writers leave free on the disk (16 MiB), from the session's first write,
    /// not only once it has been full: room for as many flows as the flow writer keeps in memory
    /// (`FlowWriter.defaultRetryLimit`, 16,384) at ~1 KiB each (trial 43's history: 4.1 MiB for
    /// 4,741 flows with their request rows). Held back only after a flow write had failed, the
    /// first fill of a disk went to content and the first flow row after it was lost (trial 44).
    public static let reserveBytes: Int64 = 16 * 1_048_576

    /// Why a writer takes no room now.
    public enum Hold: Sendable, Equatable {
        /// Flows wait in memory for room (`Standing.flowsWaiting`).
        case flowsWaiting
        /// The disk has `freeBytes` free, and what the writer would write would leave less than
        /// `reserveBytes`.
        case reserve(freeBytes: Int64)

        /// Why `what` ("decrypted content", "the decrypted capture") is not saved, and what to
        /// do (`wayOn`, `DataFolderFull.wayOn(_:)` of what the data folder holds): one sentence,
        /// for the writer's last error.
        public func sentence(_ what: String, wayOn: String = DataFolderFull.wayOn) -> String {
            switch self {
            case .flowsWaiting:
                return "The disk holding the data folder is full and flows wait in memory to be saved: the flow history comes first, so \(what) takes no room until they are written; \(wayOn)."
            case let .reserve(free):
                return "The disk holding the data folder has \(ByteWords.binary(free)) free, within the \(ByteWords.binary(HistoryFirst.reserveBytes)) kept for the flow history: \(what) takes none of it; \(wayOn)."
            }
        }
    }

    /// What a writer of content or capture may do now.
    public enum Permission: Sendable, Equatable {
        /// Write as usual.
        case write
        /// Take no room: what would be written is counted as not saved.
        case hold(Hold)
    }

    /// Room past the reserve a held writer waits for before it writes again (1 MiB): without
    /// it, a small batch that fits between two that do not said "resumed" and "not saved" over
    /// and over (a test's 12 downloads said it three times).
    public static let resumeBytes: Int64 = 1_048_576

    /// What a writer may do while the flow writer stands at `standing`.
    /// - Parameters:
    ///   - bytes: what the writer is about to write (a batch's bytes).
    ///   - held: the writer is held now: it writes again only with `resumeBytes` more room.
    ///   - freeBytes: the room free on the writer's disk; asked once per call unless flows wait
    ///     (nil when it cannot be told: the writer writes).
    public static func permission(_ standing: Standing, bytes: Int64, held: Bool = false, freeBytes: () -> Int64?) -> Permission {
        switch standing {
        case .flowsWaiting: return .hold(.flowsWaiting)
        case .clear:
            let needed = reserveBytes + (held ? resumeBytes : 0)
            guard let free = freeBytes(), free - max(bytes, 0) < needed else { return .write }
            return .hold(.reserve(freeBytes: free))
        }
    }
}

/// Where the flow writer stands (`HistoryFirst.Standing`), set by its thread after each attempt
/// and read by the content writer and the decrypted capture's writer before each write: one
/// atomic, so no thread ever waits on another (the event loops never touch it).
public final class HistoryFirstSignal: Sendable {
    private let value = Atomic<UInt8>(HistoryFirst.Standing.clear.rawValue)

    public init() {}

    /// What the flow writer said last.
    public var standing: HistoryFirst.Standing {
        HistoryFirst.Standing(rawValue: value.load(ordering: .acquiring)) ?? .clear
    }

    /// Said by the flow writer's thread (tests set it to hold the other writers).
    public func set(_ standing: HistoryFirst.Standing) {
        value.store(standing.rawValue, ordering: .releasing)
    }

    /// What a writer whose files are in `folder` may do now, about to write `bytes`
    /// (`HistoryFirst.permission`; the free room asked of `folder`'s disk with one statvfs(3),
    /// so a writer asks once per batch, never per chunk).
    public func permission(writingIn folder: String, bytes: Int64, held: Bool = false) -> HistoryFirst.Permission {
        HistoryFirst.permission(standing, bytes: bytes, held: held) { DiskSpace.freeBytes(at: folder) }
    }
}
