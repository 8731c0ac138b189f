import Foundation
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `$TV_HOME/settings.json`: the one durable settings record, a JSON object of dotted keys,
/// written whole and atomically (temporary file, fsync, rename(2)) with mode 0600.
public struct SettingsFile: Sendable {
    /// The absolute path of the file.
    public let path: String

    /// The settings file of a data folder.
    public init(home: TVHome) { path = home.path + "/settings.json" }
    /// A settings file at an explicit path (tests).
    public init(path: String) { self.path = path }

    /// Reads the record now. A missing file is "nothing saved yet" (every key at its default);
    /// anything else that is not a settings record is an error, never silently the defaults.
    /// - Throws: `SettingsError.unreadable` (a folder in its place, a read error),
    ///   `SettingsError.corrupt` (not JSON, not an object, a known key holding the wrong type).
    public func load() throws -> SettingsRecord {
        guard let bytes = try readBytes() else { return SettingsRecord() }
        let json: JSONValue
        do { json = try SettingsJSONReader.parse(bytes) } catch let invalid as SettingsJSONReader.Invalid {
            throw SettingsError.corrupt(path: path, reason: invalid.reason)
        }
        guard case .object(let fields) = json else {
            throw SettingsError.corrupt(path: path, reason: "it is not a JSON object")
        }
        var values: [String: JSONValue] = [:]
        for (name, value) in fields { values[name] = value }
        for key in SettingKeys.all {
            if let value = values[key.name], !key.accepts(value) {
                throw SettingsError.corrupt(path: path, reason: "\(key.name) holds \(value.serialized()), which is not a value it can take")
            }
        }
        return SettingsRecord(values: values)
    }

    /// Writes `record` whole, replacing the file atomically; creates `$TV_HOME` (0700) if needed.
    /// - Parameter key: the key being changed, named in the error.
    /// - Throws: `SettingsError.saveFailed`; the file then still holds what it held before.
    public func save(_ record: SettingsRecord, changing key: String) throws {
        let folder = PathText.folder(of: path)
        do {
            var isDir: ObjCBool = false
            if !FileManager.default.fileExists(atPath: folder, isDirectory: &isDir) {
                try FileModes.makeDirectory(folder, mode: 0o700)
            }
            var st = stat()
            if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
                throw FileWriteError(path: path, reason: "a folder stands where the file should be")
            }
            try FileModes.writeAtomically(Array((record.json.serialized(pretty: true) + "\n").utf8), to: path, mode: 0o600)
        } catch let error as FileWriteError {
            // Told by the disk, not the reason's words: no room left for the new file.
            if DiskSpace.freeBytes(at: folder) == 0 { throw SettingsError.diskFull(path: path, key: key) }
            throw SettingsError.saveFailed(path: path, key: key, reason: error.reason)
        } catch let error as TVHomeError {
            throw SettingsError.saveFailed(path: path, key: key, reason: error.message)
        }
    }

    /// Writes `record` over the file in place, only when it is no longer than the file now (so
    /// no new block is needed): the way to save a smaller record on a full disk, where the
    /// atomic save's temporary file cannot be made. Not atomic: a crash part way leaves a file
    /// `load` calls corrupt, which `tv inspect off` rewrites with inspection off.
    /// - Throws: `SettingsError.saveFailed` (the file is longer than before would be needed, or
    ///   cannot be opened or written, e.g. on a read-only mount).
    func overwriteInPlace(_ record: SettingsRecord, changing key: String) throws {
        let bytes = Array((record.json.serialized(pretty: true) + "\n").utf8)
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SettingsError.saveFailed(path: path, key: key, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, off_t(bytes.count) <= st.st_size else {
            throw SettingsError.saveFailed(path: path, key: key, reason: "no space left on device")
        }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count, ftruncate(fd, off_t(bytes.count)) == 0, fsync(fd) == 0 else {
            throw SettingsError.saveFailed(path: path, key: key, reason: String(cString: strerror(errno)))
        }
    }

    /// The file's bytes, or nil when there is no file.
    /// - Throws: `SettingsError.unreadable`, `.tooManyOpenFiles`.
    func readBytes() throws -> [UInt8]? {
        var st = stat()
        if lstat(path, &st) != 0 {
            if errno == ENOENT { return nil }
            throw SettingsError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw SettingsError.unreadable(path: path, reason: "a folder stands where the file should be")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if let shortage = TooManyOpenFiles(errno: errno, opening: "the settings file \(path)") {
                throw SettingsError.tooManyOpenFiles(shortage)
            }
            throw SettingsError.unreadable(path: path, reason: "it cannot be opened")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SettingsError.unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { return bytes }
            bytes += chunk[..<n]
        }
    }
}
