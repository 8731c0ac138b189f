import FlowTerms
import TVHome

/// `tv diag`: the name-resolution notice (only when something is wrong), the verdict, then the
/// counters it was read from, grouped: inspection, names, decrypted content and recording,
/// forwarding, the last errors. From a session's `status` values (`DiagnosticsCounters`).
public enum DiagnosticsPresentation {
    /// The lines for a running session (`values` nil: none runs, and only the verdict is said).
    /// - Parameter lastStop: with no session, what the last one to stop could not save
    ///   (`LastStopRecord`), said after the verdict.
    public static func lines(_ values: [String: String]?, lastStop: LastStopRecord? = nil) -> [String] {
        guard let values else { return [DiagnosticsVerdict.noSession.sentence] + (lastStop?.sentence.map { [$0] } ?? []) }
        var out: [String] = []
        // Flows not being saved lead (a trial's full disk read "Inspection is working", "flows 0
        // not saved", "Last errors none" while 3,569 flows were in memory only).
        if let unsaved = UnsavedFlowsNotice(values: values) { out.append(TerminalText.line(unsaved.sentence)) }
        if let notice = NameResolutionNotice.of(values) { out.append(notice.sentence) }
        out.append(DiagnosticsVerdict.of(DiagnosticsFacts(values: values)).sentence)
        out.append("")
        for section in sections(values) {
            out.append(section.title)
            for r in section.rows { out.append(r.label.map { row($0, r.value) } ?? "  " + r.value) }
        }
        return out
    }

    /// One group of counters under its title (`tv diag`'s text, `tv diag --json`'s `sections`).
    public struct Section: Sendable, Equatable {
        /// What the counters are of, with the state they are read in ("Inspection (on, CA ready; …)").
        public var title: String
        /// Each counter: a label and its value said in words; a row without a label is a sentence.
        public var rows: [(label: String?, value: String)]

        public static func == (a: Section, b: Section) -> Bool {
            a.title == b.title && a.rows.map(\.label) == b.rows.map(\.label) && a.rows.map(\.value) == b.rows.map(\.value)
        }
    }

    /// The counters the verdict was read from, grouped: inspection, names, decrypted content and
    /// recording, forwarding, the last errors (the seed's "Session diagnostics").
    public static func sections(_ values: [String: String]) -> [Section] {
        let v = values.mapValues(TerminalText.line)
        func n(_ key: String) -> String { Units.grouped(Int64(v[key] ?? "0") ?? 0) }
        var out: [Section] = []

        var inspection = Section(title: "Inspection (\(v["inspection"] ?? "?"), CA \(v["ca"] ?? "?"); connections closed so far)", rows: [])
        inspection.rows.append(("offered", n("offered.total")))
        inspection.rows.append(("not TLS", n("offered.notTLS")))
        inspection.rows.append(("inspected", n("offered.inspected")))
        inspection.rows.append(("passed by rule", n("offered.passedByRule")))
        inspection.rows.append(("kept private", "\(n("offered.keptPrivate.pinned")) pinned, \(n("offered.keptPrivate.lacksRoot")) lacking tv's root"))
        inspection.rows.append(("refused by client", "\(n("offered.clientRefused.lacksRoot")) lacking tv's root, \(n("offered.clientRefused.possiblePinning")) possible pinning, \(n("offered.clientRefused.clientLeft")) left"))
        inspection.rows.append(("no CA", n("offered.noCA")))
        let failures = values.keys.filter { $0.hasPrefix("offered.failed.") }.sorted()
        if failures.isEmpty {
            inspection.rows.append(("failed", "0"))
        } else {
            for key in failures {
                let parts = key.split(separator: ".").map(String.init)
                let leg = parts.count > 2 ? parts[2] : "?"
                let reason = parts.count > 3 ? parts[3] : "?"
                inspection.rows.append(("failed (\(leg) leg)", "\(n(key)) \(TerminalText.line(reason))"))
            }
        }
        out.append(inspection)

        var names = Section(title: "Names", rows: [])
        names.rows.append(("from TCP", "\(n("names.fromTCP")) named by what the connection announced (\(TunnelNamesPresentation.announcedNames))"))
        // Names from lookups and from QUIC exist only where tv sees packets (the tunnel modes): the
        // tunnel's counters, said as `tv status` and `tv exec` say them (`TunnelNamesPresentation`).
        let tunnel = values.reduce(into: [String: UInt64]()) { out, pair in
            if pair.key.hasPrefix("tunnel."), let n = UInt64(pair.value) { out[String(pair.key.dropFirst("tunnel.".count))] = n }
        }
        if tunnel.isEmpty {
            names.rows.append(("from lookups", "none: a proxy sees no DNS or QUIC, so an address-only connection stays unnamed"))
        } else {
            let named = UInt64(v[SessionTally.namedFromLookupsKey] ?? "") ?? 0
            for line in TunnelNamesPresentation.lines(tunnel, namedFromLookups: named) { names.rows.append((nil, TerminalText.line(line))) }
        }
        out.append(names)

        var recording = Section(title: "Decrypted content and recording (content keeping \(v["contentKeeping"] ?? "?"))", rows: [
            ("kept", "\(n("content.turnsKept")) turns, \(Units.bytes(Int64(v["content.bytesKept"] ?? "0") ?? 0))"),
            ("dropped", "\(n("content.chunksDropped")) chunks (queue full), \(n("recording.contentTurnsNotSaved")) turns not saved"),
            ("queue", "\(n("content.queueEvents")) events, \(Units.bytes(Int64(v["content.queueBytes"] ?? "0") ?? 0)) waiting"),
            ("flows", "\(n("recording.flowsWaiting")) waiting in memory, not in the history yet; \(n("recording.flowsNotSaved")) given up (never saved)"),
        ])
        // The decrypted capture, when the session writes one: what it wrote and lost (a full disk
        // stopped it for good and diag said nothing: a trial).
        if let line = CapturesPresentation.decryptedStatusLine(v) {
            recording.rows.append(("decrypted capture", line))
            let lost = "\(n("decryptedCapture.packetsNotSaved")) packets (\(Units.bytes(Int64(v["decryptedCapture.bytesNotSaved"] ?? "0") ?? 0)) of plaintext, \(n("decryptedCapture.flowsNotSaved")) flows) not saved, \(n("decryptedCapture.failedWrites")) failed writes\(v["decryptedCapture.failing"] == "on" ? ", failing now" : "")"
            recording.rows.append(("  not saved", lost))
            recording.rows.append(("  dropped", "\(Units.bytes(Int64(v[QueueStatus.decryptedBytesDropped] ?? "0") ?? 0)) of plaintext, \(n(QueueStatus.decryptedEventsDropped)) beginnings and ends (queue full)"))
            if let error = v["decryptedCapture.lastError"] { recording.rows.append(("  last error", error)) }
        }
        out.append(recording)

        // The shared store, when the session writes to one: said here too (a trial's server
        // down or hung showed only in `tv status`; diag and the web's page said nothing).
        if let shared = SharedStoreWiring.statusLine(values) {
            out.append(Section(title: "Shared store", rows: [(nil, shared)]))
        }

        out.append(Section(title: "Forwarding", rows: [
            ("accepted", n("accepted")),
            ("refused", "\(n("refusedByCap")) at the cap, \(n("refusedPerClient")) over the per-client limit"),
            ("errors", "\(n(SessionStatusPresentation.closedKey(.failed))) \(v[SessionStatusPresentation.closedKey(.failed)] == "1" ? "connection" : "connections") failed"),
        ]))

        var errors = Section(title: "Last errors", rows: [])
        // What keeps the session from recording, first: it is not a connection's error.
        let losses = RecordingLosses(values: values)
        if let losses, losses.flowsFailing, let error = losses.lastFlowError { errors.rows.append((nil, "flows not saved: " + TerminalText.line(error))) }
        if let losses, losses.contentFailing, let error = losses.lastContentError { errors.rows.append((nil, "content not saved: " + TerminalText.line(error))) }
        let recent = recentErrors(values)
        if recent.isEmpty && errors.rows.isEmpty { errors.rows.append((nil, "none")) }
        for e in recent {
            errors.rows.append((nil, "\(Units.utc(e.atMicros / 1_000_000, format: "%H:%M:%S")) \(TerminalText.line(e.host)): \(TerminalText.line(e.sentence))"))
        }
        out.append(errors)
        return out
    }

    /// `tv diag --json`: `running`, `verdict` (`case`, `sentence`), `nameResolution` (the notice's
    /// sentence or null), `sections` (the counters grouped as the text groups them: `title`, `rows` of
    /// `label` and `value`), `session` (the status values, as `tv status --json`).
    /// - Parameter lastStop: with no session, what the last one to stop could not save
    ///   (`LastStopRecord.json` under `lastStop`, when it lost anything).
    public static func json(_ values: [String: String]?, lastStop: LastStopRecord? = nil) -> JSONValue {
        guard let values else {
            var fields: [(String, JSONValue)] = [("running", .bool(false)), ("verdict", verdictJSON(.noSession)), ("nameResolution", .null)]
            if let lastStop, lastStop.sentence != nil { fields.append(("lastStop", lastStop.json)) }
            return .object(fields)
        }
        return .object([("running", .bool(true)),
                        ("verdict", verdictJSON(DiagnosticsVerdict.of(DiagnosticsFacts(values: values)))),
                        ("nameResolution", NameResolutionNotice.of(values).map { .string($0.sentence) } ?? .null),
                        ("unsavedFlows", UnsavedFlowsNotice.json(UnsavedFlowsNotice(values: values).map { [$0] } ?? [])),
                        ("sections", .array(sections(values).map(sectionJSON))),
                        ("session", SessionStatusPresentation.json(values))])
    }

    /// `{"title", "rows": [{"label" (null for a sentence), "value"}]}`.
    static func sectionJSON(_ section: Section) -> JSONValue {
        .object([("title", .string(section.title)),
                 ("rows", .array(section.rows.map { .object([("label", $0.label.map(JSONValue.string) ?? .null), ("value", .string($0.value))]) }))])
    }

    static func verdictJSON(_ verdict: DiagnosticsVerdict) -> JSONValue {
        .object([("case", .string(verdict.name)), ("sentence", .string(verdict.sentence))])
    }

    /// The last errors in the values (`errors.N.*`), newest first.
    static func recentErrors(_ values: [String: String]) -> [SessionTally.RecentError] {
        var out: [SessionTally.RecentError] = []
        var i = 1
        while let at = values["errors.\(i).at"].flatMap({ Int64($0) }) {
            out.append(SessionTally.RecentError(atMicros: at, host: values["errors.\(i).host"] ?? "?", sentence: values["errors.\(i).sentence"] ?? ""))
            i += 1
        }
        return out
    }

    private static func row(_ label: String, _ value: String) -> String {
        "  " + label.padding(toLength: 20, withPad: " ", startingAt: 0) + value
    }
}

extension DiagnosticsVerdict {
    /// The case's name for programs (`neverTakenOver.clientsLackRoot`, `working`, …).
    public var name: String {
        switch self {
        case .noSession: return "noSession"
        case .inspectionOff: return "inspectionOff"
        case .caInDoubt: return "caInDoubt"
        case .noCANow: return "noCANow"
        case .nothingOffered: return "nothingOffered"
        case .noneOfferedOf: return "noneOfferedOf"
        case .notTLS: return "notTLS"
        case .working: return "working"
        case .allByRule: return "allByRule"
        case .allPinned: return "allPinned"
        case .neverTakenOver(_, .noCertificateAuthority, _): return "neverTakenOver.noCA"
        case .neverTakenOver(_, .clientsLackRoot, _): return "neverTakenOver.clientsLackRoot"
        case .neverTakenOver(_, .legFailed, _): return "neverTakenOver.legFailed"
        }
    }
}
