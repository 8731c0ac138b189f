import Capture
import Foundation
import TVHome

/// The packet captures holding TLS secrets (`CaptureSecretsScrub`): with them, the inspected
/// connections in a capture read as plainly as decrypted content, so `tv content status` counts
/// them and `tv content delete` blanks them (the packets stay, encrypted as they travelled).
public enum CaptureSecretsFiles {
    /// The capture files present (not symbolic links), by name.
    static func onDisk(_ home: TVHome) -> [String] {
        let folder = home.captureDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { CaptureFolder.sequence(ofName: $0) != nil }.sorted().filter { name in
            var st = stat()
            return lstat(folder + "/" + name, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
        }
    }

    /// The captures holding secrets now (`files`, their blocks in `blocks`); those a session is
    /// recording are named in `recording` and counted with the rest.
    public static func summary(home: TVHome) -> CaptureSecretsSummary {
        var summary = CaptureSecretsSummary()
        for name in onDisk(home) {
            let path = home.captureDirectory + "/" + name
            let held = CaptureSecretsScrub.secretsHeld(path: path)
            guard held > 0 else { continue }
            summary.files += 1
            summary.blocks += held
            if CaptureFolder.isRecording(path) { summary.recording.append(name) }
        }
        return summary
    }

    /// Blanks the secrets of every capture but the ones a session is recording.
    /// - Returns: the files and blocks blanked, and the names spared.
    /// - Throws: `CaptureSecretsScrubError`.
    public static func scrubAll(home: TVHome) throws -> CaptureSecretsSummary {
        var done = CaptureSecretsSummary()
        for name in onDisk(home) {
            let path = home.captureDirectory + "/" + name
            // The scrub skips blank blocks itself; a file it may not lock is named only when it
            // holds secrets.
            guard let blanked = try CaptureSecretsScrub.scrub(path: path) else {
                if CaptureSecretsScrub.secretsHeld(path: path) > 0 { done.recording.append(name) }
                continue
            }
            if blanked > 0 {
                done.files += 1
                done.blocks += blanked
            }
        }
        return done
    }
}

/// Packet captures holding TLS secrets: how many files and blocks, and the names of those a
/// session is recording (never blanked under it).
public struct CaptureSecretsSummary: Sendable, Equatable {
    public var files = 0
    public var blocks = 0
    public var recording: [String] = []

    public init(files: Int = 0, blocks: Int = 0, recording: [String] = []) {
        self.files = files
        self.blocks = blocks
        self.recording = recording
    }
}
