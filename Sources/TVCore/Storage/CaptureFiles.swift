import Capture
import FlowStore
import Foundation
import Recording
import TVHome

/// The capture files as retention sees them: `CaptureFolder`'s files on disk joined with the
/// `captures` rows (issue 17) that describe them. A row with `deleted_at` no longer describes a
/// file: a file left under it (a pass killed between the row and the unlink) is unreferenced.
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

    /// The facts the planner needs: every file on disk, its row's times when there is one.
    /// - Parameters:
    ///   - rows: live (not deleted) `captures` rows by sequence.
    ///   - recording: the sequence a live writer holds, if any.
    func facts(rows: [Int: CaptureRow], recording: Int?) -> [CaptureFileFacts] {
        onDisk().sorted { $0.key < $1.key }.map { sequence, file in
            let row = rows[sequence]
            return CaptureFileFacts(sequence: sequence, startedAt: row?.startedAt ?? file.modified,
                                    endedAt: row?.endedAt ?? (row == nil ? file.modified : nil), bytes: file.bytes,
                                    isRecording: sequence == recording, hasRow: row != nil)
        }
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

/// One live `captures` row, as retention reads it.
struct CaptureRow: Equatable {
    var startedAt: Int64
    var endedAt: Int64?
}
