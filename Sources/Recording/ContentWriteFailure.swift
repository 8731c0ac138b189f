import FlowStore
import TVHome

/// Why storing decrypted content failed (`ContentCounters.lastError`): a segment file's fault or
/// the turns index's, or a hold for the flow history. The sentence is the underlying error's, rendered when it is read
/// (`message`), so callers branch on the kind and never on text.
public enum ContentWriteFailure: UserFacingError, Equatable {
    /// A segment file could not be made, written, read or deleted (the disk full among them).
    case segment(ContentError)
    /// The turns index (the flow database) could not be opened or written.
    case index(FlowStoreError)
    /// Nothing was written: the flow history came first (`HistoryFirst`), flows waiting for
    /// room on the full disk or the disk short of room since.
    case heldForHistory(HistoryFirst.Hold)
    /// An error of neither kind, by its description (no path of the writer throws one today);
    /// what tv does about it (it tries again with the next turns) is said where it is shown.
    case unexpected(String)

    /// The failure `error` is: a `ContentError` is the segment's, a `FlowStoreError` the index's.
    public init(_ error: any Error) {
        switch error {
        case let error as ContentError: self = .segment(error)
        case let error as FlowStoreError: self = .index(error)
        default: self = .unexpected(String(describing: error))
        }
    }

    public var message: String {
        switch self {
        case let .segment(error): return error.message
        case let .index(error): return error.message
        case let .heldForHistory(hold): return hold.sentence("decrypted content")
        case let .unexpected(description): return "Storing decrypted content failed (\(description))."
        }
    }
}

extension ContentWriteFailure: DataFolderFullSaying {
    /// The full disk's sentence (a segment's or the index's, or the hold for the history) with
    /// `wayOn` (`DataFolderFull.wayOn(_:)`); nil for the rest.
    public func fullDiskMessage(wayOn: String) -> String? {
        switch self {
        case let .segment(error): return error.fullDiskMessage(wayOn: wayOn)
        case let .index(error): return error.fullDiskMessage(wayOn: wayOn)
        case let .heldForHistory(hold): return hold.sentence("decrypted content", wayOn: wayOn)
        case .unexpected: return nil
        }
    }
}
