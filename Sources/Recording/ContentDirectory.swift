import Foundation
import TVHome
import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// The content folder (`$TV_HOME/content`, 0700): lists, reads and deletes segment files.
///
/// "Being written" is asked of the file itself: the writer holds an exclusive `flock(2)` on its
/// current segment, so any process can tell, without a control socket, which file must be spared.
public struct ContentDirectory: Sendable, Equatable {
    /// The folder's path.
    public let path: String

    public init(path: String) { self.path = path }

    /// The path of segment `sequence`.
    public func path(of sequence: Int) -> String { path + "/" + SegmentName.fileName(sequence) }

    /// Creates the folder (0700) when missing.
    /// - Throws: `TVHomeError.cannotCreate`.
    public func ensureExists() throws {
        try FileModes.makeDirectory(path, mode: 0o700)
    }

    /// The segment files present, oldest (lowest sequence) first. A missing folder lists nothing.
    public func segments() -> [SegmentFile] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name -> SegmentFile? in
            guard let sequence = SegmentName.sequence(of: name) else { return nil }
            let file = path + "/" + name
            var st = stat()
            guard stat(file, &st) == 0 else { return nil }
            return SegmentFile(sequence: sequence, bytes: Int64(st.st_size), isBeingWritten: ContentDirectory.isLocked(file),
                               diskBytes: ContentDirectory.diskBytes(st))
        }.sorted { $0.sequence < $1.sequence }
    }

    /// The highest sequence in the folder, counting segments still being created; 0 when none.
    public func highestSequence() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return 0 }
        return names.compactMap { SegmentName.sequence(of: $0) ?? SegmentName.newSequence(of: $0) }.max() ?? 0
    }

    /// Leftover `.new` files no writer holds (a writer died while creating one): removes them.
    /// - Returns: how many were removed.
    @discardableResult
    public func removeAbandonedNewFiles() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return 0 }
        var removed = 0
        for name in names where SegmentName.newSequence(of: name) != nil {
            let file = path + "/" + name
            if !ContentDirectory.isLocked(file) && unlink(file) == 0 { removed += 1 }
        }
        return removed
    }

    /// Reads `count` bytes at `offset` of segment `sequence`.
    /// - Throws: `ContentError.bytesGone` (no such file), `.segmentShort` (fewer bytes than asked),
    ///   `.cannotRead` for other failures.
    public func read(sequence: Int, offset: Int64, count: Int, flow: Int64, turn: Int) throws -> [UInt8] {
        let file = path(of: sequence)
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw ContentError.bytesGone(flow: flow, turn: turn) }
            throw ContentError.cannotRead(path: file, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ContentError.cannotRead(path: file, reason: String(cString: strerror(errno)))
            }
            if n == 0 { throw ContentError.segmentShort(path: file, flow: flow, turn: turn) }
            done += n
        }
        return bytes
    }

    /// Makes `gaps` of segment `sequence` read as zeros: the bytes of turns whose rows are gone
    /// (`SegmentHoles`). Holes are punched (`tv_punch_hole`); where the file system cannot,
    /// zeros are written over what is not zero yet. A stretch already a hole is skipped
    /// (`SEEK_DATA` finds no data in it). A file that is gone is nothing to clear.
    /// - Throws: `ContentError.cannotDelete` when the file cannot be opened or written.
    func clear(sequence: Int, gaps: [Range<Int64>]) throws {
        guard !gaps.isEmpty else { return }
        let file = path(of: sequence)
        let fd = open(file, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw ContentError.cannotDelete(path: file, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        for gap in gaps {
            let data = tv_seek_data(fd, gap.lowerBound)
            // ENXIO: only holes from there to the end.
            guard data >= 0, Int64(data) < gap.upperBound else { continue }
            let start = Int64(data)
            if tv_punch_hole(fd, start, gap.upperBound - start) == 0 { continue }
            guard errno == EOPNOTSUPP else { throw ContentError.cannotDelete(path: file, reason: String(cString: strerror(errno))) }
            try Self.zero(fd, start..<gap.upperBound, path: file)
        }
    }

    /// Writes zeros over the bytes of `range` that are not zero, 64 KiB at a time.
    private static func zero(_ fd: Int32, _ range: Range<Int64>, path: String) throws {
        var piece = [UInt8](repeating: 0, count: 65_536)
        let zeros = [UInt8](repeating: 0, count: 65_536)
        var at = range.lowerBound
        while at < range.upperBound {
            let count = Int(min(Int64(piece.count), range.upperBound - at))
            let read = piece.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, count, off_t(at)) }
            guard read > 0 else { return }
            if piece.prefix(read).contains(where: { $0 != 0 }) {
                let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress!, read, off_t(at)) }
                guard written == read else { throw ContentError.cannotDelete(path: path, reason: String(cString: strerror(errno))) }
            }
            at += Int64(read)
        }
    }

    /// Deletes segment `sequence` unless a writer holds it.
    /// - Returns: the bytes freed, or nil when nothing was deleted (spared, or already gone).
    /// - Throws: `ContentError.cannotDelete` when unlink(2) fails for another reason than absence.
    @discardableResult
    public func delete(sequence: Int) throws -> Int64? {
        let file = path(of: sequence)
        var st = stat()
        guard stat(file, &st) == 0 else { return nil }
        if ContentDirectory.isLocked(file) { return nil }
        if unlink(file) != 0 {
            if errno == ENOENT { return nil }
            throw ContentError.cannotDelete(path: file, reason: String(cString: strerror(errno)))
        }
        return ContentDirectory.diskBytes(st)
    }

    /// The space a file takes: its length, less holes (`SegmentFile.diskBytes`).
    static func diskBytes(_ st: stat) -> Int64 { min(Int64(st.st_size), Int64(st.st_blocks) * 512) }

    /// True when some open file description holds a `flock` on `file` (the writer's exclusive
    /// lock); false when it is free or cannot be opened.
    static func isLocked(_ file: String) -> Bool {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }
}
