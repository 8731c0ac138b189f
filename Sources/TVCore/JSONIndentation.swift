import Foundation

/// A JSON text re-indented for reading, its members in their order (RFC 8259): two spaces per
/// level, one member or element per line. Only whitespace outside strings changes; the text is
/// first checked to be JSON (Foundation's parser), so nothing else is read as JSON.
enum JSONIndentation {
    /// The lines of `bytes` re-indented, or nil when they are not JSON (or not UTF-8).
    static func lines(_ bytes: [UInt8]) -> [String]? {
        guard !bytes.isEmpty, (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil else { return nil }
        var lines: [String] = []
        var line: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        func newline(_ level: Int) {
            lines.append(String(decoding: line, as: UTF8.self))
            line = Array(repeating: UInt8(ascii: " "), count: level * 2)
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                line.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "\""):
                inString = true
                line.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                line.append(byte)
                // An empty object or array stays on its line.
                var next = index
                while next < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == (byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    line.append(bytes[next])
                    index = next + 1
                } else {
                    depth += 1
                    newline(depth)
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline(depth)
                line.append(byte)
            case UInt8(ascii: ","):
                line.append(byte)
                newline(depth)
            case UInt8(ascii: ":"):
                line.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
            default:
                line.append(byte)
            }
        }
        if !line.isEmpty { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }
}
