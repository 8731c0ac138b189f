/// What tv says when the disk holding the data folder is full (`FlowStoreError.diskFull`,
/// `ContentError.diskFull`, `SettingsError.diskFull`): the file that could not grow, and the way
/// on. When the data folder is alone on its disk, "free some space" can only mean tv's own
/// commands, and most of them need room to delete (SQLite writes a deletion to its log first):
/// `tv content delete` deletes its files before its rows, so it works on a full disk (a trial),
/// and then the rest has room again. Which command the way on names follows what the folder
/// holds (`Holdings`, `wayOn(_:)`): it named `tv content delete` on a folder with no content to
/// delete (trial 44).
public enum DataFolderFull {
    /// "free some space on it (`tv content delete` …)": the way on, without "and try again",
    /// where what the data folder holds is not known.
    public static let wayOn = "free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room)"

    /// What the data folder holds that the way on can name, in bytes (read by
    /// `DataFolderHoldings.read`, TVCore).
    public struct Holdings: Sendable, Equatable {
        /// Kept decrypted content (the segment files) and the decrypted captures no session
        /// writes: what `tv content delete` deletes, files before rows, so needing no room.
        public var contentBytes: Int64
        /// Packet capture files no session writes: `tv captures delete NUMBER` marks a file's
        /// row before it unlinks the file, so it needs a little room.
        public var captureFiles: Int
        public var captureBytes: Int64
        /// The history's database file with its write-ahead log: shrinks only by deleting rows,
        /// which needs room first, and `tv storage compact`.
        public var historyBytes: Int64

        public init(contentBytes: Int64, captureFiles: Int, captureBytes: Int64, historyBytes: Int64) {
            self.contentBytes = contentBytes
            self.captureFiles = captureFiles
            self.captureBytes = captureBytes
            self.historyBytes = historyBytes
        }
    }

    /// What frees room on the full disk, given what the data folder holds (pure), without "and
    /// try again": `tv content delete` when there is content or a decrypted capture to delete
    /// (it needs no room); else room freed outside the data folder first, naming the packet
    /// captures' and the history's bytes, which need some to be deleted.
    public static func wayOn(_ holdings: Holdings) -> String {
        let show = "`tv storage` shows what takes the room"
        if holdings.contentBytes > 0 {
            return "free some space on it (`tv content delete` deletes the \(ByteWords.binary(holdings.contentBytes)) of kept decrypted content and decrypted captures, which needs no room; \(show))"
        }
        let history = "the history's \(ByteWords.binary(holdings.historyBytes))"
        if holdings.captureFiles > 0 {
            let captures = holdings.captureFiles == 1 ? "1 packet capture" : "\(holdings.captureFiles) packet captures"
            return "free some space on it outside the data folder: no decrypted content is kept to delete, and deleting the \(captures) (\(ByteWords.binary(holdings.captureBytes)), `tv captures delete NUMBER`) or \(history) needs a little room first (\(show))"
        }
        return "free some space on it outside the data folder: no decrypted content or capture is kept to delete, and \(history) shrinks only by deleting rows, which needs a little room first (\(show))"
    }

    /// "The disk holding the data folder is full (PATH cannot grow); WAY ON and try again."
    /// - Parameter wayOn: `wayOn(_:)` of what the folder holds, where it was read.
    public static func sentence(cannotGrow path: String, wayOn: String = wayOn) -> String {
        "The disk holding the data folder is full (\(path) cannot grow); \(wayOn) and try again."
    }
}

/// A failure that may be the data folder's disk being full: said, where the caller has read what
/// the folder holds, with the way on that follows it (`DataFolderFull.wayOn(_:)`).
public protocol DataFolderFullSaying: UserFacingError {
    /// The sentence with `wayOn` as its way on; nil when this failure is not the full disk's.
    func fullDiskMessage(wayOn: String) -> String?
}
