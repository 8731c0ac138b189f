import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tmpfs of a few MiB mounted on a fresh folder (needs root), for the flow writer on a full
/// disk; `unmount()` (lazily) unmounts it and removes the folder, and must run on every path.
struct SmallDisk {
    let path: String

    /// Mounts a tmpfs of `megabytes` MiB on a new temporary folder.
    init(megabytes: Int) throws {
        path = makeTemporaryFolder()
        let status = SmallDisk.run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", path])
        guard status == 0 else {
            removeFolder(path)
            throw SmallDiskError(message: "mount exited \(status)")
        }
    }

    func unmount() {
        _ = SmallDisk.run(["umount", "-l", path])
        removeFolder(path)
    }

    /// Writes `name` in the disk's root: `bytes` of zeros, or (nil) until the disk is full.
    /// - Returns: the bytes written.
    @discardableResult
    func fill(_ name: String, bytes: Int? = nil) -> Int {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 65_536)
        var written = 0
        while bytes.map({ written < $0 }) ?? true {
            let want = min(block.count, (bytes ?? Int.max) - written)
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, want) }
            guard n > 0 else { break }
            written += n
        }
        return written
    }

    /// Deletes `name` from the disk's root (its room is free at once on a tmpfs).
    func free(_ name: String) { unlink(path + "/" + name) }

    /// The bytes free on the disk now.
    var freeBytes: Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return -1 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// The size of `name` in the disk's root (0 when it does not exist).
    func size(_ name: String) -> Int64 {
        var info = stat()
        return stat(path + "/" + name, &info) == 0 ? Int64(info.st_size) : 0
    }

    private static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

struct SmallDiskError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
