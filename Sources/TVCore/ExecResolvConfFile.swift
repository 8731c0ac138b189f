import FlowTerms
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The resolv.conf `tv exec` bind-mounts over the namespace's /etc/resolv.conf (the tunnel's DNS
/// address, `TunnelAddressPlan.resolvConf`): a file of its own per exec, mode 0644, removed when
/// the exec ends.
///
/// It is written in the data folder's run directory when that can be written, else in
/// `/run/tunnelvision` (on a tmpfs on Linux): a full data disk must not stop the command (the
/// flows are then not saved, the traffic still flows; a new-user trial found `tv exec` refusing
/// to run at all, and blaming missing privileges).
public enum ExecResolvConfFile {
    /// Writes `text` to `exec-PID.resolv.conf` in the first of `folders` that takes it (created
    /// exclusively, never through a symbolic link).
    /// - Returns: the file's path.
    /// - Throws: `TunnelError.cannotWriteResolvConf` with the first folder's error when none did.
    public static func write(_ text: String, pid: Int32, folders: [String]) throws -> String {
        var first: (String, Errno)?
        for folder in folders {
            let path = folder + "/exec-\(pid).resolv.conf"
            switch writeFile(path, text) {
            case nil: return path
            case let error?: if first == nil { first = (folder, error) }
            }
        }
        let (folder, error) = first ?? ("(no folder)", Errno(ENOENT))
        throw TunnelError.cannotWriteResolvConf(folder: folder, reason: error.phrase)
    }

    /// The folders tried, in order: the data folder's run directory, then tv's own folder in
    /// `/run` (made 0755 on first use: programs inside read the file as any user).
    public static func folders(runDirectory: String) -> [String] { [runDirectory, fallbackFolder] }

    /// tv's folder in `/run`, used only when the data folder cannot be written.
    public static let fallbackFolder = "/run/tunnelvision"

    /// nil when written; else the error (the partial file removed).
    private static func writeFile(_ path: String, _ text: String) -> Errno? {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if folder == fallbackFolder {
            // Made here if missing; used only when it is a real folder of this user's (not a
            // link someone planted).
            if mkdir(folder, 0o755) == 0 {
                _ = chmod(folder, 0o755)   // past the umask
            } else if errno != EEXIST {
                return Errno(errno)
            }
            var info = stat()
            guard lstat(folder, &info) == 0 else { return Errno(errno) }
            guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { return Errno(EPERM) }
        }
        unlink(path)   // a stale one of a killed exec with this pid
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return Errno(errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let writeError = written == bytes.count ? nil : Errno(written < 0 ? errno : ENOSPC)
        // The umask may have narrowed the mode: programs inside run as any user and must read it.
        _ = fchmod(fd, 0o644)
        let closeError = close(fd) == 0 ? nil : Errno(errno)
        if let error = writeError ?? closeError {
            unlink(path)
            return error
        }
        return nil
    }
}
