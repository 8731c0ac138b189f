import Foundation
import TVHome

/// A JSON text re-indented for reading, its members in their order (RFC 8259): two spaces per
/// level, one member or element per line. Only whitespace outside strings changes, so the lines
/// read back as the JSON that was sent, escapes and all (`"x\ty"` stays `"x\ty"`: a trial's view
/// went through `TerminalText.line`, which showed it as `"x\\ty"`). The text is first checked to
/// be JSON (Foundation's parser), so nothing else is read as JSON.
///
/// The lines are safe on a terminal without `TerminalText`: JSON holds no raw C0 control (RFC 8259
/// §7), and the characters a terminal must not receive that a string may hold as they are (DEL,
/// the C1 controls, bidirectional controls, U+2028 and U+2029) are written as the JSON escape of
/// the same character (`\u009b`, `\u202e`), which reads back as the same string.
///
/// The cost is bounded: containers deeper than `deepestIndented` levels are written on their
/// parent's line without spaces (a 59 KB body nested 500 deep printed 59.5 MB of indentation), and
/// `indented(_:byteLimit:lineLimit:)` stops after as many bytes of the text, or lines, as asked.
enum JSONIndentation {
    /// The deepest level that is indented (32 spaces); deeper containers stay on one line.
    static let deepestIndented = 16

    /// Lines of a re-indented JSON text and how much of the text they show.
    struct Indented: Equatable {
        var lines: [String]
        /// Bytes of the text the lines show: all of them unless a limit cut.
        var shownBytes: Int
    }

    /// The lines of `bytes` re-indented, or nil when they are not JSON (or not UTF-8).
    static func lines(_ bytes: [UInt8]) -> [String]? { indented(bytes)?.lines }

    /// The lines of `bytes` re-indented, stopping before the byte past `byteLimit` bytes of the
    /// text (a line can end inside a string there) or after `lineLimit` lines; nil when the
    /// bytes are not JSON (or not UTF-8).
    static func indented(_ bytes: [UInt8], byteLimit: Int = .max, lineLimit: Int = .max) -> Indented? {
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self),
              (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil else { return nil }
        let scalars = Array(text.unicodeScalars)
        var writer = Writer(lineLimit: lineLimit)
        var offset = 0
        var index = 0
        var inString = false
        var escaped = false
        while index < scalars.count, !writer.full {
            let scalar = scalars[index]
            // An empty object or array is one unit, kept on its line.
            var end = index + 1
            if !inString, scalar == "{" || scalar == "[" {
                var next = index + 1
                while next < scalars.count, isWhitespace(scalars[next]) { next += 1 }
                if next < scalars.count, scalars[next] == (scalar == "{" ? "}" : "]") { end = next + 1 }
            }
            let width = scalars[index..<end].reduce(0) { $0 + UTF8.width($1) }
            if offset + width > byteLimit { break }
            let emptyContainer = !inString && end > index + 1
            offset += width
            index = end
            if inString {
                if escaped {
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "\"" {
                    inString = false
                } else if TerminalText.isEscaped(scalar) {
                    writer.write(jsonEscape(scalar))
                    continue
                }
                writer.append(scalar)
                continue
            }
            switch scalar {
            case _ where isWhitespace(scalar):
                continue
            case "\"":
                inString = true
                writer.append(scalar)
            case "{", "[":
                writer.append(scalar)
                if emptyContainer { writer.append(scalars[end - 1]) } else { writer.open() }
            case "}", "]":
                writer.close(scalar)
            case ",":
                writer.comma()
            case ":":
                writer.colon()
            default:
                writer.append(scalar)
            }
        }
        return Indented(lines: writer.finish(), shownBytes: offset)
    }

    /// JSON's insignificant whitespace (RFC 8259 §2).
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    /// `scalar` as JSON's `\uXXXX` (every scalar `TerminalText` escapes is below U+10000).
    static func jsonEscape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The lines being written: the current line, the depth, where lines break.
    struct Writer {
        let lineLimit: Int
        private(set) var lines: [String] = []
        private var line = String.UnicodeScalarView()
        /// Open containers.
        private var depth = 0
        /// The current line holds more than its indentation.
        private var written = false

        init(lineLimit: Int) { self.lineLimit = lineLimit }

        /// As many lines as were asked for are written.
        var full: Bool { lines.count >= lineLimit }

        mutating func append(_ scalar: Unicode.Scalar) {
            line.append(scalar)
            written = true
        }

        mutating func write(_ text: String) {
            line.append(contentsOf: text.unicodeScalars)
            written = true
        }

        /// After `{` or `[`: the members go on the next lines, one level in, unless too deep.
        mutating func open() {
            depth += 1
            if depth <= JSONIndentation.deepestIndented { newline(depth) }
        }

        mutating func close(_ scalar: Unicode.Scalar) {
            if depth <= JSONIndentation.deepestIndented { newline(depth - 1) }
            depth -= 1
            append(scalar)
        }

        mutating func comma() {
            write(",")
            if depth <= JSONIndentation.deepestIndented { newline(depth) }
        }

        mutating func colon() {
            write(depth <= JSONIndentation.deepestIndented ? ": " : ":")
        }

        private mutating func newline(_ level: Int) {
            guard !full else { return }
            lines.append(String(line))
            line = String.UnicodeScalarView(repeatElement(" ", count: max(0, level) * 2))
            written = false
        }

        /// Every line, the last one when it holds more than its indentation.
        mutating func finish() -> [String] {
            if written && !full { lines.append(String(line)) }
            return lines
        }
    }
}
