#if canImport(Glibc)
import Glibc
#endif

/// tv could not open something for want of a file descriptor: this process had as many open as
/// its limit allows (EMFILE), or the whole system's table of open files was full (ENFILE).
///
/// The one kind every place that turns an errno into a sentence throws for these two errnos, so
/// the sentence says "too many open files" and the way out (the limit, `ulimit -n`), never the
/// advice of the failure it stands in for: a new-user trial under `ulimit -n 16`…`32` read "no PEM
/// certificate could be read" of a good CA file, "check the data folder's permissions" of the
/// control socket and "check that its folder exists" of the flow database.
public struct TooManyOpenFiles: UserFacingError, Equatable {
    /// Whose table was full.
    public enum Scope: Sendable, Equatable {
        /// This process's (EMFILE): `limit` is its soft RLIMIT_NOFILE when it failed (0: unknown).
        case process(limit: UInt64)
        /// The system's (ENFILE: `fs.file-max` reached).
        case system
    }

    /// What tv was opening, as it follows "could not open" (`the control socket /x/run/control.sock`).
    public let opening: String
    public let scope: Scope

    public init(opening: String, scope: Scope) {
        self.opening = opening
        self.scope = scope
    }

    /// The kind for `code` when it is EMFILE or ENFILE (the process's limit read now); nil for
    /// every other errno, which keeps its own sentence.
    public init?(errno code: Int32, opening: String) {
        switch code {
        case EMFILE: self.init(opening: opening, scope: .process(limit: TooManyOpenFiles.softLimit()))
        case ENFILE: self.init(opening: opening, scope: .system)
        default: return nil
        }
    }

    /// Whether `code` is one of the two errnos this kind stands for.
    public static func isShortage(_ code: Int32) -> Bool { code == EMFILE || code == ENFILE }

    public var message: String {
        switch scope {
        case .process(let limit):
            let bound = limit > 0 ? " (tv may have \(limit) open at once)" : ""
            return "tv could not open \(opening): too many open files\(bound); raise the limit with `ulimit -n` "
                + "(e.g. `ulimit -n 4096` in the shell that starts tv) and try again."
        case .system:
            return "tv could not open \(opening): too many open files in the system (the kernel's table of open files, "
                + "fs.file-max, is full); close some programs and try again."
        }
    }

    /// This process's soft RLIMIT_NOFILE (0 when it cannot be read).
    static func softLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return UInt64(limit.rlim_cur)
    }
}
