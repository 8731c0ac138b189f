import Recording
import TVHome

/// How `tv content status` and `tv content delete` speak about what decrypted content occupies.
public enum ContentUsagePresentation {
    /// The status lines.
    /// - Parameters:
    ///   - captures: the decrypted captures there are (content too: the plaintext as packets).
    ///   - secrets: the packet captures holding TLS secrets (their inspected connections read
    ///     as plainly: a trial's "No decrypted content is kept." beside both).
    public static func lines(_ usage: ContentUsage, captures: DecryptedCapturesSummary = DecryptedCapturesSummary(),
                             secrets: CaptureSecretsSummary = CaptureSecretsSummary()) -> [String] {
        var out: [String] = []
        if usage.turns == 0 {
            out.append(captures.files + secrets.files == 0 ? "No decrypted content is kept." : "No decrypted turns are kept.")
        } else {
            out.append("\(counted(usage.turns, "turn")) of \(counted(usage.flows, "flow")): \(Units.bytes(usage.keptBytes)) kept.")
        }
        if usage.goneTurns > 0 {
            out.append("\(usage.goneTurns == usage.turns ? "All of them" : "\(usage.goneTurns) of them") point into segment files that are no longer in the content folder (deleted or moved): their figures stay, their bytes cannot be read.")
        }
        if !usage.segments.isEmpty {
            out.append("On disk: \(Units.bytes(usage.fileBytes)) in \(usage.segments.count) segment file\(usage.segments.count == 1 ? "" : "s"), under a fixed ceiling of \(Units.bytes(ContentRetentionPlanner.ceilingBytes)); the oldest go first when it is reached.")
        }
        if let writing = usage.beingWritten {
            out.append("A running session is writing \(SegmentName.fileName(writing.sequence)) (\(Units.bytes(writing.diskBytes))).")
        }
        let predating = usage.segments.filter { usage.predating.contains($0.sequence) }
        if !predating.isEmpty {
            let bytes = predating.reduce(Int64(0)) { $0 + $1.diskBytes }
            out.append("\(predating.count) of them (\(Units.bytes(bytes))) predate this flow database, which has no index of them: they are kept untouched for a database moved aside, and `tv content delete` removes them.")
        }
        if captures.files > 0 {
            out.append("\(counted(captures.files, "decrypted capture")) (\(Units.bytes(captures.bytes))) hold\(captures.files == 1 ? "s" : "") the plaintext of inspected connections as packets (capture.decrypted); `tv content delete` deletes \(captures.files == 1 ? "it" : "them").")
        }
        if secrets.files > 0 {
            out.append(secretsLine(secrets) + "; `tv content delete` blanks those secrets (the packets stay, encrypted).")
        }
        return out
    }

    /// "2 packet capture files hold the TLS secrets of the connections tv inspected in them:
    /// Wireshark reads what those said".
    static func secretsLine(_ secrets: CaptureSecretsSummary) -> String {
        "\(counted(secrets.files, "packet capture file")) hold\(secrets.files == 1 ? "s" : "") the TLS secrets of the connections tv inspected in \(secrets.files == 1 ? "it" : "them"): Wireshark reads what those said"
    }

    /// What `tv content delete` says before acting.
    /// - Parameters:
    ///   - captures: the decrypted captures there are (they go too; the ones being written stay).
    ///   - secrets: the packet captures holding TLS secrets (blanked; the one being recorded stays).
    ///   - bySession: the running session deletes (it closes the segment it writes first), so
    ///     no segment is spared.
    public static func deletionWarning(_ usage: ContentUsage, captures: DecryptedCapturesSummary = DecryptedCapturesSummary(),
                                       secrets: CaptureSecretsSummary = CaptureSecretsSummary(), bySession: Bool = false) -> [String] {
        // The ones being written stay (said below): only the closed ones are counted as going.
        let closed = DecryptedCapturesSummary(files: captures.files - captures.recording.count,
                                              bytes: captures.bytes - captures.recordingBytes, recording: [])
        // Only what there is (it read "0 turns of 0 flows, 0 B in 0 segment files" before the
        // secrets it blanked: a re-check).
        var parts: [String] = []
        if usage.turns > 0 || !usage.segments.isEmpty {
            parts.append("\(counted(usage.turns, "turn")) of \(counted(usage.flows, "flow")), \(Units.bytes(usage.fileBytes)) in \(usage.segments.count) segment file\(usage.segments.count == 1 ? "" : "s")")
        }
        if closed.files > 0 { parts.append("the \(counted(closed.files, "closed decrypted capture")) (\(Units.bytes(closed.bytes)))") }
        let blanks = secrets.files > secrets.recording.count
            ? "it blanks the TLS secrets in \(counted(secrets.files - secrets.recording.count, "packet capture file")) (the packets stay, encrypted)" : nil
        let deletes = parts.isEmpty ? nil : "This deletes all decrypted content: " + parts.joined(separator: ", and ")
        let head = [deletes, blanks.map { deletes == nil ? "This " + $0.dropFirst(3) : "and " + $0 }].compactMap { $0 }.joined(separator: "; ")
        var out = [(head.isEmpty ? "This deletes all decrypted content" : head) + ". The flows stay in the history; what was said inside them does not come back."]
        if usage.evidenceFlows > 0 {
            let one = usage.evidenceFlows == 1
            // The key log stays evidence: a bundle still decrypts the session's packets with it.
            // What a running session's decrypted capture holds stays until it ends (a trial's
            // bundle carried it after being told "none").
            let carries = captures.recording.isEmpty ? "none" : "none but what the decrypted capture being written holds (below)"
            out.append("\(Units.grouped(Int64(usage.evidenceFlows))) of those flows \(one ? "is" : "are") evidence of an audit session: \(one ? "its" : "their") content goes too, and a bundle of that session will carry \(carries) (retention and `tv storage delete-everything` spare it; this does not); the session's TLS key log stays evidence until `tv audit delete`, and with the session's packets it still decrypts them.")
        }
        if bySession {
            out.append("The running session deletes it: it closes the segment it is writing first, so nothing of it stays.")
        } else if let writing = usage.beingWritten {
            out.append("The segment a running session is writing (\(SegmentName.fileName(writing.sequence)), \(Units.bytes(writing.diskBytes))) is spared: its index rows go now, and its bytes at the first sweep after the session moves to a new segment.")
        }
        if !captures.recording.isEmpty {
            out.append(sparedCaptures(captures.recording, before: true))
        }
        if !secrets.recording.isEmpty { out.append(sparedSecrets(secrets.recording, before: true)) }
        return out
    }

    /// What `tv content delete` says after acting.
    /// - Parameters:
    ///   - captures: the decrypted captures deleted, and the names spared.
    ///   - secrets: the packet captures whose secrets were blanked, and the names spared.
    public static func deletionReport(_ report: ContentSweepReport, captures: DecryptedCapturesSummary = DecryptedCapturesSummary(),
                                      secrets: CaptureSecretsSummary = CaptureSecretsSummary()) -> [String] {
        var out = ["Deleted \(counted(report.rowsDeleted, "turn")) and \(report.filesDeleted) segment file\(report.filesDeleted == 1 ? "" : "s") (\(Units.bytes(report.bytesFreed)))"
                   + (captures.files > 0 ? ", and \(counted(captures.files, "decrypted capture")) (\(Units.bytes(captures.bytes)))" : "")
                   + (secrets.files > 0 ? "; blanked the TLS secrets in \(counted(secrets.files, "packet capture file"))" : "") + "."]
        if let spared = report.spared {
            out.append("Spared \(SegmentName.fileName(spared.sequence)) (\(Units.bytes(spared.diskBytes))), which a running session is writing; nothing in the index points at it any more.")
        }
        if !captures.recording.isEmpty { out.append(sparedCaptures(captures.recording, before: false)) }
        if !secrets.recording.isEmpty { out.append(sparedSecrets(secrets.recording, before: false)) }
        return out
    }

    /// The packet captures a session is recording, whose secrets no delete blanks.
    static func sparedSecrets(_ names: [String], before: Bool) -> String {
        let list = names.joined(separator: ", ")
        return (before ? "The TLS secrets in the capture being recorded (\(list)) stay" : "Left the TLS secrets in the capture being recorded (\(list))")
            + ": stop the session (or `tv captures rotate`) and run `tv content delete` again to blank them."
    }

    /// The decrypted captures a session is writing, which no delete touches.
    static func sparedCaptures(_ names: [String], before: Bool) -> String {
        let list = names.joined(separator: ", ")
        return (before ? "The decrypted capture being written (\(list)) stays" : "Spared the decrypted capture being written (\(list))")
            + ": it holds what inspected connections said in that session; stop the session and run `tv content delete` again to delete it."
    }

    /// "1 turn", "2 turns", "1,234 flows".
    static func counted(_ n: Int, _ word: String) -> String {
        "\(Units.grouped(Int64(n))) \(word)\(n == 1 ? "" : "s")"
    }

    /// Usage as JSON (`evidenceFlows`: of `flows`, those audit sessions hold; a segment's
    /// `bytes` is the space it takes, which `fileBytes` adds up, and `length` its length, holes
    /// punched for deleted turns included).
    public static func json(_ usage: ContentUsage, captures: DecryptedCapturesSummary = DecryptedCapturesSummary(),
                            secrets: CaptureSecretsSummary = CaptureSecretsSummary()) -> JSONValue {
        .object([
            ("decryptedCaptures", .object([("files", .int(Int64(captures.files))), ("bytes", .int(captures.bytes))])),
            ("captureSecrets", .object([("files", .int(Int64(secrets.files))), ("blocks", .int(Int64(secrets.blocks)))])),
            ("turns", .int(Int64(usage.turns))), ("flows", .int(Int64(usage.flows))), ("evidenceFlows", .int(Int64(usage.evidenceFlows))),
            ("keptBytes", .int(usage.keptBytes)),
            ("fileBytes", .int(usage.fileBytes)), ("ceilingBytes", .int(ContentRetentionPlanner.ceilingBytes)),
            ("segments", .array(usage.segments.map { segment in
                .object([("file", .string(SegmentName.fileName(segment.sequence))), ("bytes", .int(segment.diskBytes)), ("length", .int(segment.bytes)),
                         ("beingWritten", .bool(segment.isBeingWritten)),
                         ("predatesDatabase", .bool(usage.predating.contains(segment.sequence)))])
            })),
        ])
    }
}
