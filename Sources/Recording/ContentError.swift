import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Why decrypted content could not be written, read or deleted. One sentence each: what
/// happened and what to do next.
public enum ContentError: UserFacingError, Equatable {
    /// A segment file could not be created, written or locked.
    case cannotWrite(path: String, reason: String)
    /// A segment file could not be read.
    case cannotRead(path: String, reason: String)
    /// The index names bytes whose segment file is gone (deleted, or removed by the sweep).
    case bytesGone(flow: Int64, turn: Int)
    /// The index names more bytes than the segment file holds (a damaged or cut file).
    case segmentShort(path: String, flow: Int64, turn: Int)
    /// A segment file could not be deleted.
    case cannotDelete(path: String, reason: String)
    /// A segment file could not be made or written because its disk is full (ENOSPC, EDQUOT).
    case diskFull(path: String)

    /// The error for a failed write of `path` with `errno` `code`: `.diskFull` for want of
    /// space, `.cannotWrite` otherwise.
    static func writing(_ path: String, errno code: Int32) -> ContentError {
        if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
        return .cannotWrite(path: path, reason: String(cString: strerror(code)))
    }

    public var message: String {
        switch self {
        case let .cannotWrite(path, reason):
            return "Could not write decrypted content to \(path) (\(reason)); check free space and that the content folder belongs to you (0700), then try again."
        case let .cannotRead(path, reason):
            return "Could not read decrypted content from \(path) (\(reason)); check that the file belongs to you (0600) and try again."
        case let .bytesGone(flow, turn):
            return "The bytes of turn \(turn) of flow \(flow) are gone (their segment file was deleted); the turn's figures stay, and nothing can bring the bytes back."
        case let .segmentShort(path, flow, turn):
            return "The segment file \(path) is shorter than the index says, so turn \(turn) of flow \(flow) cannot be read; the file was cut or the index row is damaged, nothing can bring those bytes back, and the other turns are unaffected."
        case let .cannotDelete(path, reason):
            return "Could not delete the segment file \(path) (\(reason)); check that the content folder belongs to you and try again."
        case let .diskFull(path):
            return DataFolderFull.sentence(cannotGrow: path)
        }
    }
}

extension ContentError: DataFolderFullSaying {
    /// `.diskFull`'s sentence with `wayOn` (`DataFolderFull.wayOn(_:)`); nil for the rest.
    public func fullDiskMessage(wayOn: String) -> String? {
        guard case let .diskFull(path) = self else { return nil }
        return DataFolderFull.sentence(cannotGrow: path, wayOn: wayOn)
    }
}
