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
    /// - Throws: as `append(_:)` of ranges.
    func append(_ bytes: [UInt8]) throws -> Int64 {
        try bytes.withUnsafeBytes { try append([$0]) }
    }

    /// The most ranges one `writev(2)` takes (Linux's IOV_MAX, UIO_MAXIOV).
    static let rangesPerWrite = 1_024

    /// `writev`'s vector (reused).
    private var vector: [iovec] = []

    /// Appends `ranges` back to back, `rangesPerWrite` per `writev(2)`, without gathering them
    /// into one buffer first.
    /// - Returns: the offset they start at.
    /// - Throws: `ContentError.diskFull`, `.cannotWrite` (I/O error); the file's size is then
    ///   whatever reached it, and `size` follows the file, so later offsets stay right.
    func append(_ ranges: [UnsafeRawBufferPointer]) throws -> Int64 {
        let start = size
        // The vector is moved into a local for the call: each append to the stored property
        // was checked for exclusivity at run time (`swift_beginAccess`/`endAccess`), ~120
        // instructions a range, a turn of a small request (callgrind h1 row, i27-rec).
        var vector: [iovec] = []
        swap(&vector, &self.vector)
        defer {
            vector.removeAll(keepingCapacity: vector.capacity <= SegmentAppender.rangesPerWrite)
            swap(&vector, &self.vector)
        }
        var index = 0
        // Bytes of ranges[index] already written (a short write can stop inside a range).
        var into = 0
        while index < ranges.count {
            vector.removeAll(keepingCapacity: true)
            var i = index
            var skip = into
            while i < ranges.count, vector.count < SegmentAppender.rangesPerWrite {
                let range = ranges[i]
                if let base = range.baseAddress, range.count > skip {
                    vector.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base + skip), iov_len: range.count - skip))
                }
                skip = 0
                i += 1
            }
            if vector.isEmpty { break }
            let n = vector.withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32($0.count)) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw ContentError.writing(path, errno: code)
            }
            // A regular file takes at least one byte or fails; never spin on nothing written.
            if n == 0 { throw ContentError.writing(path, errno: EIO) }
            size += Int64(n)
            // Steps over what this call wrote.
            var left = n
            while left > 0, index < ranges.count {
                let rest = ranges[index].count - into
                if left >= rest {
                    left -= rest
                    index += 1
                    into = 0
                } else {
                    into += left
                    left = 0
                }
            }
            while index < ranges.count, ranges[index].count == into {
                index += 1
                into = 0
            }
        }
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
