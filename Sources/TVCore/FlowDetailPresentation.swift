import FlowStore
import Recording
import TVHome

/// How `tv flow ID` shows one flow: the header facts, the handshake, and what can be said about
/// its decrypted content. Every field that came from the network or a peer (names, addresses,
/// ALPN, versions, certificate fields, errors and reasons) is escaped with `TerminalText.line`.
public enum FlowDetailPresentation {
    /// - Parameters:
    ///   - now: µs since the epoch.
    ///   - content: what the turns index holds for this flow (`ContentStore.summary`); the
    ///     section is written from it, so read it before drawing.
    ///   - leftOpen: the flow is open and its session is gone, and how it ended
    ///     (`FlowStore.leftOpen`): it is not "open, N so far", growing while nothing runs (a
    ///     trial), and its row lacks its last update, so its status is not claimed.
    public static func lines(_ f: FlowRecord, now: Int64, content: ContentSummary = ContentSummary(), leftOpen: LeftOpenCause? = nil) -> [String] {
        // The row of a flow left open holds what was saved before its last update was lost.
        let leftOpen = f.duration == nil ? leftOpen : nil
        var out: [String] = []
        let name = TerminalText.line(f.host ?? f.serverAddress)
        if name.isEmpty {
            // Ended before it named a destination (a SOCKS5 command other than CONNECT, a client
            // gone before its request): "Flow 82: " with a name line naming no address (a trial).
            out.append("Flow \(f.id): (no destination)")
            out.append("  name         none: the connection ended before it named a destination")
        } else {
            out.append("Flow \(f.id): \(name)")
            out.append("  name         \(name) (\(FlowNamePresentation.origin(f)))")
        }
        out.append("  server       \(f.serverAddress.isEmpty ? "not connected (port \(f.serverPort))" : address(f.serverAddress, f.serverPort)) over \(f.transport.rawValue)")
        out.append("  client       \(address(f.clientAddress, f.clientPort))")
        out.append("  program      \(FlowProgramPresentation.sentence(f.program))")
        if let instance = f.instance { out.append("  instance     \(SharedInstancePresentation.sentence(instance))") }
        let last = f.duration.map { f.startTime + $0 } ?? f.lastActivityTime
        if let leftOpen {
            out.append("  active       \(Units.utcMillis(f.startTime)) to \(Units.utcMillis(last)), its last recorded activity")
            out.append("  duration     unknown: \(sessionEnd(leftOpen)); the next tv run or tv exec closes it as interrupted")
        } else {
            out.append("  active       \(Units.utcMillis(f.startTime)) to \(Units.utcMillis(last))\(f.duration == nil ? " (still open)" : "")")
            out.append("  duration     \(f.duration.map { Units.duration(microseconds: $0) } ?? "open, \(Units.duration(microseconds: max(0, now - f.startTime))) so far")")
        }
        out.append("  bytes        ↑ \(Units.bytes(f.bytesUp)) up\(exactCount(f.bytesUp)), ↓ \(Units.bytes(f.bytesDown)) down\(exactCount(f.bytesDown))"
                   + bytesMeaning(f) + (leftOpen == nil ? "" : "; as last saved, before its last update was lost"))
        if let up = f.packetsUp, let down = f.packetsDown { out.append("  packets      ↑ \(up) up, ↓ \(down) down") }
        out.append("  status       \(leftOpen == nil ? statusSentence(f) : leftOpenStatus(f, content: content))")
        // A failed (or uninspected encrypted) flow's error is its failure reason, already said on
        // the status line; a kept-private flow's status points to this line (it was left out: a trial).
        let saidOnStatus = (f.status == .failed || f.status == .encrypted) && f.error == f.failureReason
        if let error = f.error, !saidOnStatus { out.append("  error        \(TerminalText.line(error))") }
        out += FlowNamePresentation.notes(f)

        out.append("")
        out.append("Handshake")
        if f.clientVersions.isEmpty && f.tlsVersion == nil && f.clientTLSVersion == nil {
            out.append(leftOpen == nil ? "  no TLS handshake was seen" : "  not recorded (the row lacks the flow's last update)")
        } else {
            out.append("  offered      versions \(f.clientVersions.isEmpty ? "—" : list(f.clientVersions)); ALPN \(f.clientALPN.isEmpty ? "none" : list(f.clientALPN))")
            out += chosenLines(f, lastUpdateLost: leftOpen != nil)
        }
        if let subject = f.certificateSubject {
            out.append("  certificate  \(TerminalText.line(subject))")
            if let issuer = f.certificateIssuer { out.append("    issuer     \(TerminalText.line(issuer))") }
            if !f.certificateSANs.isEmpty { out.append("    names      \(list(f.certificateSANs))") }
            if let nb = f.certificateNotBefore, let na = f.certificateNotAfter {
                out.append("    valid      \(Units.utc(nb)) to \(Units.utc(na))")
            }
            if let line = verifiedLine(f) { out.append("    verified   " + line) }
            if let fp = f.certificateSHA256 { out.append("    SHA-256    \(TerminalText.line(fp))") }
        }

        out.append("")
        out.append("Decrypted content")
        out.append("  " + contentSentence(f, content: content))
        return out
    }

    /// What tv's check of the server's certificate found (`FlowRecord.certificateVerified`):
    /// "yes", or "NO: WHY" and whether tv went on regardless; nil when it was not checked.
    static func verifiedLine(_ f: FlowRecord) -> String? {
        guard let verified = f.certificateVerified else { return nil }
        if verified { return "yes (its chain, name and dates)" }
        let why = f.certificateProblem.map { ": " + TerminalText.line($0) } ?? ""
        switch f.status {
        case .inspected, .interrupted: return "NO" + why + "; inspected anyway (tv run --upstream-insecure)"
        default: return "NO" + why
        }
    }

    /// What each handshake settled. Two legs (tv terminated TLS, `chosenVersionSource`
    /// `upstream_leg`): the client leg's version (client to tv) and the server leg's (tv to
    /// server) on lines of their own, since they can differ; one handshake end to end (passed
    /// through): one version.
    /// - Parameter lastUpdateLost: the row lacks the flow's last update (left open, or closed as
    ///   interrupted): a version it does not hold is not recorded, not "did not finish".
    static func chosenLines(_ f: FlowRecord, lastUpdateLost: Bool = false) -> [String] {
        let alpn = "ALPN " + chosenALPN(f)
        guard f.chosenVersionSource == "upstream_leg" else {
            // Nothing of the server's side was read: not "chosen unknown; ALPN none", which read
            // as a server that chose no protocol (a trial's QUIC flows).
            if f.chosenVersionSource == nil, f.tlsVersion == nil, f.clientTLSVersion == nil {
                return ["  chosen       not seen: " + (f.transport == .udp
                    ? "tv reads only the client's Initial packets of a QUIC connection; the server's choices travel encrypted"
                    : "tv read no ServerHello of this connection")]
            }
            let source = f.chosenVersionSource.map { " (read from \(TerminalText.line($0.replacingOccurrences(of: "_", with: " "))))" } ?? ""
            return ["  chosen       \(TerminalText.line(f.tlsVersion ?? f.clientTLSVersion ?? "unknown"))\(source); \(alpn)"]
        }
        // One bracket a line: the leg's direction, or why it has no version.
        let notRecorded = lastUpdateLost || f.status == .interrupted
        let client = f.clientTLSVersion.map { TerminalText.line($0) + " (client to tv)" }
            ?? (notRecorded ? "not recorded (the row lacks the flow's last update)"
                : f.status == .notEncrypted ? "none (the client spoke no TLS to tv)" : "none (the client's handshake with tv did not finish)")
        return ["  client leg   \(client)",
                "  server leg   \(TerminalText.line(f.tlsVersion ?? "unknown")) (tv to server); \(alpn)"]
    }

    /// The ALPN protocol a handshake settled, in words: the protocol; "none" where tv would
    /// have seen one (it made the server leg itself, a TLS 1.2 ServerHello carries it, or the
    /// client offered none); else "not seen" (TLS 1.3 sends it encrypted, in
    /// EncryptedExtensions, RFC 8446 §4.3.1).
    static func chosenALPN(_ f: FlowRecord) -> String {
        if let alpn = f.alpn { return TerminalText.line(alpn) }
        if f.clientALPN.isEmpty || f.chosenVersionSource == "upstream_leg" { return "none" }
        if f.chosenVersionSource == "server_hello", let version = f.clientTLSVersion, version != "TLSv1.3" { return "none" }
        return "not seen (TLS 1.3 sends the server's choice encrypted)"
    }

    static func address(_ a: String, _ port: Int) -> String {
        let a = TerminalText.line(a)
        return a.contains(":") ? "[\(a)]:\(port)" : "\(a):\(port)"
    }

    /// Items from the network, each escaped, joined by commas.
    static func list(_ items: [String]) -> String { items.map(TerminalText.line).joined(separator: ", ") }

    /// One sentence for the status.
    public static func statusSentence(_ f: FlowRecord) -> String {
        switch f.status {
        case .encrypted:
            // A reason on an encrypted flow says why tv passed through what it would have inspected.
            return "encrypted — passed through untouched" + (f.failureReason.map { ", not inspected: " + TerminalText.line($0) } ?? "")
        case .inspected where f.certificateVerified == false:
            return "inspected — tv terminated TLS on both legs, though the server's certificate did NOT verify (tv run --upstream-insecure): "
                + "anyone on the way to the server could have stood in for it"
        case .inspected where unused(f):
            return "inspected — tv terminated TLS on both legs; " + unusedClause
        case .inspected: return "inspected — tv terminated TLS on both legs"
        case .notEncrypted where FlowListPresentation.awaitsFirstBytes(f):
            return "not known yet — nothing was sent either way so far; the first bytes tell TLS from plain"
        case .notEncrypted:
            // reverse:https with a plain-HTTP client: only the client's side was in clear.
            if let version = f.tlsVersion {
                return "not encrypted from the client to tv — tv spoke \(TerminalText.line(version)) to the server"
            }
            return "not encrypted — plain bytes, readable by anyone on the path"
        case .keptPrivate: return "kept private — passed through untouched, as tv remembered for this client, host and port (the error line says why; `tv pinned` lists what is remembered)"
        case .failed: return "failed — \(f.failureReason.map(TerminalText.line) ?? "no reason was recorded")"
        case .interrupted:
            return "interrupted — its end was never recorded: the tv session carrying it was killed, crashed or lost power, or stopped unable to save it (a full disk); it ends here at its last recorded activity"
        }
    }

    /// How the session of a flow left open ended (`LeftOpenCause`), as the duration line says it.
    static func sessionEnd(_ cause: LeftOpenCause) -> String {
        switch cause {
        case .killed: return "its session ended without closing it (killed or crashed)"
        case .stoppedUnsaved: return "its session stopped unable to save its end (the disk holding the data folder was full, or its database could not be written)"
        }
    }

    /// The status of a flow left open, whose row lacks its last update (trial 43: rows with 64 KiB
    /// of kept content read "encrypted — passed through untouched", the status written as the
    /// connection opened): only what the row proves. Inspection is set once it happened, and kept
    /// content proves it; anything else is not known.
    static func leftOpenStatus(_ f: FlowRecord, content: ContentSummary) -> String {
        let lost = "its last update, with how it ended, was never saved"
        if f.status == .inspected { return "inspected — tv terminated TLS on both legs; " + lost }
        if content.turns > 0 { return "inspected, as its kept content shows; " + lost }
        return "not known — " + lost + "; the row holds what tv saved as the connection began"
    }

    /// An inspected flow the client closed without sending anything over tv's leaf, and that
    /// carries no error: a connection it did not use (a browser's spare: `PinningEvidenceRule`
    /// tells it from a pin check), not a failure.
    public static func unused(_ f: FlowRecord) -> Bool {
        f.status == .inspected && f.duration != nil && f.bytesUp == 0 && f.error == nil
    }

    /// What `unused` flows' status says after its first words.
    public static let unusedClause = "the client sent nothing over it and closed it: a connection it did not use "
        + "(a browser opens spare connections and closes those it does not need)"

    /// What can be said about decrypted content for this flow: how much was saved (the amount,
    /// not the number of turns) and where to read it, or which of the four reasons there is none.
    public static func contentSentence(_ f: FlowRecord, content: ContentSummary = ContentSummary()) -> String {
        if let instance = f.instance, content.turns == 0 {
            // A shared row: content never travels, so its absence here says nothing of keeping
            // (a trial's shared flow said "keeping decrypted content was off" where it was on).
            return "What was said inside stays on the machine that recorded it; if it was kept, `tv turns \(f.id)` in the data folder of \(TerminalText.line(instance.machine)) (instance \(TerminalText.line(instance.id))) shows it."
        }
        guard content.turns > 0 else { return ContentAbsence(flow: f).sentence(flowID: f.id, context: .flowDetail) }
        var sentence = "\(Units.bytes(content.keptBytes)) saved of what was said; tv turns \(f.id) shows it (--http reads it as HTTP)."
        if content.goneBytes > 0 {
            // Its segment file was deleted or moved: said so, not offered as there (a trial).
            sentence = content.goneBytes >= content.keptBytes
                ? "\(Units.bytes(content.keptBytes)) was saved of what was said, but its segment file is no longer in the content folder (deleted or moved): the bytes cannot be read; tv turns \(f.id) shows the turns' figures."
                : "\(Units.bytes(content.keptBytes)) saved of what was said, \(Units.bytes(content.goneBytes)) of it in segment files no longer in the content folder (deleted or moved), which cannot be read; tv turns \(f.id) shows the rest (--http reads it as HTTP)."
        }
        if content.truncated { sentence += " The recording budget cut part of it." }
        if content.incomplete { sentence += " Some bytes were lost while recording." }
        return sentence
    }

    /// The flow as a JSON object for `--json`. `packetsUp` / `packetsDown` are the datagrams the
    /// tunnel counted each way (UDP flows, DNS queries over UDP among them; null for TCP, DNS
    /// over TCP too, whose packets tv relays as bytes); `packetsCaptured`, given by `tv flow ID`
    /// and each row of `tv flows` (the local history), is every packet of the flow in a capture,
    /// whatever its transport (what `tv flow`'s "Packets: 9 captured" says: a trial read null
    /// beside it).
    /// - Parameter leftOpen: as `json`'s.
    public static func detailJSON(_ f: FlowRecord, packetsCaptured: Int64?, leftOpen: LeftOpenCause? = nil) -> JSONValue {
        guard let packetsCaptured, case .object(let fields) = json(f, leftOpen: leftOpen) else { return json(f, leftOpen: leftOpen) }
        var out = fields
        let at = (out.firstIndex { $0.0 == "packetsDown" } ?? out.count - 1) + 1
        out.insert(("packetsCaptured", .int(packetsCaptured)), at: at)
        return .object(out)
    }

    /// `leftOpen`'s word in JSON.
    static func leftOpenJSON(_ cause: LeftOpenCause) -> String {
        switch cause {
        case .killed: return "killed"
        case .stoppedUnsaved: return "stopped_unsaved"
        }
    }

    /// The flow as a JSON object for `--json` (`tv flows`, `tv flow`, `tv top`).
    /// - Parameter leftOpen: why its session left it open (`FlowStore.leftOpen`; the local
    ///   history's `tv flows` and `tv flow` ask): `leftOpen` after `duration` is then `killed` or
    ///   `stopped_unsaved`, and the null duration unknown, not "still open" (a trial's JSON read
    ///   such rows as open); null otherwise.
    public static func json(_ f: FlowRecord, leftOpen: LeftOpenCause? = nil) -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func optInt(_ i: Int64?) -> JSONValue { i.map { .int($0) } ?? .null }
        return .object([
            ("id", .int(f.id)), ("startTime", .int(f.startTime)), ("lastActivityTime", .int(f.lastActivityTime)),
            ("clientAddress", .string(f.clientAddress)), ("clientPort", .int(Int64(f.clientPort))),
            ("serverAddress", .string(f.serverAddress)), ("serverPort", .int(Int64(f.serverPort))),
            ("transport", .string(f.transport.rawValue)), ("host", opt(f.host)), ("hostOrigin", .string(f.hostOrigin.rawValue)),
            ("otherHosts", .array(f.otherHosts.map { .string($0) })), ("otherHostsOrigin", opt(f.otherHostsOrigin?.rawValue)),
            ("hostIsECHPublicName", .bool(f.hostIsECHPublicName)),
            ("dnsQuestionType", opt(DNSQueryPresentation.questionType(f))), ("dnsServerAsked", opt(f.dnsServerAsked?.rawValue)),
            ("dnsAskedAddress", opt(f.dnsAskedAddress)),
            ("alpn", opt(f.alpn)), ("clientTLSVersion", opt(f.clientTLSVersion)), ("serverTLSVersion", opt(f.tlsVersion)),
            ("status", .string(f.status.rawValue)),
            ("failureReason", opt(f.failureReason)), ("bytesUp", .int(f.bytesUp)), ("bytesDown", .int(f.bytesDown)),
            ("packetsUp", optInt(f.packetsUp)), ("packetsDown", optInt(f.packetsDown)),
            ("duration", optInt(f.duration)),
            ("leftOpen", (f.duration == nil ? leftOpen : nil).map { .string(leftOpenJSON($0)) } ?? .null),
            ("error", opt(f.error)),
            // Requests counted without rows, past the connection's row allowance (null: none).
            ("requestsLeftOut", optInt(f.requestsLeftOut)),
            ("clientVersions", .array(f.clientVersions.map { .string($0) })), ("clientALPN", .array(f.clientALPN.map { .string($0) })),
            ("chosenVersionSource", opt(f.chosenVersionSource)),
            ("certificate", certificateJSON(f)),
            // The server's chain as the upstream leg saw it: SHA-256s, leaf first (i21-audit).
            ("chain", .array(f.certificateChain.map { .string($0) })),
            ("program", FlowProgramPresentation.json(f.program)),
        ] + SharedInstancePresentation.jsonField(f.instance))
    }

    /// The exact count to say beside a byte count in units, " (1536 B)", when the units round
    /// it; under 1 KiB they are exact and nothing is added ("↑ 76 B up", not "↑ 76 B up (76 B)":
    /// a trial).
    static func exactCount(_ n: Int64) -> String {
        Units.bytes(n) == "\(n) B" ? "" : " (\(n) B)"
    }

    /// The server's certificate as `--json` gives it (null when none was seen), with what tv's
    /// check found, also when it went on regardless (`--upstream-insecure`).
    static func certificateJSON(_ f: FlowRecord) -> JSONValue {
        guard f.certificateSubject != nil else { return .null }
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func optInt(_ i: Int64?) -> JSONValue { i.map { .int($0) } ?? .null }
        let verified: JSONValue = f.certificateVerified.map { .bool($0) } ?? .null
        return .object([
            ("subject", opt(f.certificateSubject)), ("issuer", opt(f.certificateIssuer)),
            ("sans", .array(f.certificateSANs.map { .string($0) })),
            ("notBefore", optInt(f.certificateNotBefore)), ("notAfter", optInt(f.certificateNotAfter)),
            ("sha256", opt(f.certificateSHA256)), ("verified", verified), ("problem", opt(f.certificateProblem)),
        ])
    }

    /// What the byte counts count (a trial compared an inspected flow's 178 B with tshark's
    /// 2,420 B of TCP payload and found no word on which is which), and for a flow a killed
    /// session left, that they stop where tv stopped counting.
    static func bytesMeaning(_ f: FlowRecord) -> String {
        var what: String
        // An interrupted flow that tv was inspecting (it had opened the upstream TLS leg)
        // counted what was said inside TLS too (a trial's read "TCP payload").
        let inspected = f.status == .inspected || (f.status == .interrupted && f.chosenVersionSource == "upstream_leg")
        switch (inspected, f.transport) {
        case (true, _): what = " — what was said inside TLS"
        case (_, .udp): what = " — datagram payloads"
        default: what = " — TCP payload"
        }
        if f.status == .interrupted {
            what += "; counted until tv stopped (`tv packets \(f.id)` shows how it ended, when captured)"
        }
        return what
    }
}
