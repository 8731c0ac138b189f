#if canImport(Glibc)
import Glibc
#endif

/// The `/proc` texts the program lookup reads (proc(5)), parsed without I/O, and the thin reads
/// that fetch them.
public enum ProcFiles {
    /// The socket inode a `/proc/PID/fd/N` link names: `socket:[12345]` → 12345; nil for any other
    /// kind of file (`/dev/null`, `pipe:[…]`, `anon_inode:[eventpoll]`).
    public static func socketInode(link: String) -> UInt64? {
        guard link.hasPrefix("socket:["), link.hasSuffix("]") else { return nil }
        return UInt64(link.dropFirst(8).dropLast())
    }

    /// The command name in `/proc/PID/comm`: the text without its trailing newline; nil when empty.
    public static func command(comm: String) -> String? {
        var text = Substring(comm)
        if text.hasSuffix("\n") { text = text.dropLast() }
        return text.isEmpty ? nil : String(text)
    }

    /// A decimal process id from a `/proc` entry name (`1234`); nil for `self`, `net`, ….
    public static func pid(entry: String) -> Int32? {
        guard let first = entry.utf8.first, first >= 0x30, first <= 0x39 else { return nil }
        return Int32(entry)
    }

    /// readlink(2) of `path`, at most 4,095 bytes; nil when it fails (gone, not permitted).
    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The inode of the file at `path` (following links: `/proc/PID/ns/net` → the namespace's
    /// identity); nil when it cannot be read.
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    /// The first 256 bytes of a small `/proc` file; nil when it cannot be read.
    static func readSmall(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = read(fd, &buffer, buffer.count)
        guard n >= 0 else { return nil }
        return String(decoding: buffer.prefix(n), as: UTF8.self)
    }

    /// The entry names of directory `path` (without `.` and `..`), and errno when it could not be
    /// opened (0 otherwise).
    static func entries(_ path: String) -> (names: [String], error: Int32) {
        guard let dir = opendir(path) else { return ([], errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return (names, 0)
    }
}
