import Capture
import Foundation
import Recording
import TVHome

/// Reads what a data folder holds that the full disk's way on can name
/// (`DataFolderFull.Holdings`): file sizes only (stat(2) of the content segments, the captures
/// and the history's files; no database opened), so it works on a full disk and costs a folder
/// listing. Files a live session writes are not counted: no command deletes them.
public enum DataFolderHoldings {
    public static func read(home: TVHome) -> DataFolderFull.Holdings {
        let segments = ContentDirectory(path: home.contentDirectory).segments()
        let decrypted = DecryptedCaptureFiles(home: home).onDisk().filter { !$0.isRecording }
        let captures = CaptureFiles(home: home)
        let packetFiles = captures.onDisk().filter { !CaptureFolder.isRecording(captures.folder.filePath(Int64($0.key))) }
        var history: Int64 = 0
        for suffix in ["", "-wal"] {
            var st = stat()
            if stat(home.databasePath + suffix, &st) == 0 { history += Int64(st.st_size) }
        }
        return DataFolderFull.Holdings(
            contentBytes: segments.reduce(0) { $0 + $1.bytes } + decrypted.reduce(0) { $0 + $1.bytes },
            captureFiles: packetFiles.count, captureBytes: packetFiles.values.reduce(0) { $0 + $1.bytes },
            historyBytes: history)
    }

    /// The way on for `home`'s full disk (`DataFolderFull.wayOn(_:)` of what it holds now).
    public static func wayOn(home: TVHome) -> String {
        DataFolderFull.wayOn(read(home: home))
    }
}
