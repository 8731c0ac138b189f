import Capture
import Recording
import TVHome

/// How `tv storage`, `tv storage apply`, `tv storage delete-everything` and a session's
/// retention passes speak.
public enum StoragePresentation {
    /// `tv storage`: each store with its size and its limit, then the total. `unsaved`: the live
    /// sessions not saving flows now, said under the history (its count lacks their newest).
    public static func lines(_ f: StorageFigures, now: Int64, unsaved: [UnsavedFlowsNotice] = []) -> [String] {
        var out: [String] = []
        let age = f.limits.historyMaxAge.map { "kept \(words(age: $0))" } ?? "kept with no age limit"
        var history = "History: \(Units.bytes(f.databaseBytes)), \(counted(f.flows, "connection"))"
        if let oldest = f.oldestFlowStart { history += " since \(Units.utc(oldest / 1_000_000, format: "%Y-%m-%d %H:%M UTC"))" }
        out.append(history + "; \(age).")
        for notice in unsaved { out.append("  " + notice.sentence) }
        out.append("  SQLite keeps the room of deleted rows for reuse: the file does not shrink after a cleanup"
                   + (f.freeBytes > 0 ? " (\(Units.bytes(f.freeBytes)) free inside it now; `tv storage compact` gives it back)." : "."))
        var captures = "Captures: \(Units.bytes(f.captureBytes)) in \(counted(f.captureFiles, "file"))"
        switch (f.limits.capturesMaxBytes, f.limits.capturesMaxAge) {
        case (nil, nil): captures += "; no limit is set, so nothing removes a capture unless you do."
        case let (bytes?, nil): captures += " of \(Units.bytes(bytes)); no expiry."
        case let (nil, age?): captures += ", no size limit; each kept \(words(age: age)) after it closes (the next one opens, or its session ends)."
        case let (bytes?, age?): captures += " of \(Units.bytes(bytes)); each kept \(words(age: age)) after it closes (the next one opens, or its session ends)."
        }
        out.append(captures)
        if let recording = f.recordingCapture {
            out.append("  \(CaptureFolder.fileName(Int64(recording))) is being recorded: it counts, and is never deleted while it is.")
        }
        if f.unknownCaptureFiles > 0 {
            out.append("  Besides, \(counted(f.unknownCaptureFiles, "capture file")) (\(Units.bytes(f.unknownCaptureBytes))) in the folder "
                       + "\(f.unknownCaptureFiles == 1 ? "is" : "are") not in this history (from a database moved aside, or copied in): "
                       + "tv leaves \(f.unknownCaptureFiles == 1 ? "it" : "them") alone and does not count \(f.unknownCaptureFiles == 1 ? "it" : "them"); delete \(f.unknownCaptureFiles == 1 ? "it" : "them") yourself when done.")
        }
        if f.decryptedCaptureFiles > 0 {
            out.append("Decrypted captures (capture.decrypted): \(Units.bytes(f.decryptedCaptureBytes)) in \(counted(f.decryptedCaptureFiles, "file")), "
                       + "the plaintext of inspected connections; under the captures' limits, after the packet captures.")
            if let recording = f.recordingDecryptedCapture {
                out.append("  \(recording) is being written by the running session: it counts, and is never deleted while it is.")
            }
        }
        // Said also when empty: each of the three stores with its size and its limit (issue 19).
        out.append("Decrypted content: \(Units.bytes(f.contentBytes)) of a fixed \(Units.bytes(f.limits.contentCeiling)); kept \(f.limits.contentExpiry.words).")
        out.append("Total: \(Units.bytes(f.totalBytes)).")
        return out
    }

    /// `tv storage --json`.
    public static func json(_ f: StorageFigures) -> JSONValue {
        func optional(_ n: Int64?) -> JSONValue { n.map { .int($0) } ?? .null }
        return .object([
            ("history", .object([("bytes", .int(f.databaseBytes)), ("freeBytes", .int(f.freeBytes)),
                                 ("flows", .int(Int64(f.flows))), ("oldestStart", optional(f.oldestFlowStart)),
                                 ("maxAgeMicros", optional(f.limits.historyMaxAge))])),
            ("captures", .object([("bytes", .int(f.captureBytes)), ("files", .int(Int64(f.captureFiles))),
                                  ("recording", f.recordingCapture.map { .string(CaptureFolder.fileName(Int64($0))) } ?? .null),
                                  ("notInHistory", .object([("files", .int(Int64(f.unknownCaptureFiles))), ("bytes", .int(f.unknownCaptureBytes))])),
                                  ("maxBytes", optional(f.limits.capturesMaxBytes)),
                                  ("maxAgeMicros", optional(f.limits.capturesMaxAge))])),
            ("decryptedCaptures", .object([("bytes", .int(f.decryptedCaptureBytes)), ("files", .int(Int64(f.decryptedCaptureFiles))),
                                           ("recording", f.recordingDecryptedCapture.map { .string($0) } ?? .null)])),
            ("content", .object([("bytes", .int(f.contentBytes)), ("turns", .int(Int64(f.contentTurns))),
                                 ("ceilingBytes", .int(f.limits.contentCeiling)), ("expiry", .string(f.limits.contentExpiry.text))])),
            ("totalBytes", .int(f.totalBytes)),
        ])
    }

    /// `tv storage apply`'s lines: the pass's report, or, on a full disk with nothing over the
    /// limits, one sentence: nothing to delete under them, and what frees room instead.
    public static func applied(_ outcome: StorageApplyOutcome) -> [String] {
        switch outcome {
        case let .applied(report):
            return self.report(report, automatic: false)
        case let .nothingOverLimitsOnFullDisk(holdings):
            return ["Nothing was deleted: the disk holding the data folder is full, and nothing in it is over the limits (history.maxAge, captures.maxBytes, captures.maxAge, content.expiry) to delete under them; \(DataFolderFull.wayOn(holdings))."]
        }
    }

    /// What a pass did. An automatic pass that deleted nothing says nothing (`automatic` true →
    /// empty); one the user asked for always answers.
    public static func report(_ r: StorageReport, automatic: Bool) -> [String] {
        // Kept past history.maxAge: said when the user asked (a trial's `tv storage apply` said
        // nothing of the audit evidence it kept); an automatic pass would repeat it every 10 minutes.
        let pastAge = automatic ? [] : keptPastAge(r)
        if r.deletedNothing {
            guard !automatic else { return [] }
            // Over the size limit with nothing deletable is not "within its limits" (a trial read
            // both sentences, one after the other).
            let over = stillOver(r) + pastAge
            return over.isEmpty ? ["Everything is within its limits; nothing was deleted."] : ["Nothing was deleted."] + over
        }
        var parts: [String] = []
        if r.flowsDeleted > 0 {
            var flows = counted(r.flowsDeleted, "connection")
            var with: [String] = []
            if r.packetsDeleted > 0 { with.append(counted(r.packetsDeleted, "packet row")) }
            if r.exchangesDeleted > 0 { with.append(counted(r.exchangesDeleted, "exchange")) }
            if r.flowContentRowsDeleted > 0 { with.append(counted(r.flowContentRowsDeleted, "content turn")) }
            if r.certificatesDeleted > 0 { with.append(counted(r.certificatesDeleted, "server certificate")) }
            if !with.isEmpty { flows += " (with " + with.joined(separator: ", ") + ")" }
            parts.append(flows)
        }
        if r.namesDeleted > 0 { parts.append(counted(r.namesDeleted, "name")) }
        if r.captureFilesDeleted > 0 {
            parts.append("\(counted(r.captureFilesDeleted, "capture file")) (\(Units.bytes(r.captureBytesFreed)))")
        }
        if r.decryptedCapturesDeleted > 0 {
            parts.append("\(counted(r.decryptedCapturesDeleted, "decrypted capture")) (\(Units.bytes(r.decryptedCaptureBytesFreed)))")
        }
        if r.content.rowsDeleted > 0 { parts.append(counted(r.content.rowsDeleted, "decrypted turn")) }
        if r.content.filesDeleted > 0 {
            parts.append("\(counted(r.content.filesDeleted, "content segment")) (\(Units.bytes(r.content.bytesFreed)))")
        }
        var out = parts.isEmpty ? [] : ["Deleted " + parts.joined(separator: ", ") + "."]
        if r.captureSecretsBlanked > 0 {
            out.append("Blanked the TLS secrets in \(counted(r.captureSecretsBlanked, "packet capture file")) older than content.expiry: the connections tv inspected in \(r.captureSecretsBlanked == 1 ? "it" : "them") no longer decrypt; the packets stay, under the captures' limits.")
        }
        if r.packetsMarkedGone > 0 {
            out.append(r.packetsMarkedGone == 1
                ? "1 packet row of a connection still in the history now says its bytes are gone with their capture file."
                : "\(counted(r.packetsMarkedGone, "packet row")) of connections still in the history now say their bytes are gone with their capture files.")
        }
        if let spared = r.sparedRecording {
            out.append("Spared \(CaptureFolder.fileName(Int64(spared))), which is being recorded.")
        }
        out += stillOver(r) + pastAge
        return out
    }

    /// The connections older than history.maxAge a pass kept, and why; none: no line.
    static func keptPastAge(_ r: StorageReport) -> [String] {
        let total = r.evidenceFlowsPastAge + r.openFlowsPastAge
        guard total > 0 else { return [] }
        var why: [String] = []
        if r.evidenceFlowsPastAge > 0 {
            let one = r.evidenceFlowsPastAge == 1
            why.append("\(Units.grouped(Int64(r.evidenceFlowsPastAge))) \(one ? "is" : "are") audit evidence, kept until \(one ? "its" : "their") audit session is deleted (`tv audit delete ID`)")
        }
        if r.openFlowsPastAge > 0 {
            let one = r.openFlowsPastAge == 1
            why.append("\(Units.grouped(Int64(r.openFlowsPastAge))) \(one ? "is" : "are") still open, kept until \(one ? "it ends" : "they end")")
        }
        return ["Kept \(counted(total, "connection")) older than history.maxAge: " + why.joined(separator: "; ") + "."]
    }

    /// What `tv storage delete-everything` says: what went, then exactly what stayed and where:
    /// the capture file being recorded, connections still open, a content segment another tv is
    /// writing, and a write-ahead log (`databaseFile`-wal) that could not be emptied.
    public static func deletedEverything(_ r: StorageReport, databaseFile: String, session: Bool) -> [String] {
        var out = r.deletedNothing && r.sparedRecording == nil ? ["There was nothing to delete."] : report(r, automatic: false)
        if r.pinsForgotten > 0 {
            out.append("Forgot what `tv pinned` remembered (\(counted(r.pinsForgotten, "entry"))): the next connection of those clients is inspected again, if inspection is on.")
        }
        if r.openFlowsKept > 0 {
            out.append("\(counted(r.openFlowsKept, "connection")) still open \(r.openFlowsKept == 1 ? "was" : "were") kept: \(r.openFlowsKept == 1 ? "its" : "their") session is still writing \(r.openFlowsKept == 1 ? "it" : "them").")
        }
        if let spared = r.content.spared {
            // The running tv run deleted with its own segment closed first: the one it writes now
            // began after (a trial was told of a tv exec that was not running).
            out.append(session
                ? "content/\(SegmentName.fileName(spared.sequence)) (\(Units.bytes(spared.bytes))) is being written: the running session's new segment holds only connections made since the deletion (a tv exec's would hold what it decrypted until it ends; run this command again then)."
                : "content/\(SegmentName.fileName(spared.sequence)) (\(Units.bytes(spared.bytes))) is being written by a running session (a tv exec) and still holds what it decrypted; run this command again after it ends.")
        }
        if r.evidenceFlowsKept > 0 || r.evidenceCapturesKept > 0 || r.evidenceDecryptedCapturesKept > 0 {
            var kept: [String] = []
            if r.evidenceFlowsKept > 0 { kept.append(counted(r.evidenceFlowsKept, "connection") + (r.evidenceFlowsKept == 1 ? " with its content" : " with their content")) }
            if r.evidenceCapturesKept > 0 { kept.append(counted(r.evidenceCapturesKept, "capture file")) }
            if r.evidenceDecryptedCapturesKept > 0 { kept.append(counted(r.evidenceDecryptedCapturesKept, "decrypted capture")) }
            out.append("Kept as audit evidence until their audit session is deleted (`tv audit delete ID`, then the limits): " + kept.joined(separator: ", ") + ".")
            // A capture file is kept whole: it also holds what it recorded of other connections
            // (a trial found deleted connections' requests in a decrypted capture kept so).
            if r.evidenceCapturesKept > 0 || r.evidenceDecryptedCapturesKept > 0 {
                out.append("Each evidence capture file is kept whole, so it still holds what it recorded of other connections in the same hours"
                           + (r.evidenceDecryptedCapturesKept > 0 ? " (in a decrypted capture, their plaintext)" : "") + ", deleted connections' included.")
            }
        }
        if let spared = r.sparedDecryptedCapture {
            out.append("captures/\(spared), the decrypted capture the running session writes, still holds the plaintext of what it inspected; run this command again after the session ends.")
        }
        if r.walBytesLeft > 0 {
            out.append("\(databaseFile)-wal (\(Units.bytes(r.walBytesLeft))) may still hold copies of deleted rows because another tv was reading the history; run this command again when no other tv command is running.")
        } else if session {
            var still: [String] = []
            if r.sparedRecording != nil { still.append("the packets of the capture file being recorded") }
            if r.sparedDecryptedCapture != nil { still.append("the decrypted capture being written") }
            if r.evidenceCapturesKept > 0 || r.evidenceDecryptedCapturesKept > 0 { still.append("the evidence capture files kept whole") }
            out.append("The running session closed its open content file first, and the history's write-ahead log was emptied: "
                       + (still.isEmpty ? "nothing that was deleted is left in the data folder."
                                        : "nothing that was deleted is left in the data folder but " + still.joined(separator: " and ") + "."))
        }
        return out
    }

    static func stillOver(_ r: StorageReport) -> [String] {
        switch r.capturesStillOver {
        case .recording?:
            return ["The captures are still over their size limit because of the file being recorded; it is deleted once it closes (when its session stops or the file rotates)."]
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
        let decrypted = f.decryptedCaptureFiles - (f.recordingDecryptedCapture == nil ? 0 : 1)
        let files = counted(f.captureFiles - (f.recordingCapture == nil ? 0 : 1), "capture file")
            + (decrypted > 0 ? ", \(counted(decrypted, "decrypted capture"))" : "")
        var out = ["This deletes the whole history (\(counted(f.flows, "connection")), with their packets, names and exchanges), "
                   + "\(files) and all decrypted content (\(Units.bytes(f.contentBytes))). None of it comes back."]
        if let recording = f.recordingCapture {
            out.append("\(CaptureFolder.fileName(Int64(recording))) is being recorded and is spared.")
        }
        if let recording = f.recordingDecryptedCapture {
            out.append("\(recording) is being written by the running session and is spared.")
        }
        // Files the history does not describe stay (`CaptureFiles.unknown`): said, as they may
        // hold packets and TLS secrets someone expects gone (a re-check was not told).
        if f.unknownCaptureFiles > 0 {
            out.append("\(counted(f.unknownCaptureFiles, "capture file")) (\(Units.bytes(f.unknownCaptureBytes))) in the folder "
                       + "\(f.unknownCaptureFiles == 1 ? "is" : "are") not in this history and \(f.unknownCaptureFiles == 1 ? "stays" : "stay"): "
                       + "tv deletes only what it recorded here; remove \(f.unknownCaptureFiles == 1 ? "it" : "them") yourself from the captures folder.")
        }
        return out
    }

    /// An age in the largest unit it is a whole number of: `2 weeks`, `30 days`, `12 hours`,
    /// `15 minutes`, `90 seconds`.
    static func words(age us: Int64) -> String {
        let seconds = us / 1_000_000
        for (size, unit) in [(Int64(604_800), "week"), (86_400, "day"), (3_600, "hour"), (60, "minute")] where seconds % size == 0 {
            return counted(Int(seconds / size), unit)
        }
        return counted(Int(seconds), "second")
    }

    static func counted(_ n: Int, _ word: String) -> String {
        "\(Units.grouped(Int64(n))) \(word)\(n == 1 ? "" : "s")"
    }
}
