import TVHome

/// Why a storage command could not do what it was asked; each says what to do next.
public enum StorageError: UserFacingError, Equatable {
    /// unlink(2) failed on a capture file; its rows are already gone, so the next pass retries.
    case cannotDelete(path: String, reason: String)
    /// A saved limit cannot be read, so nothing is deleted (a ceiling the user may have changed
    /// is never replaced by the factory value).
    case unreadableLimit(key: String, text: String, sentence: String)
    /// `tv storage compact` while a session writes and the file is not yet set for incremental
    /// vacuum.
    case compactWhileRunning
    /// delete-everything without a terminal to ask on and without `--yes`.
    case needsConfirmation

    public var message: String {
        switch self {
        case let .cannotDelete(path, reason):
            return "Could not delete \(path) (\(reason)); its rows are gone already, and the next pass (`tv storage apply`) tries the file again."
        case let .unreadableLimit(key, _, sentence):
            return "The saved \(key) cannot be read (\(sentence)); nothing was deleted. Set it again with `tv settings set \(key) VALUE`."
        case .compactWhileRunning:
            return "A session is writing to the history, and the first compaction rewrites the whole file; stop it (`tv stop`), run `tv storage compact`, then start it again (later compactions work while a session runs)."
        case .needsConfirmation:
            return "Nothing was deleted: with no terminal to ask on, add --yes to delete everything."
        }
    }

    /// A missing confirmation is a command line to complete (2, as `tv content delete`'s);
    /// the rest are failures (1).
    public var exitCode: Int32 { self == .needsConfirmation ? 2 : 1 }
}
