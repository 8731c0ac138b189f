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

    /// Compact JSON text, or indented by two spaces per level when `pretty`.
    public func serialized(pretty: Bool = false, level: Int = 0) -> String {
        let pad = pretty ? String(repeating: "  ", count: level + 1) : ""
        let end = pretty ? "\n" + String(repeating: "  ", count: level) : ""
        let nl = pretty ? "\n" : ""
        switch self {
        case .string(let s): return JSONValue.quote(s)
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[" + nl + items.map { pad + $0.serialized(pretty: pretty, level: level + 1) }.joined(separator: "," + nl) + end + "]"
        case .object(let fields):
            if fields.isEmpty { return "{}" }
            let sep = pretty ? ": " : ":"
            return "{" + nl + fields.map { pad + JSONValue.quote($0.0) + sep + $0.1.serialized(pretty: pretty, level: level + 1) }
                .joined(separator: "," + nl) + end + "}"
        }
    }

    /// `s` as a JSON string literal (RFC 8259 §7): in double quotes, with `"`, `\\` and control
    /// characters escaped.
    public static func quote(_ s: String) -> String {
        var out = "\""
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
        return out + "\""
    }
}
