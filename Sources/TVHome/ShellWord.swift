/// A word as a POSIX shell reads it back, for the commands tv suggests (`tv flows … --after`,
/// `tv audit start NAME`): as is when it holds only characters the shell leaves alone, else in
/// single quotes (a `'` inside becomes `'\''`). A word holding a control character or a
/// bidirectional control (what `TerminalText` escapes) is written in ANSI-C quotes (`$'…'`, which
/// bash, zsh and ksh read; Debian 12's dash, its /bin/sh, does not) with `\xHH` and `\uHHHH`
/// escapes, so the command sends the same bytes: in single quotes the terminal's `\x1b` for ESC
/// was sent as four characters (a trial's `tv request --curl` of a User-Agent with ESC).
public enum ShellWord {
    public static func quote(_ word: String) -> String {
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        if word.unicodeScalars.contains(where: TerminalText.isEscaped) { return ansiC(word) }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `word` in `$'…'`: a backslash and a `'` escaped, every scalar `TerminalText` escapes
    /// written `\xHH` (below U+0080) or `\uHHHH`.
    static func ansiC(_ word: String) -> String {
        var out = "$'"
        for scalar in word.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            case _ where TerminalText.isEscaped(scalar):
                out += scalar.value < 0x80 ? "\\x" + hex(scalar.value, 2) : "\\u" + hex(scalar.value, 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }

    private static func hex(_ value: UInt32, _ digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    private static let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%")
}
