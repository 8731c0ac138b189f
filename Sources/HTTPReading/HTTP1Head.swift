import Foundation

/// The head of an HTTP/1.x message (RFC 9112 §2.1): start line, header fields, and the empty line
/// that ends them. LF alone is accepted as a line end (§2.2); obsolete line folding is unfolded
/// (§5.2).
struct HTTP1Head: Equatable {
    /// The largest head tv reads: 64 KiB.
    static let sizeLimit = 65_536

    var startLine: String
    var headers: [HTTPHeader]
    /// Bytes from the start line to the end of the empty line.
    var size: Int

    enum Outcome: Equatable {
        case head(HTTP1Head)
        /// The bytes end before the empty line.
        case needsMore
        /// Not a valid head; the reason is one clause.
        case invalid(String)
    }

    /// Reads the head starting at `start` of `bytes`.
    static func parse(_ bytes: [UInt8], from start: Int) -> Outcome {
        var lines: [String] = []
        var position = start
        while true {
            guard let lf = bytes[position...].firstIndex(of: 0x0A) else {
                return bytes.count - start > sizeLimit ? .invalid("the head is longer than 64 KiB") : .needsMore
            }
            var end = lf
            if end > position && bytes[end - 1] == 0x0D { end -= 1 }
            let line = bytes[position..<end]
            position = lf + 1
            if position - start > sizeLimit { return .invalid("the head is longer than 64 KiB") }
            if line.isEmpty {
                if lines.isEmpty { return .invalid("the message starts with an empty line") }
                break
            }
            if line.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) {
                return .invalid("line \(lines.count + 1) of the head holds control bytes")
            }
            let text = String(decoding: line, as: UTF8.self)
            if let first = line.first, first == 0x20 || first == 0x09, lines.count > 1 {
                lines[lines.count - 1] += " " + text.trimmingCharacters(in: .whitespaces)
            } else {
                lines.append(text)
            }
        }
        var headers: [HTTPHeader] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                return .invalid("the header line '\(line.prefix(60))' has no colon")
            }
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(where: { $0 == " " || $0 == "\t" }) else {
                return .invalid("the header name '\(name.prefix(60))' is not a token")
            }
            headers.append(HTTPHeader(name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return .head(HTTP1Head(startLine: lines[0], headers: headers, size: position - start))
    }
}

extension HTTP1Head {
    /// The request line's parts (RFC 9112 §3): method, target, version.
    var requestLine: (method: String, target: String, version: String)? {
        let parts = startLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), !parts[0].isEmpty,
              parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") }) else { return nil }
        return (String(parts[0]), String(parts[1]), String(parts[2]))
    }

    /// The status line's parts (RFC 9112 §4): version, status code, reason.
    var statusLine: (version: String, status: Int, reason: String)? {
        let parts = startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else { return nil }
        return (String(parts[0]), status, parts.count > 2 ? String(parts[2]) : "")
    }
}
