import Capture
import FlowStore
import Foundation
import Recording
import TVHome

/// The capture files as retention sees them: `CaptureFolder`'s files on disk joined with the
/// `captures` rows (issue 17) that describe them. A row with `deleted_at` no longer describes a
/// file: a file left under it (a pass killed between the row and the unlink) is unreferenced. A
/// file no row ever described is not tv's to delete (`unknown`).
/// The file being recorded is the one a live writer holds locked (`CaptureFolder.isRecording`),
/// the same test `tv captures` makes, from any process.
struct CaptureFiles {
    let folder: CaptureFolder

    init(home: TVHome) { folder = CaptureFolder(path: home.captureDirectory) }

    /// Files on disk by sequence, with their sizes and modification times (µs).
    func onDisk() -> [Int: (bytes: Int64, modified: Int64)] {
        var out: [Int: (bytes: Int64, modified: Int64)] = [:]
        for sequence in folder.sequencesPresent() {
            var st = stat()
            guard lstat(folder.filePath(sequence), &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            out[Int(sequence)] = (Int64(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000 + Int64(st.st_mtim.tv_nsec) / 1_000)
        }
        return out
    }

    /// The file a live writer holds, if any (the highest such sequence).
    func recording() -> Int? {
        onDisk().keys.sorted().last { CaptureFolder.isRecording(folder.filePath(Int64($0))) }
    }

    /// Every file a live writer holds (one per recording session: `tv run` and `tv exec` may
    /// both be recording), by sequence.
    func allRecording() -> Set<Int> {
        Set(onDisk().keys.filter { CaptureFolder.isRecording(folder.filePath(Int64($0))) })
    }

    /// The facts the planner needs: the files on disk the history describes, or described until
    /// a pass deleted their row (`deleted`: a pass killed between the row and the unlink; the
    /// planner deletes them as unreferenced), with their rows' times. A file the history never
    /// described (`unknown`) is not retention's: a database moved aside as tv advises left every
    /// earlier capture so, and the next start deleted them all (a trial).
    /// - Parameters:
    ///   - rows: live (not deleted) `captures` rows by sequence.
    ///   - deleted: sequences whose row retention marked deleted.
    ///   - recording: the sequence a live writer holds, if any.
    func facts(rows: [Int: CaptureRow], deleted: Set<Int>, recording: Int?) -> [CaptureFileFacts] {
        onDisk().sorted { $0.key < $1.key }.compactMap { sequence, file in
            let row = rows[sequence]
            guard row != nil || deleted.contains(sequence) || sequence == recording else { return nil }
            return CaptureFileFacts(sequence: sequence, startedAt: row?.startedAt ?? file.modified,
                                    endedAt: row?.endedAt ?? (row == nil ? file.modified : nil), bytes: file.bytes,
                                    isRecording: sequence == recording, hasRow: row != nil)
        }
    }

    /// The files on disk the history never described (no row, live or deleted), by sequence with
    /// their sizes: left alone, and not counted against the limits.
    func unknown(rows: Set<Int>, deleted: Set<Int>, recording: Int?) -> [Int: Int64] {
        onDisk().filter { !rows.contains($0.key) && !deleted.contains($0.key) && $0.key != recording }.mapValues(\.bytes)
    }

    /// Unlinks the file of `sequence` unless a writer holds it.
    /// - Returns: the bytes freed, nil when it was already gone or is being recorded.
    /// - Throws: `StorageError.cannotDelete`.
    func delete(_ sequence: Int) throws -> Int64? {
        try Self.unlinkUnlessRecording(folder.filePath(Int64(sequence)))
    }

    /// Unlinks the capture file (packet or decrypted) at `path` unless a writer holds it locked.
    /// - Returns: the bytes freed, nil when it was already gone or is being recorded.
    /// - Throws: `StorageError.cannotDelete`.
    static func unlinkUnlessRecording(_ path: String) throws -> Int64? {
        var st = stat()
        guard lstat(path, &st) == 0, !CaptureFolder.isRecording(path) else { return nil }
        if unlink(path) != 0 {
            if errno == ENOENT { return nil }
            throw StorageError.cannotDelete(path: path, reason: String(cString: strerror(errno)))
        }
        return Int64(st.st_size)
    }
}

/// The sequences of the `captures` rows, live and deleted, as retention and `tv storage` read them.
struct CaptureRowSequences: Equatable {
    var live: [Int: CaptureRow]
    /// Rows a pass marked deleted whose file it had not unlinked yet (killed in between); a
    /// finished deletion's row is neither (a file of its name is not the history's).
    var deleted: Set<Int>

    /// - Throws: `FlowStoreError`.
    static func read(_ database: SQLiteDatabase) throws -> CaptureRowSequences {
        var rows = CaptureRowSequences(live: [:], deleted: [])
        // 0: live; 1: deleted, its file not yet unlinked (a pass killed between); 2: finished.
        let statement = try database.prepare("""
            SELECT seq, started_at, ended_at, CASE WHEN deleted_at IS NULL THEN 0 WHEN unlinked_at IS NULL THEN 1 ELSE 2 END FROM captures
            """)
        try statement.forEachRow { row in
            let sequence = Int(row.int64(at: 0))
            let state = row.int64(at: 3)
            if state == 1 {
                rows.deleted.insert(sequence)
            } else if state == 2 {
                return
            } else {
                rows.live[sequence] = CaptureRow(startedAt: row.int64(at: 1), endedAt: row.optionalInt64(at: 2))
            }
        }
        return rows
    }
}

/// One live `captures` row, as retention reads it.
struct CaptureRow: Equatable {
    var startedAt: Int64
    var endedAt: Int64?
}
