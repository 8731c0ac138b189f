import FlowStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Closes the captures a dead writer left marked recording (killed, crashed, power lost): the
/// file is cut back to its last whole pcapng block (a write cut mid-block would make readers stop
/// with an error) and the row gets its real size and an end time.
public enum CaptureRepair {
    /// Every row marked recording whose file no live writer holds is closed.
    /// - Throws: `FlowStoreError` from the database.
    public static func closeAbandoned(database: SQLiteDatabase, folder: CaptureFolder) throws {
        var abandoned: [(seq: Int64, path: String, started: Int64)] = []
        let select = try database.prepare("SELECT seq, path, started_at FROM captures WHERE recording = 1 AND deleted_at IS NULL")
        try select.forEachRow { row in
            let seq = row.int64(at: 0)
            let path = row.string(at: 1) ?? folder.filePath(seq)
            if !CaptureFolder.isRecording(path) { abandoned.append((seq, path, row.int64(at: 2))) }
        }
        for capture in abandoned {
            let end = wholeBlocksEnd(capture.path)
            if let end { _ = truncate(capture.path, off_t(end)) }
            let modified = (try? FileManager.default.attributesOfItem(atPath: capture.path)[.modificationDate] as? Date)
                .map { Int64($0.timeIntervalSince1970 * 1e6) } ?? capture.started
            let update = try database.prepare("UPDATE captures SET recording = 0, ended_at = ?, bytes = ? WHERE seq = ?")
            try update.bind([.integer(max(modified, capture.started)), .integer(end ?? 0), .integer(capture.seq)])
            _ = try update.step()
        }
    }

    /// The length of the file's whole blocks: each block's header (type, total length) is read
    /// and its length checked (at least 12, a multiple of 4, inside the file, the trailing copy
    /// equal, draft-ietf-opsawg-pcapng §3.1); the first block that fails ends the whole ones.
    /// Reads 12 bytes per block, never the packets. Nil when the file cannot be opened.
    public static func wholeBlocksEnd(_ path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int64(info.st_size)
        var offset: Int64 = 0
        var header = [UInt8](repeating: 0, count: 8)
        var trailer = [UInt8](repeating: 0, count: 4)
        while offset + 12 <= size {
            guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 8, off_t(offset)) }) == 8 else { break }
            let length = Int64(UInt32(header[4]) | UInt32(header[5]) << 8 | UInt32(header[6]) << 16 | UInt32(header[7]) << 24)
            guard length >= 12, length % 4 == 0, offset + length <= size else { break }
            guard trailer.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 4, off_t(offset + length - 4)) }) == 4,
                  trailer[...] == header[4..<8] else { break }
            offset += length
        }
        return offset
    }
}
