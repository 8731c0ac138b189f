import Foundation
import HTTPReading
import TVHome

/// A body drawn for people: text when it is printable (`PrintableText`), else a hex dump of
/// offset, 16 bytes and their ASCII. Previews are capped — about 1 KiB of text, 256 bytes of hex
/// (a dump line holds 16 bytes where a text line holds ~70) — and the cap is said. Text lines keep
/// tabs; any other control or bidi control in them is escaped by `TerminalText.text`.
public enum BytePreview {
    /// Text shown without `--full`: 1,024 bytes.
    public static let textCap = 1_024
    /// Hex shown without `--full`: 256 bytes (16 lines).
    public static let hexCap = 256

    /// The lines for `bytes`, each prefixed by `indent`.
    public static func lines(_ bytes: [UInt8], full: Bool, indent: String = "  ") -> [String] {
        if bytes.isEmpty { return [] }
        if let text = PrintableText.text(bytes) {
            var shown = text
            var shownBytes = bytes.count
            if !full && bytes.count > textCap {
                // Cut at a character boundary at or below the cap.
                var count = 0
                var end = text.startIndex
                for character in text.unicodeScalars.indices {
                    let width = text.unicodeScalars[character].utf8.count
                    if count + width > textCap { end = character; break }
                    count += width
                    end = text.unicodeScalars.index(after: character)
                }
                shown = String(text.unicodeScalars[..<end])
                shownBytes = count
            }
            var out = textLines(shown).map { $0.isEmpty ? "" : indent + TerminalText.text($0) }
            if shownBytes < bytes.count {
                out.append(indent + "… showing \(Units.grouped(Int64(shownBytes))) of \(Units.grouped(Int64(bytes.count))) bytes; --full prints all that was kept.")
            }
            return out
        }
        let shown = full ? bytes[...] : bytes.prefix(hexCap)
        var out = hexDump(Array(shown)).map { indent + $0 }
        if shown.count < bytes.count {
            out.append(indent + "… showing \(Units.grouped(Int64(shown.count))) of \(Units.grouped(Int64(bytes.count))) bytes; --full prints all that was kept.")
        }
        return out
    }

    /// Text split into lines at LF (a CR before it dropped); a lone CR is shown as `␍`, and a
    /// final line end adds no empty line.
    static func textLines(_ text: String) -> [String] {
        // By scalars: as Characters, "\r\n" is one grapheme and would not split at "\n".
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var line = line
            if line.last == "\r" { line = line.dropLast() }
            return String(String.UnicodeScalarView(line)).replacingOccurrences(of: "\r", with: "␍")
        }
        if lines.count > 1 && lines.last == "" { lines.removeLast() }
        return lines
    }

    /// `hexdump -C` style: `00000000  47 45 54 20 2f 20 48 54  54 50 2f 31 2e 31 0d 0a  |GET / HTTP/1.1..|`.
    public static func hexDump(_ bytes: [UInt8]) -> [String] {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let row = bytes[start..<min(start + 16, bytes.count)]
            var hex = ""
            for (index, byte) in row.enumerated() {
                hex += (index == 8 ? "  " : index == 0 ? "" : " ") + twoHex(byte)
            }
            let width = 16 * 3 + 1 - 1
            hex += String(repeating: " ", count: max(0, width - hex.count))
            let ascii = String(row.map { $0 >= 0x20 && $0 < 0x7f ? Character(UnicodeScalar($0)) : "." })
            let offset = String(start, radix: 16)
            return String(repeating: "0", count: max(0, 8 - offset.count)) + offset + "  " + hex + "  |" + ascii + "|"
        }
    }

    static func twoHex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }
}
