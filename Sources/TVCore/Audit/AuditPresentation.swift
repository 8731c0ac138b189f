import FlowStore
import Foundation
import TVHome

/// Every sentence and JSON shape of `tv audit …` and of the recording strip (`tv status`,
/// `tv top`, the run banner), from the audit records (pure).
public enum AuditPresentation {
    // MARK: JSON shapes (the web and PostgreSQL parts read the same)

    /// `{"id", "project", "note", "started", "ended" (null while recording), "settings"}`.
    public static func json(_ s: AuditSession) -> JSONValue {
        .object([("id", .int(s.id)), ("project", .string(s.projectName)), ("note", .string(s.note)),
                 ("started", .int(s.started)), ("ended", s.ended.map { .int($0) } ?? .null),
                 ("settings", settingsJSON(s.settings))])
    }

    /// `{"id", "session", "time", "text"}`.
    public static func json(_ m: AuditMarker) -> JSONValue {
        .object([("id", .int(m.id)), ("session", .int(m.sessionID)), ("time", .int(m.time)), ("text", .string(m.text))])
    }

    /// `{"id", "name", "note", "created", "sessions"}`.
    public static func json(_ p: AuditProject) -> JSONValue {
        .object([("id", .int(p.id)), ("name", .string(p.name)), ("note", .string(p.note)), ("created", .int(p.created)),
                 ("sessions", .int(Int64(p.sessions)))])
    }

    /// A session's settings text (a flat JSON object of strings) as a JSON value; `{}` when it
    /// is not one.
    public static func settingsJSON(_ text: String) -> JSONValue {
        .object(settings(text).sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
    }

    /// A session's settings text read as name → value.
    public static func settings(_ text: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]) ?? [:]
    }

    /// The settings a session records: name → value, as a JSON object's text (sorted keys).
    public static func settingsText(_ values: [String: String]) -> String {
        JSONValue.object(values.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }).serialized()
    }

    /// The roots a session's runs minted from (hex), in the order they took over: `caSHA256`,
    /// then each switch `AuditRecording.noteRoot` recorded (`caSHA256s`; a root used again
    /// appears again); empty when no run recorded one.
    public static func roots(_ settings: [String: String]) -> [String] {
        let listed = settings["caSHA256s"].map { $0.split(separator: ",").map(String.init) } ?? []
        guard let first = settings["caSHA256"] else { return listed }
        return listed.first == first ? listed : [first] + listed
    }

    // MARK: Sentences

    /// tv's marker when a session's runs start minting from another root.
    /// The marker of a `tv run` or `tv exec` that began recording into a session whose settings
    /// are an earlier run's: its own settings (`AuditRecording.settingsKeys`, sorted; the CA's
    /// are said by `rootChanged`).
    public static func runJoined(_ values: [String: String]) -> String {
        let said = values.filter { $0.key != "caSHA256" && $0.key != "modeLabel" && $0.key != "pid" }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(TerminalText.line($0.value))" }.joined(separator: " ")
        return "tv: the tv session of pid \(TerminalText.line(values["pid"] ?? "?")) began recording into this audit session: \(said) (the audit session's settings, as `tv audit show` lists them, are the first tv session's)"
    }

    public static func rootChanged(_ sha256: String) -> String {
        "tv: leaves are minted from another root from here on (SHA-256 \(sha256)); the bundle's caSHA256s lists every root of this session"
    }

    /// The strip shown while a session records: `● Audit: project 'app-review', session 3, recording for 4m 12s, 2 markers`.
    public static func strip(_ s: AuditSession, markers: Int, now: Int64) -> String {
        "● Audit: project '\(TerminalText.line(s.projectName))', session \(s.id), recording for "
            + Units.duration(microseconds: max(0, now - s.started)) + (markers == 0 ? "" : ", \(markers) marker\(markers == 1 ? "" : "s")")
    }

    /// `tv audit start`'s sentence: the session, and what the running tv sessions (`told`: their
    /// answers, `AuditKeysNotifier`) record into it: their new flows, and both legs' TLS secrets
    /// from those that inspect and now follow its key log; which do not, and why.
    public static func started(_ s: AuditSession, told: [AuditKeysDelivery]) -> String {
        let head = "Session \(s.id) of project '\(TerminalText.line(s.projectName))' is recording from \(Units.utcMillis(s.started)): "
        guard !told.isEmpty else {
            return head + "flows any tv session writes from now belong to it (with both legs' TLS secrets while it inspects); start `tv run` or `tv exec` to record."
        }
        let one = told.count == 1
        var plain = 0
        var failures: [String] = []
        for delivery in told {
            switch delivery.outcome {
            case .following(s.id, true): break
            case .following(s.id, false): plain += 1
            case .following(let other, _): failures.append(other.map { "it follows session \($0)" } ?? "it follows no audit session")
            case .failed(let reason): failures.append(reason)
            }
        }
        var text = head + (one ? "the running session's" : "the \(told.count) running tv sessions'") + " new flows belong to it from now"
        if plain == 0 && failures.isEmpty { return text + ", with both legs' TLS secrets in its key log." }
        text += "."
        if plain > 0 {
            text += one ? " It does not inspect TLS now, so it records no TLS secrets until inspection is on."
                        : " \(plain) of them \(plain == 1 ? "does" : "do") not inspect TLS now, so \(plain == 1 ? "it records" : "they record") no TLS secrets until inspection is on."
        }
        if !failures.isEmpty {
            let reasons = failures.map { TerminalText.line($0) }.joined(separator: "; ")
            text += (one ? " It" : " \(failures.count) of them") + " could not be told to write TLS secrets into the session's key log ("
                + reasons + "); restart " + (failures.count == 1 ? "it" : "them") + " to have them there."
        }
        return text
    }

    /// `tv audit stop`'s sentence: what the session holds, and the running tv sessions (`told`)
    /// that could not be told to stop writing TLS secrets into its key log, if any.
    public static func stopped(_ s: AuditSession, summary: AuditSessionSummary, told: [AuditKeysDelivery] = []) -> String {
        var text = "Session \(s.id) of project '\(TerminalText.line(s.projectName))' stopped after "
            + Units.duration(microseconds: max(0, (s.ended ?? s.started) - s.started))
            + ": \(summary.flows) flow\(summary.flows == 1 ? "" : "s"), \(summary.markers) marker\(summary.markers == 1 ? "" : "s"). `tv audit bundle \(s.id) -o FILE` writes its evidence."
        let stuck = told.compactMap { delivery -> String? in
            switch delivery.outcome {
            case .following(nil, _): return nil
            case .following(let other?, _): return "it follows session \(other)"
            case .failed(let reason): return reason
            }
        }
        if !stuck.isEmpty {
            text += " \(stuck.count) running tv session\(stuck.count == 1 ? "" : "s") could not be told to stop writing TLS secrets into its key log ("
                + stuck.map { TerminalText.line($0) }.joined(separator: "; ") + "); secrets of \(stuck.count == 1 ? "its" : "their") later handshakes may be in the bundle until \(stuck.count == 1 ? "it stops" : "they stop")."
        }
        return text
    }

    public static func marked(_ m: AuditMarker) -> String {
        "Marked session \(m.sessionID) at \(Units.utcMillis(m.time)): \(TerminalText.line(m.text))"
    }

    /// One line per project.
    public static func projects(_ list: [AuditProject]) -> [String] {
        guard !list.isEmpty else { return ["No audit projects yet; `tv audit project new NAME` makes one."] }
        return list.map { p in
            "\(TerminalText.line(p.name))  \(p.sessions) session\(p.sessions == 1 ? "" : "s")  created \(Units.utc(p.created / 1_000_000))"
                + (p.note.isEmpty ? "" : "  — \(TerminalText.line(p.note))")
        }
    }

    /// One line per session; `project`: the one they were asked of, named in the empty list's
    /// command (it said PROJECT beside a named project: a trial).
    public static func sessions(_ list: [AuditSession], now: Int64, project: String? = nil) -> [String] {
        guard !list.isEmpty else {
            return ["No audit sessions; `tv audit start \(project.map(ShellWord.quote) ?? "PROJECT")` starts one."]
        }
        return list.map { s in
            let span = s.ended.map { "\(Units.utcMillis(s.started)) – \(Units.utcMillis($0))" } ?? "\(Units.utcMillis(s.started)) – recording"
            return "\(s.id)  \(TerminalText.line(s.projectName))  \(span)  \(Units.duration(microseconds: max(0, (s.ended ?? now) - s.started)))"
                + (s.note.isEmpty ? "" : "  — \(TerminalText.line(s.note))")
        }
    }

    /// `tv audit show SESSION`.
    public static func show(_ s: AuditSession, summary: AuditSessionSummary, markers: [AuditMarker], now: Int64) -> [String] {
        var lines = ["Session \(s.id) of project '\(TerminalText.line(s.projectName))'" + (s.note.isEmpty ? "" : ": \(TerminalText.line(s.note))")]
        lines.append("  span      \(Units.utcMillis(s.started)) – " + (s.ended.map(Units.utcMillis) ?? "recording now")
                     + " (\(Units.duration(microseconds: max(0, (s.ended ?? now) - s.started))))")
        let values = AuditPresentation.settings(s.settings)
        if !values.isEmpty {
            lines.append("  settings  " + values.sorted { $0.key < $1.key }.map { "\($0.key)=\(TerminalText.line($0.value))" }.joined(separator: " "))
        }
        lines.append("  flows     \(summary.flows) (\(Units.bytes(summary.bytesUp)) up, \(Units.bytes(summary.bytesDown)) down)")
        lines.append("  packets   \(summary.packets) in \(summary.captures.count) capture file\(summary.captures.count == 1 ? "" : "s")")
        lines.append("  content   \(summary.contentTurns) kept turn\(summary.contentTurns == 1 ? "" : "s")")
        if !summary.hosts.isEmpty {
            lines.append("  hosts     " + summary.hosts.prefix(10).map { "\(TerminalText.line($0.name ?? "")) (\($0.flows))" }.joined(separator: ", ")
                         + (summary.hosts.count > 10 ? ", … \(summary.hosts.count) in all" : ""))
        }
        if !summary.programs.isEmpty {
            lines.append("  programs  " + summary.programs.prefix(10).map { "\($0.name.map(TerminalText.line) ?? "not known") (\($0.flows))" }.joined(separator: ", "))
        }
        lines.append("  markers   \(markers.count)")
        for m in markers { lines.append("    \(Units.utcMillis(m.time))  \(TerminalText.line(m.text))") }
        return lines
    }

    /// What deleting session `s` takes, asked before it is done.
    public static func deletionQuestion(_ s: AuditSession, summary: AuditSessionSummary) -> String {
        "Deleting session \(s.id) of project '\(TerminalText.line(s.projectName))' removes its record, its \(summary.markers) marker\(summary.markers == 1 ? "" : "s") and its TLS key log (both legs' secrets), "
            + "and its \(summary.flows) flow\(summary.flows == 1 ? "" : "s"), \(summary.captures.count) capture file\(summary.captures.count == 1 ? "" : "s") and \(summary.contentTurns) kept turn\(summary.contentTurns == 1 ? "" : "s") stop being evidence: retention may delete them from then on."
    }

    public static func deleted(_ d: AuditDeletion) -> String {
        "Deleted session \(d.session.id) and \(d.markers) marker\(d.markers == 1 ? "" : "s"); \(d.flowsReleased) flow\(d.flowsReleased == 1 ? " is" : "s are") no longer evidence."
    }

    /// Said once when a live session whose `tv run --audit` is gone is closed:
    /// `Session 3 of project 'app' was left recording by a tv run that is gone; closed at 2026-12-01 14:05:03.120 UTC, its last flow or marker.`
    public static func closedAbandoned(_ s: AuditSession) -> String {
        "Session \(s.id) of project '\(TerminalText.line(s.projectName))' was left recording by a tv run that is gone; closed at \(Units.utcMillis(s.ended ?? s.started)), its last flow or marker."
    }

    /// A marker's line among flow rows: `  ── 2026-12-01 14:05:03.120 UTC  marker: opened the login screen (session 3)`.
    public static func markerLine(_ m: AuditMarker) -> String {
        "  ── \(Units.utcMillis(m.time))  marker: \(TerminalText.line(m.text)) (session \(m.sessionID))"
    }

    /// `tv flows`' lines with each marker placed at its time: `lines[0]` is the header and
    /// `lines[1...starts.count]` the rows, newest first, whose start times are `starts`; a
    /// marker goes above the first row that started before it (markers newest first too).
    public static func interleave(_ lines: [String], starts: [Int64], markers: [AuditMarker]) -> [String] {
        guard !markers.isEmpty, lines.count > starts.count else { return lines }
        var pending = markers.sorted { ($0.time, $0.id) > ($1.time, $1.id) }[...]
        var out = [lines[0]]
        for (i, start) in starts.enumerated() {
            while let m = pending.first, m.time > start {
                out.append(markerLine(m))
                pending = pending.dropFirst()
            }
            out.append(lines[i + 1])
        }
        out += pending.map(markerLine)
        out += lines[(starts.count + 1)...]
        return out
    }

    /// What a bundle holds, said before it is written.
    /// - Parameter replacing: a file is at `file`'s path now, which the bundle replaces.
    public static func bundleContents(_ b: EvidenceBundle, file: OutputFile, replacing: Bool = false) -> [String] {
        let r = b.request
        var lines = ["The bundle of session \(b.session.id) (project '\(TerminalText.line(b.session.projectName))') will hold:"]
        var flows = "  \(b.flows) flow\(b.flows == 1 ? "" : "s")"
        if b.carriedFlows > 0 {
            flows += " (\(b.carriedFlows) of them open since before the session began; flows.json gives each connection's whole totals, the other files what it carried within the span)"
        }
        lines.append(flows + ", \(b.files.count) files and their manifest, \(Units.bytes(b.bytes)) before compression")
        // The two captures apart: the decrypted one was counted as the packets (a trial's "372
        // in pcapng" beside `tv audit show`'s "packets 0").
        lines.append(b.packets > 0 ? "  packets: \(b.packets) in packets.pcapng" : "  packets: none captured in the span (packets are captured in TUN modes)")
        let hasContent = b.contentFlows > 0 || b.decryptedPackets > 0
        if !r.includeContent {
            lines.append("  decrypted content: left out (--no-content)")
        } else if hasContent {
            var parts: [String] = []
            if b.contentFlows > 0 { parts.append("\(b.contentFlows) flow\(b.contentFlows == 1 ? "" : "s") with kept content") }
            if b.decryptedPackets > 0 { parts.append("\(b.decryptedPackets) packets in decrypted.pcapng") }
            lines.append("  decrypted content: included (" + parts.joined(separator: ", ") + "; headers and bodies as they were said) — --no-content leaves it out")
        } else {
            lines.append("  decrypted content: none kept within the span")
        }
        if !r.includeKeys {
            lines.append("  TLS keys: left out (--no-keys)")
        } else if b.keyLines > 0 {
            let what = b.packets > 0 ? "can decrypt its packets" : "can decrypt a capture of these connections made elsewhere"
            lines.append("  TLS keys: included (\(b.keyLines) key log line\(b.keyLines == 1 ? "" : "s"): whoever has the bundle \(what)) — --no-keys leaves them out")
        } else {
            lines.append("  TLS keys: none recorded in the span")
        }
        var target = file.path.map { "  to \(TerminalText.line($0)) (0600)" } ?? "  to standard output"
        if replacing { target += ", replacing the file there" }
        lines.append(target)
        if b.session.ended == nil {
            // A trial bundled a live session without a word: its span ends now, not at its stop.
            lines.append("  the session is still recording: the bundle holds what it recorded until now (`tv audit stop` first for all of it)")
        }
        return lines
    }

    public static func bundleWritten(_ b: EvidenceBundle, file: OutputFile) -> String {
        var what = "Wrote the evidence bundle of session \(b.session.id) to \(TerminalText.line(file.name)): \(b.flows) flow\(b.flows == 1 ? "" : "s"), \(b.files.count) files and their manifest"
        // Said with --yes too, where the question that says it is skipped (a trial).
        if b.session.ended == nil { what += " (the session is still recording: it holds what was recorded until now)" }
        guard let path = file.path else { return what + "; `tv audit verify FILE` checks it once saved." }
        return what + "; `tv audit verify \(TerminalText.line(path))` checks it."
    }
}
