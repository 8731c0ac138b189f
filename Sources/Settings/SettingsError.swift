import TVHome

/// Why the settings record could not be read or saved; each says what to do next.
public enum SettingsError: UserFacingError, Equatable {
    /// `settings.json` exists but is not a settings record (bad JSON, not an object, a known key
    /// holding the wrong type). Nothing is assumed from it: reading never falls back to defaults.
    case corrupt(path: String, reason: String)
    /// `settings.json` exists but cannot be read (a folder in its place, an I/O error).
    case unreadable(path: String, reason: String)
    /// The new value could not be written; the file still holds the old value.
    case saveFailed(path: String, key: String, reason: String)
    /// The new value could not be written because the disk holding the data folder is full
    /// (no room for the atomic save's new file); the file still holds the old value.
    case diskFull(path: String, key: String)
    /// `settings.json` could not be opened for want of a file descriptor (EMFILE, ENFILE): not
    /// the file's fault (a trial's retention pass under `ulimit -n 34` advised remaking it).
    case tooManyOpenFiles(TooManyOpenFiles)

    public var message: String {
        switch self {
        case let .corrupt(path, reason):
            return "The settings file \(path) is not a settings record (\(reason)); fix it, or let `tv inspect off` rewrite it (inspection off, the history and capture limits off so nothing kept is deleted, the old file kept beside it)."
        case let .unreadable(path, reason):
            return "The settings file \(path) cannot be read (\(reason)); make it a readable file again or remove what stands in its place."
        case .tooManyOpenFiles(let shortage):
            return shortage.message
        case let .saveFailed(path, key, reason):
            return "Could not save \(key) to \(path) (\(reason)); nothing changed — the old value is still in force. Check the folder and try again."
        case let .diskFull(path, key):
            return SettingsError.diskFullSentence(path: path, key: key, wayOn: DataFolderFull.wayOn)
        }
    }
}

extension SettingsError: DataFolderFullSaying {
    /// `.diskFull`'s sentence with `wayOn` (`DataFolderFull.wayOn(_:)`); nil for the rest.
    public func fullDiskMessage(wayOn: String) -> String? {
        guard case let .diskFull(path, key) = self else { return nil }
        return SettingsError.diskFullSentence(path: path, key: key, wayOn: wayOn)
    }

    static func diskFullSentence(path: String, key: String, wayOn: String) -> String {
        "Could not save \(key) to \(path): the disk holding the data folder is full, so nothing changed and the old value is still in force; \(wayOn) and try again."
    }
}
