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
    /// for the next start. Only a write cut short is cut (`CaptureRepair.tailIsCut`).
    /// - Returns: one sentence for each file that was not whole: what was cut, or that it was
    ///   left as it is (the repair said nothing before: a trial's cut went unnoticed).
    static func repair(home: TVHome) -> [String] {
        let folder = home.captureDirectory
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        var said: [String] = []
        if let database = try? SQLiteDatabase(path: home.databasePath) {
            let outcomes = (try? CaptureRepair.closeAbandoned(database: database, folder: CaptureFolder(path: folder))) ?? []
            database.close()
            said += outcomes.map { outcome in
                switch outcome {
                case let .cut(sequence, bytes): return sentence(CaptureFolder.fileName(sequence), cut: bytes)
                case let .damaged(sequence, offset): return sentence(CaptureFolder.fileName(sequence), damagedAt: offset)
                }
            }
        }
        for file in DecryptedCaptureFiles(home: home).onDisk() where !file.isRecording {
            let path = folder + "/" + file.name
            guard let whole = CaptureRepair.wholeBlocks(path), whole.end < whole.size else { continue }
            if CaptureRepair.tailIsCut(path, from: whole.end, size: whole.size) {
                _ = truncate(path, off_t(whole.end))
                said.append(sentence(file.name, cut: whole.size - whole.end))
            }
            // One damaged otherwise is left as it is, unsaid: no row says it was being written,
            // so it would be said again at every start.
        }
        return said
    }

    static func sentence(_ name: String, cut bytes: Int64) -> String {
        "\(name), left open by a session that was killed, was cut back to its last whole block (the \(bytes) bytes of the one the kill interrupted)."
    }

    static func sentence(_ name: String, damagedAt offset: Int64) -> String {
        "\(name), left open by a session that was killed, is damaged at byte \(offset), not cut short by the kill: tv left it as it is "
            + "(cutting it there would lose what follows); readers such as capinfos may stop at that byte."
    }
}
