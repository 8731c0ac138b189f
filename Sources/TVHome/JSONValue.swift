/// A JSON value written in a fixed key order, for `--json` output that programs and diffs read.
///
/// RFC 8259: strings escaped per §7, numbers as integers or finite doubles. Beyond what §7 asks,
/// DEL, the C1 controls and the bidi controls `TerminalText` escapes are written as `\uXXXX`
/// too, so JSON printed on a terminal cannot drive or reorder it (the value read back is the same).
public indirect enum JSONValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool { a.serialized() == b.serialized() }

    /// An object with `fields` after its own; any other value unchanged.
    public func adding(_ fields: [(String, JSONValue)]) -> JSONValue {
        guard case let .object(own) = self, !fields.isEmpty else { return self }
        return .object(own + fields)
    }

    /// Compact JSON text, or indented by two spaces per level when `pretty`.
    public func serialized(pretty: Bool = false, level: Int = 0) -> String {
        var out = ""
        write(to: &out, pretty: pretty, level: level)
        return out
    }

    /// Appends the JSON text to `out` (as `serialized`), one buffer for the whole tree: the
    /// strings each level joined and copied into its parent's were a quarter of a 55,000-entry
    /// `tv export har --all` (perf, 65 MB of JSON).
    public func write(to out: inout String, pretty: Bool = false, level: Int = 0) {
        switch self {
        case .string(let s): JSONValue.appendQuoted(s, to: &out)
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                JSONValue.newline(&out, pretty: pretty, level: level + 1)
                item.write(to: &out, pretty: pretty, level: level + 1)
            }
            JSONValue.newline(&out, pretty: pretty, level: level)
            out += "]"
        case .object(let fields):
            if fields.isEmpty { out += "{}"; return }
            out += "{"
            for (index, field) in fields.enumerated() {
                if index > 0 { out += "," }
                JSONValue.newline(&out, pretty: pretty, level: level + 1)
                JSONValue.appendQuoted(field.0, to: &out)
                out += pretty ? ": " : ":"
                field.1.write(to: &out, pretty: pretty, level: level + 1)
            }
            JSONValue.newline(&out, pretty: pretty, level: level)
            out += "}"
        }
    }

    /// A line break and `level` indents of two spaces, when `pretty`.
    private static func newline(_ out: inout String, pretty: Bool, level: Int) {
        guard pretty else { return }
        out += "\n"
        for _ in 0..<level { out += "  " }
    }

    /// `s` as a JSON string literal (RFC 8259 §7): in double quotes, with `"`, `\\` and control
    /// characters escaped.
    public static func quote(_ s: String) -> String {
        var out = ""
        appendQuoted(s, to: &out)
        return out
    }

    /// Appends `quote(s)` to `out`; text with nothing to escape (printable ASCII without `"` or
    /// `\\`, or any other UTF-8 none of whose scalars is escaped) is appended whole.
    public static func appendQuoted(_ s: String, to out: inout String) {
        out += "\""
        var plain = true
        for byte in s.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte >= 0x7F {
            plain = false
            break
        }
        if plain || !s.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" || TerminalText.isEscaped($0) }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || TerminalText.isEscaped(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
