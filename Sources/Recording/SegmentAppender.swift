#if canImport(Glibc)
import Glibc
#endif

/// The segment being written: an append-only file (0600) that its writer holds under an exclusive
/// `flock(2)` from creation until it is closed, so no sweep — in this process or another — ever
/// deletes it.
///
/// Created as `content-N.seg.new`, locked, then renamed to `content-N.seg`: the final name is
/// never seen unlocked while the writer still means to use it. Not `Sendable`: the writer thread
/// owns it.
final class SegmentAppender {
    /// The segment's sequence number.
    let sequence: Int
    /// The file's path.
    let path: String
    /// Bytes written so far (the offset of the next append).
    private(set) var size: Int64 = 0
    /// When it was created, µs since the epoch (by the writer's clock).
    let createdAt: Int64
    private var fd: Int32

    /// Creates and locks segment `sequence` in `directory`.
    /// - Throws: `ContentError.cannotWrite` when the file cannot be made, locked or renamed.
    init(directory: ContentDirectory, sequence: Int, createdAt: Int64) throws {
        self.sequence = sequence
        self.createdAt = createdAt
        path = directory.path(of: sequence)
        let newPath = directory.path + "/" + SegmentName.newFileName(sequence)
        let fd = open(newPath, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ContentError.writing(newPath, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(newPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            unlink(newPath)
            throw ContentError.cannotWrite(path: path, reason: reason)
        }
        self.fd = fd
    }

    deinit { close() }

    /// Appends `bytes`.
    /// - Returns: the offset they start at.
    /// - Throws: `ContentError.diskFull`, `.cannotWrite` (I/O error); the file's size is then
    ///   whatever reached it, and `size` follows the file, so later offsets stay right.
    func append(_ bytes: [UInt8]) throws -> Int64 {
        let start = size
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                size += Int64(done)
                throw ContentError.writing(path, errno: code)
            }
            done += n
        }
        size += Int64(done)
        return start
    }

    /// Releases the lock and closes the file (it becomes an ordinary segment the sweep may
    /// delete once nothing references it). Idempotent.
    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)  // closing the last descriptor releases the flock
        fd = -1
    }
}
