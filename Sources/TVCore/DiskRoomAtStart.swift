import FlowStore
import TVHome

/// The room on the data folder's disk when a session starts, as its banner says it (pure): a
/// session started on a full disk said nothing there (trial 44), though nothing it saw could be
/// saved. What it forwards never depends on it: the proxy proxies whatever the disk holds.
public struct DiskRoomAtStart: Sendable, Equatable {
    /// What a session records on the data folder's disk beside its flows.
    public enum Recorded: Sendable, Equatable {
        /// Decrypted content (`--keep-content`, `content.keep`).
        case content
        /// The decrypted capture (`capture.decrypted`).
        case decryptedCapture
        /// The TUN's packet capture.
        case packets

        var words: String {
            switch self {
            case .content: "decrypted content"
            case .decryptedCapture: "the decrypted capture"
            case .packets: "the packet capture"
            }
        }
    }

    /// Bytes free on the data folder's disk (statvfs(3)'s for an unprivileged user); nil when it
    /// cannot be told.
    public var freeBytes: Int64?
    /// The flow writer failed at its start (it could not open the history for the disk, or its
    /// first write failed): flows wait in memory.
    public var flowsFailing: Bool
    /// What this session records there beside flows, in the order said.
    public var recorded: [Recorded]
    /// What the data folder holds, for the way on (`DataFolderFull.wayOn(_:)`).
    public var holdings: DataFolderFull.Holdings

    public init(freeBytes: Int64?, flowsFailing: Bool, recorded: [Recorded], holdings: DataFolderFull.Holdings) {
        self.freeBytes = freeBytes
        self.flowsFailing = flowsFailing
        self.recorded = recorded
        self.holdings = holdings
    }

    /// The banner's words after "disk": full (nothing is saved), short of the history's reserve
    /// (`HistoryFirst.reserveBytes`: what it records beside flows is not saved), or nil with room.
    public var line: String? {
        let wayOn = DataFolderFull.wayOn(holdings)
        if flowsFailing || freeBytes == 0 {
            let what = Self.list(["flows"] + recorded.map(\.words))
            return "full — the disk holding the data folder has no room, so \(what) cannot be saved until it has some "
                + "(connections are still forwarded, and flows wait in memory, up to \(Units.grouped(Int64(FlowWriter.defaultRetryLimit)))); \(wayOn)"
        }
        // The packet capture does not leave the reserve (only content and the decrypted capture
        // ask `HistoryFirst`).
        let held = recorded.filter { $0 != .packets }
        guard let free = freeBytes, free < HistoryFirst.reserveBytes, !held.isEmpty else { return nil }
        let what = Self.list(held.map(\.words))
        return "short of room — the disk holding the data folder has \(ByteWords.binary(free)) free, within the "
            + "\(ByteWords.binary(HistoryFirst.reserveBytes)) kept for the flow history, so \(what) \(held.count == 1 ? "is" : "are") not saved until it has more "
            + "(flows are, and connections are forwarded); \(wayOn)"
    }

    /// "a", "a and b", "a, b and c".
    static func list(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }
}
