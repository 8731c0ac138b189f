import Capture
import FlowTerms
import Settings
import TVHome
import Tunnel

/// Whether a session writes the decrypted capture, and where: `capture.decrypted` on and
/// inspection on (without inspection there is no plaintext of encrypted flows to write). The
/// file is `captures/decrypted-YYYYMMDD-HHMMSS.pcapng` (0600, in the 0700 captures folder).
enum DecryptedCaptureSetup {
    /// - Throws: `TVHomeError` / `FileWriteError` when the folder or the file cannot be made.
    static func make(home: TVHome, record: SettingsRecord, inspecting: Bool) throws -> DecryptedCapture? {
        guard inspecting, record[SettingKeys.captureDecrypted] else { return nil }
        let folder = CaptureFolder(path: home.captureDirectory)
        try folder.ensureExists()
        return try DecryptedCapture(path: folder.path + "/" + DecryptedCapture.fileName(startMicros: EngineClock.wallMicros()))
    }
}
