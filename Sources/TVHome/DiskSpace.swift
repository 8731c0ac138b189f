#if canImport(Glibc)
import Glibc
#endif

/// What the file system holding a path has free for this user (statvfs(3): `f_bavail` blocks of
/// `f_frsize` bytes, what an unprivileged write may still use).
public enum DiskSpace {
    /// Bytes free at `path`, nil when it cannot be asked (the path is missing).
    public static func freeBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}
