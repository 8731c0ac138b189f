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
        let printable = PrintableText.text(bytes) != nil
        if !full { return preview(head: Array(bytes.prefix(textCap)), size: bytes.count, printable: printable, indent: indent) }
        var out: [String] = []
        var writer = LineWriter(printable: printable, indent: indent)
        writer.take(bytes) { out.append($0) }
        writer.finish { out.append($0) }
        return out
    }

    /// The capped preview of `size` bytes known by their first bytes `head` (at least `textCap`
    /// of them when there are that many) and whether all of them read as text — the same lines
    /// `lines(_:full: false)` gives for the whole, without holding it.
    public static func preview(head: [UInt8], size: Int, printable: Bool, indent: String = "  ") -> [String] {
        if size == 0 { return [] }
        if printable, let text = PrintableText.text(head.prefix(textCap)) {
            let shownBytes = size > textCap ? text.utf8.count : size
            var out = textLines(text).map { $0.isEmpty ? "" : indent + TerminalText.text($0) }
            if shownBytes < size {
                out.append(indent + "… showing \(Units.grouped(Int64(shownBytes))) of \(Units.grouped(Int64(size))) bytes; --full prints all that was kept.")
            }
            return out
        }
        let shown = head.prefix(hexCap)
        var out = hexDump(Array(shown)).map { indent + $0 }
        if shown.count < size {
            out.append(indent + "… showing \(Units.grouped(Int64(shown.count))) of \(Units.grouped(Int64(size))) bytes; --full prints all that was kept.")
        }
        return out
    }

    /// Every byte of a body that comes in pieces, as lines: text split at LF (as `textLines`),
    /// or a hex dump (as `hexDump`) whose offsets run on across pieces. Holds one text line or
    /// one dump row between pieces.
    public struct LineWriter {
        private let printable: Bool
        private let indent: String
        private var pending: [UInt8] = []
        private var offset = 0
        private var emitted = false

        /// - Parameter printable: whether the whole body reads as text (`PrintableText`).
        public init(printable: Bool, indent: String = "  ") {
            self.printable = printable
            self.indent = indent
        }

        /// Takes the next piece, handing every line it completes to `emit`.
        public mutating func take(_ piece: [UInt8], emit: (String) -> Void) {
            if printable {
                var start = 0
                while let lf = piece[start...].firstIndex(of: 0x0A) {
                    pending += piece[start..<lf]
                    emitText(emit)
                    start = lf + 1
                }
                pending += piece[start...]
                return
            }
            var start = 0
            if !pending.isEmpty {
                let need = min(16 - pending.count, piece.count)
                pending += piece[..<need]
                start = need
                if pending.count < 16 { return }
                emit(indent + BytePreview.hexLine(pending[...], offset: offset))
                offset += 16
                pending.removeAll(keepingCapacity: true)
            }
            piece.withUnsafeBufferPointer { bytes in
                while bytes.count - start >= 16 {
                    emit(indent + BytePreview.hexLine(UnsafeBufferPointer(rebasing: bytes[start..<(start + 16)]), offset: offset))
                    offset += 16
                    start += 16
                }
            }
            pending += piece[start...]
        }

        /// Hands the last, unfinished line to `emit`; a character cut off at the very end of
        /// text is left out, and a final line end adds no empty line.
        public mutating func finish(emit: (String) -> Void) {
            if printable {
                pending.removeLast(PrintableText.cutCharacterLength(pending))
                if !pending.isEmpty || !emitted { emitText(emit) }
            } else if !pending.isEmpty {
                emit(indent + BytePreview.hexLine(pending[...], offset: offset))
            }
            pending = []
        }

        private mutating func emitText(_ emit: (String) -> Void) {
            var line = String(decoding: pending, as: UTF8.self)
            if line.unicodeScalars.last == "\r" { line.unicodeScalars.removeLast() }
            line = line.replacingOccurrences(of: "\r", with: "␍")
            emit(line.isEmpty ? "" : indent + TerminalText.text(line))
            emitted = true
            pending.removeAll(keepingCapacity: true)
        }
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
            hexLine(bytes[start..<min(start + 16, bytes.count)], offset: start)
        }
    }

    /// One dump row of up to 16 bytes that starts at `offset`.
    static func hexLine(_ row: ArraySlice<UInt8>, offset: Int) -> String {
        row.withUnsafeBufferPointer { hexLine($0, offset: offset) }
    }

    /// One dump row, written straight into the string's storage with plain loops (a --full
    /// dump can run to millions of rows).
    static func hexLine(_ row: UnsafeBufferPointer<UInt8>, offset: Int) -> String {
        // 8 offset digits, 2 spaces, 48 columns of hex, 2 spaces, |, up to 16 characters, |.
        String(unsafeUninitializedCapacity: 8 + 2 + 48 + 3 + 16 + 1) { line in
            let digits: StaticString = "0123456789abcdef"
            let hex = digits.utf8Start
            var at = 0
            var shift = 28
            while shift >= 0 {
                line[at] = hex[(offset >> shift) & 0xF]
                at += 1
                shift -= 4
            }
            var column = 8
            while column < 8 + 2 + 48 + 2 {
                line[column] = 0x20
                column += 1
            }
            let count = min(row.count, 16)
            var index = 0
            while index < count {
                let byte = row[index]
                column = 10 + index * 3 + (index >= 8 ? 1 : 0)
                line[column] = hex[Int(byte >> 4)]
                line[column + 1] = hex[Int(byte & 0xF)]
                line[61 + index] = byte >= 0x20 && byte < 0x7f ? byte : 0x2E
                index += 1
            }
            line[60] = 0x7C
            line[61 + count] = 0x7C
            return 62 + count
        }
    }
}
