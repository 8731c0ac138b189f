import Capture
import FlowStore
import FlowTerms
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture's counters, under its queue's mutex: what the loops queued and what the
/// full queue dropped (`DecryptedCaptureBatch.add`), and what the writer thread wrote, could not
/// write and is writing now (`DecryptedCaptureThread`, through `BoundedWriterQueue.updateCounters`).
public struct DecryptedCaptureCounters: Sendable, Equatable {
    /// Plaintext bytes taken into a batch.
    public var bytesQueued: UInt64 = 0
    /// Plaintext bytes dropped because the batch was full or the queue was stopping (never
    /// waited for). A flow that lost bytes is written with a gap its sequence numbers show.
    public var bytesDropped: UInt64 = 0
    /// Begin and end events dropped the same way.
    public var eventsDropped: UInt64 = 0
    /// How the file is written (O_DIRECT or buffered); nil before its first write.
    public var writeMode: CaptureWriteMode?

    /// The file being written now (its name in the captures folder); nil before the first
    /// inspected flow, after a rotation until the next packet, and while writes fail.
    public var recording: String?
    /// Files opened so far (the first, each rotation's next, each new file after a failure).
    public var filesOpened = 0
    /// Enhanced Packet Blocks written (handshakes, ends and reopened streams included).
    public var packetsWritten: UInt64 = 0
    /// Packets that never reached a file: their write failed, they came while writes failed,
    /// or they were the tail a file closed without (a full disk at a stop or a rotation).
    public var packetsNotSaved: UInt64 = 0
    /// The plaintext bytes those packets carried.
    public var bytesNotSaved: UInt64 = 0
    /// Inspected flows that lost packets that way (each counted once).
    public var flowsNotSaved: UInt64 = 0
    /// Writes that failed (appends, the held tail, a new file's head), retries included.
    public var failedWrites: UInt64 = 0
    /// True from a failed (or held) write until a file is written again.
    public var failing = false
    /// Why the last write failed, or was held for the flow history (nil until one was).
    public var lastFailure: DecryptedCaptureFailure?

    public init() {}
}

/// Why the decrypted capture could not write its file. One sentence each (what happened, what to
/// do), rendered from the kind.
public enum DecryptedCaptureFailure: UserFacingError, Equatable {
    /// The disk holding the captures folder is full (ENOSPC, EDQUOT).
    case diskFull(path: String)
    /// Any other failure to create or write the file.
    case cannotWrite(path: String, reason: String)
    /// No write was made: the flow history came first (`HistoryFirst`), flows waiting for room
    /// on the full disk or the disk short of room since.
    case heldForHistory(HistoryFirst.Hold)

    /// The failure of a write of `path` that failed with `error`.
    public init(path: String, error: Errno) {
        if error.code == ENOSPC || error.code == EDQUOT {
            self = .diskFull(path: path)
        } else {
            self = .cannotWrite(path: path, reason: error.phrase)
        }
    }

    public var message: String {
        switch self {
        case let .diskFull(path):
            return "The disk holding the data folder is full (\(path) cannot grow); free some space on it and try again."
        case let .cannotWrite(path, reason):
            return "Could not write the decrypted capture \(path) (\(reason)); check free space and that the captures folder belongs to you (0700), then try again."
        case let .heldForHistory(hold):
            return hold.sentence("the decrypted capture")
        }
    }
}

extension DecryptedCaptureFailure: DataFolderFullSaying {
    /// The full disk's sentence (a failed write's, or the hold for the history) with `wayOn`
    /// (`DataFolderFull.wayOn(_:)`); nil for the rest.
    public func fullDiskMessage(wayOn: String) -> String? {
        switch self {
        case let .diskFull(path): return DataFolderFull.sentence(cannotGrow: path, wayOn: wayOn)
        case let .heldForHistory(hold): return hold.sentence("the decrypted capture", wayOn: wayOn)
        case .cannotWrite: return nil
        }
    }
}
