import Foundation
import TVHome

/// What the last session to stop could not save (`RecordingLosses`), kept for the commands that
/// run after it: with no session running, `tv status` and `tv diag` say it (trial 43: 1,870 flows
/// lost to a full disk left no trace once the session ended; `tv activity` showed an empty
/// stretch, `tv diag` and `tv storage` said nothing). One small JSON file, `$TV_HOME/run/last-stop`
/// (0600, in the 0700 run folder), each stop's replacing the last's.
///
/// Shape: `{"at": MICROS, "pid": 123, "values": {"recording.flowsNotSaved": "1870", …}}` (the
/// values are `RecordingLosses.values`), padded with spaces to `reservedBytes`.
///
/// The stop that most needs it is on a full disk, where a new file cannot be made: a session
/// reserves the file at its start (`reserve`, while there is room; the last stop's record kept in
/// it), and the stop writes its record over those bytes in place (`write`), which takes no room.
public struct LastStopRecord: Sendable, Equatable {
    /// When the session stopped, µs since the epoch.
    public var atMicros: Int64
    /// The session's process.
    public var pid: Int32
    /// What it could not save.
    public var losses: RecordingLosses

    public init(atMicros: Int64, pid: Int32, losses: RecordingLosses) {
        self.atMicros = atMicros
        self.pid = pid
        self.losses = losses
    }

    /// The file's size: a record is ~1.5 KiB (its numbers and up to three error sentences).
    public static let reservedBytes = 4_096

    /// `$TV_HOME/run/last-stop`.
    public static func path(_ home: TVHome) -> String { home.runDirectory + "/last-stop" }

    /// The record as the file holds it, padded with spaces to `reservedBytes` (longer when it
    /// does not fit). Pure.
    public var bytes: [UInt8] {
        let values = losses.values.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }
        var out = Array(JSONValue.object([("at", .int(atMicros)), ("pid", .int(Int64(pid))), ("values", .object(values))])
            .serialized(pretty: false).utf8)
        if out.count < Self.reservedBytes { out += [UInt8](repeating: UInt8(ascii: " "), count: Self.reservedBytes - out.count) }
        return out
    }

    /// The record in `bytes` (padding ignored); nil for none (an empty reservation) or one that
    /// cannot be read. Pure.
    public init?(bytes: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let at = (object["at"] as? NSNumber)?.int64Value, let pid = (object["pid"] as? NSNumber)?.int32Value,
              let values = object["values"] as? [String: String], let losses = RecordingLosses(values: values) else { return nil }
        self.init(atMicros: at, pid: pid, losses: losses)
    }

    /// Makes sure the file holds `reservedBytes` (the last stop's record kept, or an empty one),
    /// so the stop can write its own in place. Best effort: a full disk at the start leaves it as
    /// it is, and the stop writes a new file if it can.
    public static func reserve(_ home: TVHome) {
        let path = path(home)
        var info = stat()
        if stat(path, &info) == 0, Int(info.st_size) >= reservedBytes { return }
        let kept = FileManager.default.contents(atPath: path).flatMap { LastStopRecord(bytes: Array($0)) }
        var bytes = kept?.bytes ?? Array("{}".utf8)
        if bytes.count < reservedBytes { bytes += [UInt8](repeating: UInt8(ascii: " "), count: reservedBytes - bytes.count) }
        try? home.ensureDirectory(home.runDirectory)
        try? FileModes.writeAtomically(bytes, to: path, mode: 0o600)
    }

    /// Writes the record over the reserved file's bytes (no room taken), or, when it has none or
    /// the record does not fit, as a new file. Best effort: the stop's own sentence said it too.
    public func write(_ home: TVHome) {
        let path = Self.path(home)
        let bytes = bytes
        let fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 {
            defer { close(fd) }
            var info = stat()
            if fstat(fd, &info) == 0, Int(info.st_size) == bytes.count, info.st_uid == getuid(),
               bytes.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == bytes.count {
                _ = fdatasync(fd)
                return
            }
        }
        try? home.ensureDirectory(home.runDirectory)
        try? FileModes.writeAtomically(bytes, to: path, mode: 0o600)
    }

    /// The record the last session to stop left; nil when there is none.
    public static func read(_ home: TVHome) -> LastStopRecord? {
        FileManager.default.contents(atPath: path(home)).flatMap { LastStopRecord(bytes: Array($0)) }
    }

    /// What `tv status` and `tv diag` say of it with no session running: nil when that session
    /// saved everything in the data folder (what a shared store lacks, the stop said with the
    /// backfill that sends it). Pure.
    public var sentence: String? {
        let parts = RecordingPresentation.lossParts(losses)
        guard !parts.isEmpty else { return nil }
        let when = Units.utc(atMicros / 1_000_000)
        var sentence = "The last tv session (pid \(pid)), stopped \(when), could not save everything: "
            + parts.joined(separator: ", ") + "."
        if losses.flowsNotSaved > 0 {
            sentence += " Those flows are in no list: `tv flows` and `tv activity` cannot show them."
        }
        return sentence
    }

    /// The record for `--json` (`tv status`, `tv diag` with no session): `{"at", "pid",
    /// "flowsNotSaved", "flowUpdatesNotSaved", "contentTurnsNotSaved",
    /// "decryptedPacketsNotSaved", "sentence"}`. Pure.
    public var json: JSONValue {
        .object([("at", .int(atMicros)), ("pid", .int(Int64(pid))), ("flowsNotSaved", .int(Int64(losses.flowsNotSaved))),
                 ("flowUpdatesNotSaved", .int(Int64(losses.flowUpdatesNotSaved))),
                 ("contentTurnsNotSaved", .int(Int64(losses.contentTurnsNotSaved))),
                 ("decryptedPacketsNotSaved", .int(Int64(losses.decryptedPacketsNotSaved))),
                 ("sentence", sentence.map(JSONValue.string) ?? .null)])
    }
}
