/// Rows in the text format of PostgreSQL's `COPY … FROM STDIN` (PostgreSQL documentation, COPY,
/// "File Formats: Text Format"): one line a row, its values separated by a tab, `\N` for NULL,
/// and in a value a backslash, tab, newline or carriage return written `\\`, `\t`, `\n`, `\r`.
/// Pure; what `PGConnection.copy` sends. Text cannot hold NUL in PostgreSQL: a NUL becomes
/// U+FFFD, as `PostgresDialect.parameterText` does, rather than failing the whole batch.
enum CopyText {
    /// Appends one row (`values` in the COPY statement's column order) and its newline.
    /// `[.integer(7), .null, .text("a\tb")]` → `7\t\N\ta\\tb\n`.
    static func appendRow(_ values: [SQLiteValue], to out: inout [UInt8]) {
        for (n, value) in values.enumerated() {
            if n > 0 { out.append(tab) }
            append(value, to: &out)
        }
        out.append(newline)
    }

    /// Appends one value: `\N`, a decimal integer, a real as Swift prints it (`Double`'s
    /// shortest round-trip form, which PostgreSQL reads back exactly), text escaped, a blob as
    /// bytea's hex form `\x…` (its backslash escaped: `\\x0aff`).
    static func append(_ value: SQLiteValue, to out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(backslash)
            out.append(UInt8(ascii: "N"))
        case let .integer(n): out.append(contentsOf: String(n).utf8)
        case let .real(d): out.append(contentsOf: String(d).utf8)
        case let .text(s): appendText(s, to: &out)
        case let .blob(bytes):
            out.append(contentsOf: [backslash, backslash, UInt8(ascii: "x")])
            let hex = Array("0123456789abcdef".utf8)
            for byte in bytes {
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
    }

    /// Appends `text` escaped (most values need no escape and are copied whole).
    static func appendText(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.contains(where: { $0 < 0x20 || $0 == backslash }) else {
                out.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case backslash: out.append(contentsOf: [backslash, backslash])
                case tab: out.append(contentsOf: [backslash, UInt8(ascii: "t")])
                case newline: out.append(contentsOf: [backslash, UInt8(ascii: "n")])
                case carriageReturn: out.append(contentsOf: [backslash, UInt8(ascii: "r")])
                case 0: out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                default: out.append(byte)
                }
            }
        }
    }

    private static let backslash = UInt8(ascii: "\\")
    private static let tab = UInt8(ascii: "\t")
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
}
