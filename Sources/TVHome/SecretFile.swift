#if canImport(Glibc)
import Glibc
#endif

/// Opens a file that will hold secrets (a TLS key log) for appending, trusting only a file of
/// your own that nobody else can read or write: `O_NOFOLLOW` (a symbolic link is refused, never
/// followed), created 0600, and judged by `FileTrust.secretFile` on the opened descriptor itself
/// (`fstat(2)`), so what is checked is what is written to. A file that already holds something
/// other than key log lines is refused before that (`KeyLogText.looksLikeKeyLog`): `--keylog`
/// named at tv's own `settings.json` or the CA's key appended secrets to them (a new-user trial),
/// and at `/etc/passwd` drew the advice to `chmod 600` it.
public enum SecretFile {
    /// Why a secret file was not opened.
    public enum Failure: Error, Sendable, Equatable {
        /// The file is there but cannot be trusted with secrets; nothing was written to it.
        case refused(FileTrustProblem)
        /// open(2) failed for another reason (`reason`: strerror text).
        case cannotOpen(reason: String)
        /// open(2) failed for want of a file descriptor (EMFILE, ENFILE): not the file's fault.
        case tooManyOpenFiles(TooManyOpenFiles.Scope)

        /// The failure of open(2) with `code`.
        static func opening(_ code: Int32) -> Failure {
            if let shortage = TooManyOpenFiles(errno: code, opening: "") { return .tooManyOpenFiles(shortage.scope) }
            return .cannotOpen(reason: String(cString: strerror(code)))
        }
    }

    /// Why a key log was not opened.
    public enum KeyLogFailure: Error, Sendable, Equatable {
        /// As any secret file (refused, or open(2) failed).
        case secretFile(Failure)
        /// The file holds something other than a key log; nothing was written to it.
        case notAKeyLog
    }

    /// Opens (creating 0600 if missing) the key log at `path` for appending; the caller closes
    /// the descriptor.
    /// - Throws: `.notAKeyLog` for a file whose start is not a key log (`KeyLogText`); `.secretFile`:
    ///   `.refused` for a symbolic link, a non-regular file, a file of another user or one others
    ///   may read or write, `.cannotOpen` otherwise.
    public static func openKeyLogForAppend(_ path: String) throws(KeyLogFailure) -> Int32 {
        // O_NONBLOCK: opening a FIFO must not wait for a reader; it is refused just after.
        // O_RDWR: what is there already is read before anything is written.
        let fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            let code = errno
            // ELOOP from O_NOFOLLOW, or EACCES from fs.protected_regular: say the real cause.
            if case .found(let facts) = FileFacts.lstat(path), let problem = FileTrust.secretFile(facts, you: .current) {
                throw .secretFile(.refused(problem))
            }
            throw .secretFile(.opening(code))
        }
        guard let facts = FileFacts.fstat(fd) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .secretFile(.cannotOpen(reason: reason))
        }
        if facts.kind == .regular {
            var head = [UInt8](repeating: 0, count: 512)
            let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            if n > 0, !KeyLogText.looksLikeKeyLog(head[0..<n], limit: head.count) {
                close(fd)
                throw .notAKeyLog
            }
        }
        if let problem = FileTrust.secretFile(facts, you: .current) {
            close(fd)
            throw .secretFile(.refused(problem))
        }
        _ = fcntl(fd, F_SETFL, O_APPEND)
        return fd
    }
}

/// What the start of an existing key log looks like (NSS's "Key Log Format"): every line is
/// blank, a `#` comment, or `LABEL HEX HEX` with a label of capitals, digits and underscores. A
/// pure rule. (The first line alone let a shell script or a Markdown file through: a re-check.)
public enum KeyLogText {
    /// Whether `head` (the file's first bytes, up to `limit`) reads as a key log: each whole line
    /// in it is blank, a comment (not a `#!` script line), or a key log line; a last line cut by
    /// `limit` counts only when it is longer than any key log line could be (then it is none).
    public static func looksLikeKeyLog(_ head: ArraySlice<UInt8>, limit: Int = 512) -> Bool {
        var rest = head[...]
        while !rest.isEmpty {
            let end = rest.firstIndex(of: 0x0a)
            if end == nil, head.count >= limit {
                // Cut by the read: judged only when no key log line is that long (about 230 bytes).
                return rest.count < 300
            }
            var line = rest[rest.startIndex..<(end ?? rest.endIndex)]
            rest = end.map { rest[rest.index(after: $0)...] } ?? rest[rest.endIndex...]
            if line.last == 0x0d { line = line.dropLast() }
            guard isKeyLogLine(line) else { return false }
        }
        return true
    }

    /// One line: blank, a `#` comment (not `#!`), or `LABEL HEX HEX`.
    static func isKeyLogLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard let first = line.first else { return true }
        if first == 0x23 { return line.dropFirst().first != 0x21 }
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard fields.count == 3, !fields[0].isEmpty,
              fields[0].allSatisfy({ (0x41...0x5a).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5f })
        else { return false }
        return fields.dropFirst().allSatisfy { field in
            !field.isEmpty && field.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
        }
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
            throw .opening(code)
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
