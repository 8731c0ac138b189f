import Capture
import FlowStore
import FlowTerms
import Settings
import TVHome
import Tunnel

/// Whether a session writes the decrypted capture, and where: `capture.decrypted` on and
/// inspection on (without inspection there is no plaintext of encrypted flows to write). The
/// files are `captures/decrypted-YYYYMMDD-HHMMSS.pcapng` (0600, in the 0700 captures folder),
/// the first named by the session's start and made with its first inspected flow, each closed
/// and the next begun by the capture rotation settings (`capture.rotateBytes`,
/// `capture.rotateAge`), as the packet capture's are: in `tv run` the decrypted capture was one
/// file per session whatever they said, and a trial's grew to 18 MiB under a 1 MB rotation and a
/// 6 MB limit until the disk was full.
enum DecryptedCaptureSetup {
    /// - Parameters:
    ///   - historyFirst: the flow writer's standing, when the captures folder shares its disk
    ///     (`HistoryFirst`).
    ///   - onHealthChange: told when writes start failing and when they resume.
    /// - Throws: `TVHomeError` when the captures folder cannot be made.
    static func make(home: TVHome, record: SettingsRecord, inspecting: Bool, historyFirst: HistoryFirstSignal? = nil,
                     onHealthChange: (@Sendable (WriteHealth.Change, DecryptedCaptureCounters) -> Void)? = nil) throws -> DecryptedCapture? {
        guard inspecting, record[SettingKeys.captureDecrypted] else { return nil }
        let folder = CaptureFolder(path: home.captureDirectory)
        try folder.ensureExists()
        return DecryptedCapture(path: folder.path + "/" + DecryptedCapture.fileName(startMicros: EngineClock.wallMicros()),
                                rotation: CaptureSettingsPlan(record).rotation, historyFirst: historyFirst, onHealthChange: onHealthChange)
    }
}
