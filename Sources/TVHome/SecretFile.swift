#if canImport(Glibc)
import Glibc
#endif

/// Opens a file that will hold secrets (a TLS key log) for appending, trusting only a file of
/// your own that nobody else can read or write: `O_NOFOLLOW` (a symbolic link is refused, never
/// followed), created 0600, and judged by `FileTrust.secretFile` on the opened descriptor itself
/// (`fstat(2)`), so what is checked is what is written to.
public enum SecretFile {
    /// Why a secret file was not opened.
    public enum Failure: Error, Sendable, Equatable {
        /// The file is there but cannot be trusted with secrets; nothing was written to it.
        case refused(FileTrustProblem)
        /// open(2) failed for another reason (`reason`: strerror text).
        case cannotOpen(reason: String)
    }

    /// Opens (creating 0600 if missing) `path` for appending; the caller closes the descriptor.
    /// - Throws: `Failure.refused` for a symbolic link, a non-regular file, a file of another
    ///   user or one others may read or write; `Failure.cannotOpen` otherwise.
    public static func openForAppend(_ path: String) throws(Failure) -> Int32 {
        // O_NONBLOCK: opening a FIFO must not wait for a reader; it is refused just after.
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let code = errno
            // ELOOP from O_NOFOLLOW, or EACCES from fs.protected_regular: say the real cause.
            if case .found(let facts) = FileFacts.lstat(path), let problem = FileTrust.secretFile(facts, you: .current) {
                throw .refused(problem)
            }
            throw .cannotOpen(reason: String(cString: strerror(code)))
        }
        guard let facts = FileFacts.fstat(fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannotOpen(reason: reason)
        }
        if let problem = FileTrust.secretFile(facts, you: .current) {
            close(fd)
            throw .refused(problem)
        }
        _ = fcntl(fd, F_SETFL, O_WRONLY | O_APPEND)
        return fd
    }
}
