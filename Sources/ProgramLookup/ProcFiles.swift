#if canImport(Glibc)
import Glibc
#endif

/// The `/proc` texts the program lookup reads (proc(5)), parsed without I/O, and the thin reads
/// that fetch them.
public enum ProcFiles {
    /// The socket inode a `/proc/PID/fd/N` link names: `socket:[12345]` → 12345; nil for any other
    /// kind of file (`/dev/null`, `pipe:[…]`, `anon_inode:[eventpoll]`).
    public static func socketInode(link: String) -> UInt64? {
        var text = link
        return text.withUTF8 { socketInode(linkBytes: UnsafeRawBufferPointer($0)) }
    }

    /// `socketInode(link:)` over the bytes readlink(2) gives (no text made): `socket:[` one or
    /// more decimal digits `]`, the number within 64 bits; nil for anything else.
    public static func socketInode(linkBytes bytes: UnsafeRawBufferPointer) -> UInt64? {
        let prefix: StaticString = "socket:["
        let prefixCount = prefix.utf8CodeUnitCount
        guard bytes.count > prefixCount + 1, bytes[bytes.count - 1] == UInt8(ascii: "]"),
              memcmp(bytes.baseAddress!, prefix.utf8Start, prefixCount) == 0 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[prefixCount..<(bytes.count - 1)] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }

    /// A descriptor number from a `/proc/PID/fd` entry name (NUL-terminated): decimal digits
    /// only, within `Int32`; nil for `.`, `..` or anything else.
    public static func descriptor(entryName name: UnsafePointer<CChar>) -> Int32? {
        var value: Int32 = 0
        var index = 0
        while name[index] != 0 {
            let byte = UInt8(bitPattern: name[index])
            guard byte >= 0x30, byte <= 0x39, index < 10 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int32(byte - 0x30))
            guard !o1, !o2 else { return nil }
            value = sum
            index += 1
        }
        return index == 0 ? nil : value
    }

    /// Bytes read of a descriptor's link: `socket:[` + 20 digits + `]` is 29; a longer link is
    /// no socket (a path, read truncated and skipped).
    static let linkBytes = 64

    /// The sockets process `pid` holds: each `/proc/PID/fd/N` whose link is `socket:[INODE]`, as
    /// (fd, inode), in the directory's order. One directory open and one readlinkat(2) per
    /// descriptor into a stack buffer: no path built and no text made per descriptor (a lookup
    /// reads every descriptor of the recent programs; with a `String` path and a zeroed 4 KiB
    /// array per link that was most of the lookup thread's instructions per connection).
    ///
    /// A refused link (EACCES/EPERM) ends the read: the kernel asks the same ptrace access of
    /// every descriptor of a process, so the rest would be refused too and the answer is the one
    /// reading them all gives. Where tv cannot read pid 1's links (this test VM's init, 303
    /// descriptors) each `/proc` rescan made 303 refused readlinkat(2) calls for it: 3,636 of the
    /// lookup thread's 8,203 syscalls over 200 `tv exec` connections (`strace -ff`, 2026-12-02).
    /// - Parameter wanted: when given, the read stops as soon as every one of these inodes was
    ///   met (descriptors after that are not read); nil or empty: every descriptor is read.
    /// - Returns: the sockets, and errno when the directory could not be opened (EACCES:
    ///   another user's process, when tv is not root; ENOENT: gone), else 0.
    static func socketDescriptors(pid: Int32, stoppingOnceFound wanted: Set<UInt64>? = nil)
        -> (sockets: [(fd: Int32, inode: UInt64)], error: Int32) {
        guard let dir = opendir("/proc/\(pid)/fd") else { return ([], errno) }
        defer { closedir(dir) }
        let directoryFD = dirfd(dir)
        var sockets: [(fd: Int32, inode: UInt64)] = []
        var left = wanted ?? []
        let stops = !left.isEmpty
        var refused = false
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: linkBytes) { link in
            while !(stops && left.isEmpty), !refused, let entry = readdir(dir) {
                withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                        guard let fd = descriptor(entryName: name) else { return }
                        let n = readlinkat(directoryFD, name, link.baseAddress!, linkBytes)
                        if n < 0 && refusalEndsRead(errno: errno) { refused = true }
                        guard n > 0, n < linkBytes,
                              let inode = socketInode(linkBytes: UnsafeRawBufferPointer(start: link.baseAddress!, count: n)) else { return }
                        sockets.append((fd, inode))
                        if stops { left.remove(inode) }
                    }
                }
            }
        }
        return (sockets, 0)
    }

    /// Whether a descriptor link that failed with `errno` ends the read of its process's
    /// descriptors: EACCES and EPERM (access to the process refused: every link would be);
    /// not ENOENT (that one descriptor closed meanwhile) or anything else.
    static func refusalEndsRead(errno code: Int32) -> Bool { code == EACCES || code == EPERM }

    /// The socket inode `/proc/PID/fd/FD` names now (one readlink(2) into a stack buffer); nil
    /// when it is no socket or cannot be read (closed, process gone).
    static func socketInode(pid: Int32, fd: Int32) -> UInt64? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: linkBytes) { link in
            let n = readlink("/proc/\(pid)/fd/\(fd)", link.baseAddress!, linkBytes)
            guard n > 0, n < linkBytes else { return nil }
            return socketInode(linkBytes: UnsafeRawBufferPointer(start: link.baseAddress!, count: n))
        }
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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4_096) { buffer in
            let n = buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: 4_096) { readlink(path, $0, 4_095) }
            guard n > 0 else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<n]), as: UTF8.self)
        }
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
