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

    /// Whether `path` and `other` are on one file system (stat(2)'s `st_dev`), each asked of
    /// itself or, not made yet, of its nearest folder that is. True when either cannot be told.
    public static func sameDisk(_ path: String, _ other: String) -> Bool {
        guard let a = device(of: path), let b = device(of: other) else { return true }
        return a == b
    }

    /// The device of `path`, or of its nearest existing folder.
    private static func device(of path: String) -> UInt64? {
        var current = path
        while true {
            var info = stat()
            if stat(current.isEmpty ? "/" : current, &info) == 0 { return UInt64(info.st_dev) }
            guard let slash = current.lastIndex(of: "/"), !current.isEmpty else { return nil }
            current = String(current[..<slash])
        }
    }
}
