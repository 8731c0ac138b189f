import Recording
import TVHome

/// How `tv storage`, `tv storage apply`, `tv storage delete-everything` and a session's
/// retention passes speak.
public enum StoragePresentation {
    /// `tv storage`: each store with its size and its limit, then the total.
    public static func lines(_ f: StorageFigures, now: Int64) -> [String] {
        var out: [String] = []
        let age = f.limits.historyMaxAge.map { "kept \(words(age: $0))" } ?? "kept with no age limit"
        var history = "History: \(Units.bytes(f.databaseBytes)), \(counted(f.flows, "connection"))"
        if let oldest = f.oldestFlowStart { history += " since \(Units.utc(oldest / 1_000_000, format: "%Y-%m-%d %H:%M UTC"))" }
        out.append(history + "; \(age).")
        out.append("  SQLite keeps the room of deleted rows for reuse: the file does not shrink after a cleanup"
                   + (f.freeBytes > 0 ? " (\(Units.bytes(f.freeBytes)) free inside it now; `tv storage compact` gives it back)." : "."))
        // In decimal units, as captures.maxBytes is typed (2GB), so the two figures compare at a glance.
        var captures = "Captures: \(decimal(f.captureBytes)) in \(counted(f.captureFiles, "file"))"
        switch (f.limits.capturesMaxBytes, f.limits.capturesMaxAge) {
        case (nil, nil): captures += "; no limit is set, so nothing removes a capture unless you do."
        case let (bytes?, nil): captures += " of \(decimal(bytes)); no expiry."
        case let (nil, age?): captures += ", no size limit; each kept \(words(age: age)) after its last packet."
        case let (bytes?, age?): captures += " of \(decimal(bytes)); each kept \(words(age: age)) after its last packet."
        }
        out.append(captures)
        if let recording = f.recordingCapture {
            out.append("  \(CaptureFiles.fileName(recording)) is being recorded: it counts, and is never deleted while it is.")
        }
        if f.contentBytes > 0 || f.contentTurns > 0 {
            out.append("Decrypted content: \(Units.bytes(f.contentBytes)) of a fixed \(Units.bytes(f.limits.contentCeiling)); kept \(f.limits.contentExpiry.words).")
        }
        out.append("Total: \(Units.bytes(f.totalBytes)).")
        return out
    }

    /// `tv storage --json`.
    public static func json(_ f: StorageFigures) -> JSONValue {
        func optional(_ n: Int64?) -> JSONValue { n.map { .int($0) } ?? .null }
        return .object([
            ("history", .object([("bytes", .int(f.databaseBytes)), ("freeBytes", .int(f.freeBytes)),
                                 ("flows", .int(Int64(f.flows))), ("oldestStart", optional(f.oldestFlowStart)),
                                 ("maxAge", .string(StorageLimitText.ageText(f.limits.historyMaxAge)))])),
            ("captures", .object([("bytes", .int(f.captureBytes)), ("files", .int(Int64(f.captureFiles))),
                                  ("recording", f.recordingCapture.map { .string(CaptureFiles.fileName($0)) } ?? .null),
                                  ("maxBytes", optional(f.limits.capturesMaxBytes)),
                                  ("maxAge", .string(StorageLimitText.ageText(f.limits.capturesMaxAge)))])),
            ("content", .object([("bytes", .int(f.contentBytes)), ("turns", .int(Int64(f.contentTurns))),
                                 ("ceilingBytes", .int(f.limits.contentCeiling)), ("expiry", .string(f.limits.contentExpiry.text))])),
            ("totalBytes", .int(f.totalBytes)),
        ])
    }

    /// What a pass did. An automatic pass that deleted nothing says nothing (`automatic` true →
    /// empty); one the user asked for always answers.
    public static func report(_ r: StorageReport, automatic: Bool) -> [String] {
        if r.deletedNothing {
            guard !automatic else { return [] }
            var out = ["Everything is within its limits; nothing was deleted."]
            out += stillOver(r)
            return out
        }
        var parts: [String] = []
        if r.flowsDeleted > 0 {
            var flows = counted(r.flowsDeleted, "connection")
            var with: [String] = []
            if r.packetsDeleted > 0 { with.append(counted(r.packetsDeleted, "packet row")) }
            if r.exchangesDeleted > 0 { with.append(counted(r.exchangesDeleted, "exchange")) }
            if r.flowContentRowsDeleted > 0 { with.append(counted(r.flowContentRowsDeleted, "content turn")) }
            if !with.isEmpty { flows += " (with " + with.joined(separator: ", ") + ")" }
            parts.append(flows)
        }
        if r.namesDeleted > 0 { parts.append(counted(r.namesDeleted, "name")) }
        if r.captureFilesDeleted > 0 {
            parts.append("\(counted(r.captureFilesDeleted, "capture file")) (\(decimal(r.captureBytesFreed)))")
        }
        if r.content.rowsDeleted > 0 { parts.append(counted(r.content.rowsDeleted, "decrypted turn")) }
        if r.content.filesDeleted > 0 {
            parts.append("\(counted(r.content.filesDeleted, "content segment")) (\(Units.bytes(r.content.bytesFreed)))")
        }
        var out = ["Deleted " + parts.joined(separator: ", ") + "."]
        if r.packetsMarkedGone > 0 {
            out.append(r.packetsMarkedGone == 1
                ? "1 packet row of a connection still in the history now says its bytes are gone with their capture file."
                : "\(counted(r.packetsMarkedGone, "packet row")) of connections still in the history now say their bytes are gone with their capture files.")
        }
        if let spared = r.sparedRecording {
            out.append("Spared \(CaptureFiles.fileName(spared)), which is being recorded.")
        }
        out += stillOver(r)
        return out
    }

    static func stillOver(_ r: StorageReport) -> [String] {
        switch r.capturesStillOver {
        case .recording?:
            return ["The captures are still over their size limit because of the file being recorded; it is deleted once a new capture file is started."]
        case .evidence?:
            return ["The captures are still over their size limit because what is left is audit evidence, kept until its audit session is deleted."]
        case .evidenceUnknown?:
            return ["No capture was deleted: which captures are audit evidence cannot be read, and deleting evidence cannot be undone."]
        case nil:
            return []
        }
    }

    /// What delete-everything says before acting: what is lost, and what is spared.
    public static func deletionWarning(_ f: StorageFigures) -> [String] {
        var out = ["This deletes the whole history (\(counted(f.flows, "connection")), with their packets, names and exchanges), "
                   + "\(counted(f.captureFiles - (f.recordingCapture == nil ? 0 : 1), "capture file")) and all decrypted content (\(Units.bytes(f.contentBytes))). None of it comes back."]
        if let recording = f.recordingCapture {
            out.append("\(CaptureFiles.fileName(recording)) is being recorded and is spared.")
        }
        return out
    }

    /// Bytes in decimal steps: `512 B`, `1.5 kB`, `35.0 MB`, `2.0 GB` (one decimal below 100 units).
    static func decimal(_ n: Int64) -> String {
        if n < 1_000 { return "\(n) B" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(n) / 1_000
        var index = 0
        while value >= 1_000 && index < units.count - 1 { value /= 1_000; index += 1 }
        if value >= 100 { return "\(Int(value.rounded())) \(units[index])" }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[index])"
    }

    static func words(age us: Int64) -> String {
        let hours = us / 3_600_000_000
        if hours % 168 == 0 { return hours == 168 ? "1 week" : "\(hours / 168) weeks" }
        if hours % 24 == 0 { return hours == 24 ? "1 day" : "\(hours / 24) days" }
        return hours == 1 ? "1 hour" : "\(hours) hours"
    }

    static func counted(_ n: Int, _ word: String) -> String {
        "\(Units.grouped(Int64(n))) \(word)\(n == 1 ? "" : "s")"
    }
}
