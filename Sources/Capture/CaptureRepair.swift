import FlowStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Closes the captures a dead writer left marked recording (killed, crashed, power lost): the
/// file is cut back to its last whole pcapng block (a write cut mid-block would make readers stop
/// with an error) and the row gets its real size and an end time. Only a write cut short is cut
/// (`tailIsCut`): a file damaged otherwise (its first block overwritten, say) is left as it is,
/// since cutting at the damage would lose every packet after it (a trial's file whose first 21
/// bytes were overwritten was cut to 0 bytes, its 274 packets gone, without a word).
public enum CaptureRepair {
    /// What the repair did to one file that was not whole.
    public enum Outcome: Sendable, Equatable {
        /// Cut back to its whole blocks: the `bytes` of a block the kill interrupted went.
        case cut(sequence: Int64, bytes: Int64)
        /// Left as it was: damaged at `offset` by something other than a write cut short.
        case damaged(sequence: Int64, offset: Int64)
    }

    /// Every row marked recording whose file no live writer holds is closed.
    /// - Returns: what was done to the files that were not whole (none for the usual kill, whose
    ///   last write was whole).
    /// - Throws: `FlowStoreError` from the database.
    @discardableResult
    public static func closeAbandoned(database: SQLiteDatabase, folder: CaptureFolder) throws -> [Outcome] {
        var outcomes: [Outcome] = []
        var abandoned: [(seq: Int64, path: String, started: Int64)] = []
        let select = try database.prepare("SELECT seq, path, started_at FROM captures WHERE recording = 1 AND deleted_at IS NULL")
        try select.forEachRow { row in
            let seq = row.int64(at: 0)
            // This folder's file, whatever the row's path says (a copied folder's rows name the
            // original's files, which this repair would cut: `CaptureCatalog.files`).
            let path = folder.filePath(seq)
            if !CaptureFolder.isRecording(path) { abandoned.append((seq, path, row.int64(at: 2))) }
        }
        for capture in abandoned {
            // The row is told what the file holds once cut back: its packets and the time of the
            // last one (a trial's repaired row kept the count its dead writer had committed and
            // the repair's own time as its end, which the truncate had just made the mtime).
            let whole = wholeBlocks(capture.path)
            var bytes = whole?.end ?? 0
            if let whole, whole.end < whole.size {
                if tailIsCut(capture.path, from: whole.end, size: whole.size) {
                    _ = truncate(capture.path, off_t(whole.end))
                    outcomes.append(.cut(sequence: capture.seq, bytes: whole.size - whole.end))
                } else {
                    bytes = whole.size
                    outcomes.append(.damaged(sequence: capture.seq, offset: whole.end))
                }
            }
            let update = try database.prepare("UPDATE captures SET recording = 0, ended_at = ?, bytes = ?, packets = ? WHERE seq = ?")
            try update.bind([.integer(max(whole?.lastPacketMicros ?? capture.started, capture.started)), .integer(bytes),
                             .integer(whole?.packets ?? 0), .integer(capture.seq)])
            _ = try update.step()
        }
        return outcomes
    }

    /// The largest block tv writes: a packet's is at most the snap length (65,535) and its
    /// header; a new file's carried secrets at most 1 MiB (`CaptureCarriedSecrets`). A block
    /// claiming more, running past the end, is damage, not a write the kill cut: a re-check's
    /// length made 0x7FFFFF0 mid-file was taken for one, and 7 MB of good packets after it were cut.
    static let largestBlockWritten: Int64 = (1 << 20) + (1 << 16)

    /// Whether the bytes from `end` (where the whole blocks end) to `size` are what a write cut
    /// short leaves: zeros (an aligned write's padding), or one block begun whose length, at most
    /// `largestBlockWritten`, runs past the end of the file (or whose header is itself cut).
    /// Anything else is damage. With no whole block (`end` 0), the block begun must be a Section
    /// Header Block (type 0x0A0D0D0A, pcapng §4.1): a file killed while its head was written is
    /// cut; one whose first bytes were overwritten is damaged.
    public static func tailIsCut(_ path: String, from end: Int64, size: Int64) -> Bool {
        guard size > end else { return false }
        let fd = CaptureFolder.openRegularFile(path)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 8)
        let got = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 8, off_t(end)) }
        guard got > 0 else { return false }
        if end == 0, got >= 4, header[0 ..< 4] != [0x0A, 0x0D, 0x0D, 0x0A], !header[0 ..< got].allSatisfy({ $0 == 0 }) { return false }
        if got < 8 { return true }
        let length = Int64(header[4]) | Int64(header[5]) << 8 | Int64(header[6]) << 16 | Int64(header[7]) << 24
        if length >= 12, length % 4 == 0, length <= largestBlockWritten, end + length > size { return true }
        // Zeros to the end of the file.
        var piece = [UInt8](repeating: 0, count: 65_536)
        var offset = end
        while offset < size {
            let n = piece.withUnsafeMutableBytes { pread(fd, $0.baseAddress, min(65_536, Int(size - offset)), off_t(offset)) }
            guard n > 0, piece[0 ..< n].allSatisfy({ $0 == 0 }) else { return false }
            offset += Int64(n)
        }
        return true
    }

    /// What a capture file's whole blocks hold.
    public struct WholeBlocks: Sendable, Equatable {
        /// Where the last whole block ends (bytes from the start).
        public var end: Int64
        /// How many of them are Enhanced Packet Blocks.
        public var packets: Int64
        /// The last packet's timestamp (µs since the epoch: tv's interfaces say if_tsresol 6);
        /// nil when there is none.
        public var lastPacketMicros: Int64?
        /// The file's size (bytes).
        public var size: Int64
    }

    /// The length of the file's whole blocks: each block's header (type, total length) is read
    /// and its length checked (at least 12, a multiple of 4, inside the file, the trailing copy
    /// equal, draft-ietf-opsawg-pcapng §3.1); the first block that fails ends the whole ones.
    /// Reads 12 bytes per block, never the packets. Nil when the file cannot be opened.
    public static func wholeBlocksEnd(_ path: String) -> Int64? { wholeBlocks(path)?.end }

    /// As `wholeBlocksEnd`, also counting the Enhanced Packet Blocks and reading the last one's
    /// timestamp (8 more bytes per packet block).
    public static func wholeBlocks(_ path: String) -> WholeBlocks? {
        let fd = CaptureFolder.openRegularFile(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let size = Int64(info.st_size)
        var offset: Int64 = 0
        var packets: Int64 = 0
        var last: Int64?
        var header = [UInt8](repeating: 0, count: 20)
        var trailer = [UInt8](repeating: 0, count: 4)
        func le32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24 }
        while offset + 12 <= size {
            guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 8, off_t(offset)) }) == 8 else { break }
            let length = Int64(le32(header, 4))
            guard length >= 12, length % 4 == 0, offset + length <= size else { break }
            guard trailer.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 4, off_t(offset + length - 4)) }) == 4,
                  trailer[...] == header[4..<8] else { break }
            // An Enhanced Packet Block (type 6, §4.3): interface id, then the timestamp's high and low words.
            if le32(header, 0) == 6, length >= 32,
               header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress! + 8, 12, off_t(offset + 8)) }) == 12 {
                packets += 1
                last = Int64(UInt64(le32(header, 12)) << 32 | UInt64(le32(header, 16)))
            }
            offset += length
        }
        return WholeBlocks(end: offset, packets: packets, lastPacketMicros: last, size: size)
    }
}
