import FlowStore
import TVHome

/// Why a capture command or the capture writer failed, one sentence each (what happened and
/// what to do), rendered once from the kind.
public enum CaptureError: UserFacingError, Equatable {
    /// A capture file could not be created or written.
    case cannotOpen(path: String, reason: String)
    /// `tv captures delete SEQ` named a capture that is not there (never made, or already deleted).
    case noSuchCapture(seq: Int64)
    /// `tv captures delete SEQ` named a file that is in the capture folder but not in this
    /// history (a database moved aside, a file copied in or put back): not tv's to delete.
    case notInHistory(seq: Int64, path: String)
    /// `tv captures delete SEQ` named the file being written.
    case recording(seq: Int64)
    /// `tv captures delete NAME` named a decrypted capture that is not in the captures folder.
    case noSuchDecryptedCapture(name: String)
    /// `tv captures delete NAME` named the decrypted capture a session is writing.
    case decryptedRecording(name: String)
    /// The file could not be removed (its row is already marked deleted: the next sweep tries
    /// again).
    case cannotDelete(path: String, reason: String)
    /// The database failed.
    case store(FlowStoreError)

    public var message: String {
        switch self {
        case let .cannotOpen(path, reason):
            return "tv cannot write the capture file \(path) (\(reason)); free some space or fix the folder's permissions, and packets are captured again at the next file."
        case let .noSuchCapture(seq):
            return "There is no capture \(seq); `tv captures` lists the ones that exist."
        case let .notInHistory(seq, path):
            return "Capture \(seq) is not in this history, though \(path) is in the folder (from a database moved aside, or copied in); tv deletes only what it recorded here, so remove that file yourself if you no longer want it."
        case let .recording(seq):
            return "Capture \(seq) is being recorded and cannot be deleted; run `tv captures rotate` to close it first, then delete it."
        case let .noSuchDecryptedCapture(name):
            return "There is no decrypted capture named \(TerminalText.line(name)); `tv captures` lists the ones that exist."
        case let .decryptedRecording(name):
            return "The decrypted capture \(name) is being written and cannot be deleted; run `tv captures rotate` to close it first, then delete it."
        case let .cannotDelete(path, reason):
            return "tv cannot delete \(path) (\(reason)); the capture is marked deleted and its file is removed at the next `tv captures` or session start once that is fixed."
        case .store(let error):
            return error.message
        }
    }
}

extension SQLiteValue {
    /// The integer held, nil for any other kind.
    var int64: Int64? {
        if case .integer(let n) = self { return n }
        return nil
    }
}
