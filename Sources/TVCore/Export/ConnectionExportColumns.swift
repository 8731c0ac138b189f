import FlowStore
import FlowTerms
import TVHome

/// The columns of `tv export connections`, one list for JSON and CSV: metadata only, never a
/// payload (seed 000 Captures, "The connection list as JSON"): the five-tuple in human terms,
/// the name and where it came from, times, bytes per direction and packets per direction where
/// counted (UDP flows of the tunnel; null otherwise), the status and the handshake's facts.
public enum ConnectionExportColumns {
    /// Column names, in order (the CSV header; the JSON keys).
    public static let names = [
        "id", "start", "end", "durationMicros", "transport", "client", "server", "host", "hostOrigin", "otherHosts",
        "status", "failureReason", "error", "bytesUp", "bytesDown", "packetsUp", "packetsDown",
        "clientTLSVersion", "serverTLSVersion", "alpn", "clientOfferedVersions", "clientOfferedALPN",
        "certificateSubject", "certificateIssuer", "certificateSANs", "certificateNotBefore", "certificateNotAfter",
        "certificateSHA256",
        // The program behind the connection (issue 18): pid, command name, executable, user; or why
        // it is not known (`programNotKnown`, a `ProgramUnknown` raw value); all null: not looked up.
        "programPID", "programCommand", "programExecutable", "programUser", "programNotKnown",
        // The port the client asked for, also of a flow that never reached a server (its name did
        // not resolve: `server` is null, and the port was nowhere: a trial). Last, so the columns
        // before it keep their places.
        "serverPort",
        // What the check of the server's certificate found (null: none was checked), also when
        // tv went on regardless (--upstream-insecure), and why it failed.
        "certificateVerified", "certificateProblem",
    ]

    /// The shared store's export (`tv export connections --store`): `names`, then which instance
    /// saw the connection (its id and machine: its content and packets are there).
    public static let sharedNames = names + ["instanceID", "machine"]

    /// `values(f)`, then its instance's id and machine (`sharedNames`; null when it has none).
    public static func sharedValues(_ f: FlowRecord) -> [JSONValue] {
        values(f) + [f.instance.map { .string($0.id) } ?? .null, f.instance.map { .string($0.machine) } ?? .null]
    }

    /// One flow's values, in `names` order.
    public static func values(_ f: FlowRecord) -> [JSONValue] {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        func optInt(_ i: Int64?) -> JSONValue { i.map { .int($0) } ?? .null }
        func seconds(_ s: Int64?) -> JSONValue { s.map { .string(Units.utc($0, format: "%Y-%m-%dT%H:%M:%SZ")) } ?? .null }
        return [
            .int(f.id), .string(iso(f.startTime)), f.duration.map { .string(iso(f.startTime + $0)) } ?? .null,
            optInt(f.duration), .string(f.transport.rawValue),
            // A flow that never reached a server (its name did not resolve, the connect failed)
            // has no server address: null, not ":443".
            .string(endpoint(f.clientAddress, f.clientPort)), f.serverAddress.isEmpty ? .null : .string(endpoint(f.serverAddress, f.serverPort)),
            opt(f.host), .string(f.hostOrigin.rawValue), .array(f.otherHosts.map { .string($0) }),
            .string(f.status.rawValue), opt(f.failureReason), opt(f.error),
            .int(f.bytesUp), .int(f.bytesDown), optInt(f.packetsUp), optInt(f.packetsDown),
            opt(f.clientTLSVersion), opt(f.tlsVersion), opt(f.alpn),
            .array(f.clientVersions.map { .string($0) }), .array(f.clientALPN.map { .string($0) }),
            opt(f.certificateSubject), opt(f.certificateIssuer), .array(f.certificateSANs.map { .string($0) }),
            seconds(f.certificateNotBefore), seconds(f.certificateNotAfter), opt(f.certificateSHA256),
        ] + programValues(f.program) + [f.serverPort > 0 ? .int(Int64(f.serverPort)) : .null]
            + [f.certificateVerified.map { .bool($0) } ?? .null, opt(f.certificateProblem)]
    }

    /// `programPID` … `programNotKnown` for one flow's program.
    static func programValues(_ program: FlowProgram?) -> [JSONValue] {
        switch program {
        case nil: return [.null, .null, .null, .null, .null]
        case let .known(p)?:
            return [.int(Int64(p.pid)), .string(p.command), p.executable.map { .string($0) } ?? .null,
                    .string(p.user ?? String(p.uid)), .null]
        case let .notKnown(reason)?: return [.null, .null, .null, .null, .string(reason.rawValue)]
        }
    }

    /// `address:port`, an IPv6 address in brackets (RFC 3986 §3.2.2): `[::1]:443`.
    static func endpoint(_ address: String, _ port: Int) -> String {
        (address.contains(":") ? "[" + address + "]" : address) + ":" + String(port)
    }

    /// µs since the epoch as RFC 3339 UTC with microseconds: `2026-11-30T14:05:00.123456Z`.
    static func iso(_ us: Int64) -> String {
        let micros = String(((us % 1_000_000) + 1_000_000) % 1_000_000)
        let seconds = us >= 0 ? us / 1_000_000 : (us - 999_999) / 1_000_000
        return Units.utc(seconds, format: "%Y-%m-%dT%H:%M:%S") + "." + String(repeating: "0", count: 6 - micros.count) + micros + "Z"
    }

    /// One CSV field (RFC 4180 §2): quoted when it holds a comma, a quote, CR or LF, its quotes
    /// doubled; a list is its items joined by spaces; null is empty. Text a spreadsheet would run
    /// as a formula (a first character of `=`, `+`, `-`, `@`, tab or CR: OWASP's CSV injection
    /// advice) gets a `'` in front, which spreadsheets show as text: a client chooses its SNI,
    /// and `=HYPERLINK(…)` as a host ran as a formula (a trial).
    public static func csvField(_ value: JSONValue) -> String {
        var text: String
        switch value {
        case .null: text = ""
        case .string(let s): text = s
        case .int(let i): text = String(i)
        case .bool(let b): text = b ? "true" : "false"
        case .double(let d): text = String(d)
        case .array(let items): text = items.map(csvField).map(unquote).map(unguard).joined(separator: " ")
        case .object: text = value.serialized()
        }
        switch value {
        case .string, .array, .object:
            if let first = text.unicodeScalars.first, formulaStarts.contains(first) { text = "'" + text }
        case .null, .int, .bool, .double:
            break
        }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// First characters that make a spreadsheet cell a formula (OWASP, CSV injection).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// A list item's own guard taken off: the joined cell is guarded once, by its first character.
    private static func unguard(_ item: String) -> String {
        guard item.hasPrefix("'"), let second = item.unicodeScalars.dropFirst().first, formulaStarts.contains(second) else { return item }
        return String(item.dropFirst())
    }

    private static func unquote(_ field: String) -> String {
        guard field.hasPrefix("\""), field.hasSuffix("\""), field.count >= 2 else { return field }
        return String(field.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }
}
