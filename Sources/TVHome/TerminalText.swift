/// Text that came from the network (or any other outside source), made safe to print on a
/// terminal: every character that could move the cursor, change the terminal's state or reorder
/// what is shown is written as a visible escape instead, and everything else — accents, CJK,
/// emoji — is kept as it is.
///
/// It lives in TVHome because TVHome is the module every renderer already imports (TVCore's
/// presentations, the `tv` commands, HTTPReading, Proxy): one function, one set of rules, and no
/// new dependency for anyone.
///
/// Escaped, in both shapes:
/// - C0 controls and DEL (U+0000–U+001F, U+007F) as `\xHH` (two lower-case hex digits): ESC is
///   `\x1b`, BEL `\x07`, NUL `\x00`; so a CSI (`ESC [`) or OSC (`ESC ]`) sequence loses its
///   introducer and shows as `\x1b[2J`, `\x1b]0;title\x07`.
/// - C1 controls (U+0080–U+009F, among them the 8-bit CSI U+009B and OSC U+009D) as `\u{9B}`.
/// - Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the
///   line and paragraph separators (U+2028, U+2029) as `\u{202E}` (upper-case hex, as Swift writes
///   them).
///
/// `line` is for a field printed inside one line (a host, a header, a path): LF, CR and TAB are
/// escaped too, as `\n`, `\r` and `\t`, so a field can neither forge an output line nor break the
/// columns. `text` is for a multi-line preview (a body read as text): LF and TAB are kept, and a
/// CR is `\x0d`.
///
/// The escapes are unambiguous, and a backslash from the text is changed only where it must be: a
/// run of backslashes is doubled when what follows it would otherwise read as an escape — an
/// escaped character, `x`, `u{`, and in a `line` also `n`, `r` or `t`. Any other backslash is
/// kept as it is, so `CN=a\,b`, a JSON body's `\"` and `C:\\Users` read as they were (a trial's
/// `C:\\Users` showed as `C:\\\Users`). Reading back, a run of 2n backslashes before `x`, `u{`
/// (and `n`, `r`, `t` in a line) is n backslashes and that letter; a run of 2n + 1 is n backslashes
/// and an escape (`\x1b`, `\u{202E}`, `\n`); a run before anything else is itself.
public enum TerminalText {
    /// `text` for one field on one line: every control (LF, CR and TAB included), DEL, C1 control
    /// and bidi control escaped. E.g. `"a\u{1B}]0;x\u{07}b"` → `a\x1b]0;x\x07b`.
    public static func line(_ text: String) -> String { escape(text, keepsLines: false) }

    /// `text` for a multi-line preview: as `line`, except LF and TAB are kept as they are.
    public static func text(_ text: String) -> String { escape(text, keepsLines: true) }

    /// What the console writes, as a last guard behind the renderers: `text` unchanged when it
    /// holds nothing `text(_:)` would escape (the usual case, and always so for lines whose
    /// network fields were escaped already — their escapes are not escaped twice), else
    /// `text(_:)` of it.
    public static func guarded(_ text: String) -> String {
        text.unicodeScalars.contains(where: { escapes($0, keepsLines: true) }) ? escape(text, keepsLines: true) : text
    }

    /// Whether `scalar` is escaped in a line (a multi-line text keeps LF and TAB on top of this).
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v < 0xA0) { return true }
        switch v {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    static func escapes(_ scalar: Unicode.Scalar, keepsLines: Bool) -> Bool {
        isEscaped(scalar) && !(keepsLines && (scalar == "\n" || scalar == "\t"))
    }

    static func escape(_ text: String, keepsLines: Bool) -> String {
        // The common case — nothing to escape, no backslash — costs one scan and no copy.
        if !text.unicodeScalars.contains(where: { $0 == "\\" || escapes($0, keepsLines: keepsLines) }) { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\" {
                // A run of backslashes, doubled when what comes after it would read as an escape.
                var end = index
                while end < scalars.count, scalars[end] == "\\" { end += 1 }
                let run = end - index
                let doubled = end < scalars.count && readsAsEscape(scalars[end], then: end + 1 < scalars.count ? scalars[end + 1] : nil, keepsLines: keepsLines)
                out.append(contentsOf: repeatElement("\\", count: doubled ? run * 2 : run))
                index = end
                continue
            }
            index += 1
            guard escapes(scalar, keepsLines: keepsLines) else {
                out.append(scalar)
                continue
            }
            let v = scalar.value
            let written: String
            switch v {
            case 0x0A where !keepsLines: written = "\\n"
            case 0x0D where !keepsLines: written = "\\r"
            case 0x09 where !keepsLines: written = "\\t"
            case ..<0x80: written = "\\x" + (v < 0x10 ? "0" : "") + String(v, radix: 16)
            default: written = "\\u{" + String(v, radix: 16, uppercase: true) + "}"
            }
            out.append(contentsOf: written.unicodeScalars)
        }
        return String(out)
    }

    /// Whether `next` (then `afterNext`), written after a backslash, would read as an escape.
    static func readsAsEscape(_ next: Unicode.Scalar, then afterNext: Unicode.Scalar?, keepsLines: Bool) -> Bool {
        escapes(next, keepsLines: keepsLines) || next == "x" || (next == "u" && afterNext == "{")
            || (!keepsLines && (next == "n" || next == "r" || next == "t"))
    }
}
