import Capture
import Foundation
import Recording
import TVHome
import Tunnel

/// The decrypted captures on disk (`captures/decrypted-*.pcapng`, `DecryptedCapture`): the
/// plaintext of inspected flows, each session's files rotated as its packet captures are.
/// Retention, delete-everything and `tv captures delete NAME` read and delete them here
/// (`DecryptedCaptureRetention` decides which for retention); the one a running session writes
/// is the one it holds locked (`CaptureFolder.isRecording`), from any process. They have no rows:
/// a file is named by its name, as `tv captures` lists it.
public struct DecryptedCaptureFiles {
    let folder: String

    init(home: TVHome) { folder = home.captureDirectory }

    /// Every decrypted capture in the folder (regular files only), by name.
    func onDisk() -> [DecryptedCaptureRetention.File] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter(DecryptedCapture.isFileName).sorted().compactMap { name in
            var st = stat()
            let path = folder + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
            return DecryptedCaptureRetention.File(name: name, bytes: Int64(st.st_size), started: DecryptedCapture.startMicros(fileName: name) ?? 0,
                                                  modified: Int64(st.st_mtim.tv_sec) * 1_000_000 + Int64(st.st_mtim.tv_nsec) / 1_000,
                                                  isRecording: CaptureFolder.isRecording(path))
        }
    }

    /// Every decrypted capture in `home`'s captures folder, oldest first (`tv captures` lists them
    /// after the packet captures).
    public static func listing(home: TVHome) -> [DecryptedCaptureRetention.File] {
        DecryptedCaptureFiles(home: home).onDisk()
    }

    /// The bytes every decrypted capture in `home`'s captures folder holds (`tv captures room`
    /// counts them against captures.maxBytes, which they live under).
    public static func totalBytes(home: TVHome) -> Int64 {
        DecryptedCaptureFiles(home: home).onDisk().reduce(0) { $0 + $1.bytes }
    }

    /// Unlinks `name` unless a session holds it.
    /// - Returns: the bytes freed, nil when it was already gone or is being written.
    /// - Throws: `StorageError.cannotDelete`.
    func delete(_ name: String) throws -> Int64? {
        try CaptureFiles.unlinkUnlessRecording(folder + "/" + name)
    }

    /// The decrypted capture `text` names for `tv captures delete`: a file name of that form
    /// (`DecryptedCapture.isFileName`) with no folder; nil for anything else (a capture number).
    public static func name(of text: String) -> String? {
        DecryptedCapture.isFileName(text) && !text.contains("/") ? text : nil
    }

    /// Deletes the decrypted capture `name` unless a session writes it (`tv captures delete`).
    /// - Returns: the bytes freed, nil when it was already gone or is being written.
    /// - Throws: `StorageError.cannotDelete`.
    public static func delete(home: TVHome, name: String) throws -> Int64? {
        try DecryptedCaptureFiles(home: home).delete(name)
    }

    /// What the decrypted captures hold now: files, bytes, and the names of the ones a session
    /// is writing (`tv content delete` says them before deleting).
    public static func summary(home: TVHome) -> DecryptedCapturesSummary {
        let files = DecryptedCaptureFiles(home: home).onDisk()
        var summary = DecryptedCapturesSummary(files: files.count, bytes: files.reduce(0) { $0 + $1.bytes },
                                               recording: files.filter(\.isRecording).map(\.name))
        summary.recordingBytes = files.filter(\.isRecording).reduce(0) { $0 + $1.bytes }
        return summary
    }

    /// Deletes every decrypted capture but the ones a session is writing (`tv content delete`:
    /// they hold the plaintext of inspected connections as much as the content store does).
    /// - Returns: what went, and the names spared.
    /// - Throws: `StorageError.cannotDelete`.
    public static func deleteAll(home: TVHome) throws -> DecryptedCapturesSummary {
        let captures = DecryptedCaptureFiles(home: home)
        var deleted = DecryptedCapturesSummary()
        for file in captures.onDisk() {
            if file.isRecording {
                deleted.recording.append(file.name)
            } else if let freed = try captures.delete(file.name) {
                deleted.files += 1
                deleted.bytes += freed
            }
        }
        return deleted
    }
}

/// Decrypted capture files: how many and their bytes (present, or deleted), and the names of
/// those a running session writes (never deleted under it).
public struct DecryptedCapturesSummary: Sendable, Equatable {
    public var files = 0
    public var bytes: Int64 = 0
    public var recording: [String] = []
    /// The bytes of those being written.
    public var recordingBytes: Int64 = 0

    public init(files: Int = 0, bytes: Int64 = 0, recording: [String] = []) {
        self.files = files
        self.bytes = bytes
        self.recording = recording
    }
}
