import FlowStore
import Foundation
import Recording
import TVHome

/// The capture files retention sees: `$TV_HOME/captures/capture-NNNNNN.pcapng` on disk, joined
/// with the `captures` rows that describe them (layout fixed for issue 17; the table may not
/// exist yet in a database no capturing tv has opened).
struct CaptureFiles {
    /// The folder (`$TV_HOME/captures`).
    let directory: String

    init(home: TVHome) { directory = home.path + "/captures" }

    /// `capture-NNNNNN.pcapng` for `sequence`.
    static func fileName(_ sequence: Int) -> String {
        let digits = String(sequence)
        return "capture-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".pcapng"
    }

    /// The sequence in a capture file's name, or nil for any other name.
    static func sequence(ofFileName name: String) -> Int? {
        guard name.hasPrefix("capture-"), name.hasSuffix(".pcapng") else { return nil }
        let digits = name.dropFirst("capture-".count).dropLast(".pcapng".count)
        guard digits.count >= 6, digits.allSatisfy(\.isASCII), let n = Int(digits), n > 0 else { return nil }
        return n
    }

    func path(of sequence: Int) -> String { directory + "/" + CaptureFiles.fileName(sequence) }

    /// Files on disk by sequence, with their sizes and modification times (µs).
    func onDisk() -> [Int: (bytes: Int64, modified: Int64)] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
        var out: [Int: (bytes: Int64, modified: Int64)] = [:]
        for name in names {
            guard let sequence = CaptureFiles.sequence(ofFileName: name) else { continue }
            var st = stat()
            guard lstat(directory + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            out[sequence] = (Int64(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000 + Int64(st.st_mtim.tv_nsec) / 1_000)
        }
        return out
    }

    /// The facts the planner needs: every file on disk, its row's times when there is one.
    /// - Parameters:
    ///   - rows: `captures` rows by sequence (nil when the table does not exist: then every file
    ///     counts as described, so none is taken for a leftover).
    ///   - recording: the sequence a live session writes, if any.
    func facts(rows: [Int: CaptureRow]?, recording: Int?) -> [CaptureFileFacts] {
        onDisk().sorted { $0.key < $1.key }.map { sequence, file in
            let row = rows?[sequence]
            return CaptureFileFacts(sequence: sequence, startedAt: row?.startedAt ?? file.modified,
                                    endedAt: row?.endedAt ?? (row == nil ? file.modified : nil), bytes: file.bytes,
                                    isRecording: sequence == recording, hasRow: rows == nil || row != nil)
        }
    }

    /// Unlinks the file of `sequence`. - Returns: the bytes freed, nil when it was already gone.
    /// - Throws: `StorageError.cannotDelete`.
    func delete(_ sequence: Int) throws -> Int64? {
        let file = path(of: sequence)
        var st = stat()
        guard lstat(file, &st) == 0 else { return nil }
        if unlink(file) != 0 {
            if errno == ENOENT { return nil }
            throw StorageError.cannotDelete(path: file, reason: String(cString: strerror(errno)))
        }
        return Int64(st.st_size)
    }
}

/// One `captures` row, as retention reads it.
struct CaptureRow: Equatable {
    var startedAt: Int64
    var endedAt: Int64?
    var recording: Bool
}
