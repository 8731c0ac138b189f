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

extension SecretFile {
    /// The first line of the secret file at `path` (a password file), without its line end
    /// (`\n` or `\r\n`), judged by `FileTrust.secretFile` on the opened descriptor: a symbolic
    /// link, a file of another user or one others may read or write is refused unread.
    /// - Throws: `Failure.refused`, or `Failure.cannotOpen` (a missing file, a read error).
    public static func readFirstLine(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            if case .found(let facts) = FileFacts.lstat(path), let problem = FileTrust.secretFile(facts, you: .current) {
                throw .refused(problem)
            }
            throw .cannotOpen(reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        guard let facts = FileFacts.fstat(fd) else { throw .cannotOpen(reason: String(cString: strerror(errno))) }
        if let problem = FileTrust.secretFile(facts, you: .current) { throw .refused(problem) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { throw .cannotOpen(reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            bytes += chunk[..<n]
            if chunk[..<n].contains(0x0A) { break }
        }
        var line = Array(bytes.prefix { $0 != 0x0A })
        if line.last == 0x0D { line.removeLast() }
        return line
    }
}
