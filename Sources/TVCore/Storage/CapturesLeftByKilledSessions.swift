import Capture
import FlowStore
import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// What a killed session (kill -9, a crash, a pulled plug) left of its capture files, repaired
/// when any session starts, whatever its mode: the packet captures it left marked recording are
/// closed and cut back to whole blocks (`CaptureRepair.closeAbandoned`), and the decrypted
/// captures (`decrypted-*.pcapng`, which have no rows) are cut back to whole blocks. Before, only
/// the next TUN session repaired a packet capture (a `tv run` in proxy mode left it "not
/// closed"), and a decrypted capture cut mid-packet stayed so for good (a trial). A file a live
/// session holds (its flock) is never touched.
enum CapturesLeftByKilledSessions {
    /// Repairs what it can; a failure (an unreadable database, say) leaves the files as they are
    /// for the next start.
    static func repair(home: TVHome) {
        let folder = home.captureDirectory
        guard FileManager.default.fileExists(atPath: folder) else { return }
        if let database = try? SQLiteDatabase(path: home.databasePath) {
            _ = try? CaptureRepair.closeAbandoned(database: database, folder: CaptureFolder(path: folder))
            database.close()
        }
        for file in DecryptedCaptureFiles(home: home).onDisk() where !file.isRecording {
            let path = folder + "/" + file.name
            if let whole = CaptureRepair.wholeBlocks(path), whole.end < file.bytes, whole.end > 0 {
                _ = truncate(path, off_t(whole.end))
            }
        }
    }
}
