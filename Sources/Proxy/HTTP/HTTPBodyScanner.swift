/// Finds where an HTTP/1 message body ends, without copying it (RFC 9112 §6, §7.1): the relay
/// passes bytes on as they come and asks this scanner how many of them are still body.
struct HTTPBodyScanner: Equatable {
    enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        /// The body runs until the server closes (responses only, RFC 9112 §6.3 rule 8).
        case untilClose
    }

    private enum ChunkState: Equatable {
        case size(value: Int, digits: Int, inExtension: Bool)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLineStart
        case trailerLine
        case trailerLF(empty: Bool)
        case done
    }

    private(set) var framing: Framing
    private var remaining = 0
    private var chunk: ChunkState = .size(value: 0, digits: 0, inExtension: false)
    /// Set when the chunked framing is broken; the message cannot be delimited.
    private(set) var malformed = false

    init(_ framing: Framing) {
        self.framing = framing
        if case .length(let n) = framing { remaining = n }
    }

    var isDone: Bool {
        switch framing {
        case .none: return true
        case .length: return remaining == 0
        case .chunked: return chunk == .done
        case .untilClose: return false
        }
    }

    /// How many of `bytes` (from their start) belong to the body; stops at the body's end.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch framing {
        case .none: return 0
        case .untilClose: return bytes.count
        case .length:
            let n = min(remaining, bytes.count)
            remaining -= n
            return n
        case .chunked:
            return consumeChunked(bytes)
        }
    }

    private mutating func consumeChunked(_ bytes: UnsafeRawBufferPointer) -> Int {
        var i = 0
        let count = bytes.count
        while i < count && chunk != .done && !malformed {
            let c = bytes[i]
            switch chunk {
            case let .size(value, digits, inExtension):
                if c == 0x0D {
                    guard digits > 0 else { malformed = true; return i }
                    chunk = .sizeLF(value: value)
                } else if c == 0x0A {
                    guard digits > 0 else { malformed = true; return i }
                    chunk = value == 0 ? .trailerLineStart : .data(remaining: value)
                } else if inExtension {
                    // chunk-ext: skipped up to the line end (RFC 9112 §7.1.1)
                } else if let d = Self.hex(c) {
                    guard digits < 15 else { malformed = true; return i }
                    chunk = .size(value: value * 16 + d, digits: digits + 1, inExtension: false)
                } else if c == 0x3B || c == 0x20 || c == 0x09 {
                    chunk = .size(value: value, digits: digits, inExtension: true)
                } else {
                    malformed = true
                    return i
                }
                i += 1
            case .sizeLF(let value):
                guard c == 0x0A else { malformed = true; return i }
                chunk = value == 0 ? .trailerLineStart : .data(remaining: value)
                i += 1
            case .data(let left):
                let n = min(left, count - i)
                i += n
                chunk = left - n == 0 ? .dataCR : .data(remaining: left - n)
            case .dataCR:
                if c == 0x0D { chunk = .dataLF } else if c == 0x0A { chunk = .size(value: 0, digits: 0, inExtension: false) } else { malformed = true; return i }
                i += 1
            case .dataLF:
                guard c == 0x0A else { malformed = true; return i }
                chunk = .size(value: 0, digits: 0, inExtension: false)
                i += 1
            case .trailerLineStart:
                if c == 0x0D { chunk = .trailerLF(empty: true) } else if c == 0x0A { chunk = .done } else { chunk = .trailerLine }
                i += 1
            case .trailerLine:
                if c == 0x0D { chunk = .trailerLF(empty: false) } else if c == 0x0A { chunk = .trailerLineStart }
                i += 1
            case .trailerLF(let empty):
                guard c == 0x0A else { malformed = true; return i }
                chunk = empty ? .done : .trailerLineStart
                i += 1
            case .done:
                break
            }
        }
        return i
    }

    private static func hex(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        default: return nil
        }
    }
}

/// Reads an HTTP/1 response head (status line and fields, RFC 9112 §4, §5) as the bytes pass by,
/// for the one thing the plain-HTTP forwarder needs from it: how the body is delimited.
struct HTTPResponseHeadScanner {
    struct Head: Equatable {
        var status: Int
        var framing: HTTPBodyScanner.Framing
        var closes: Bool
    }

    enum Result: Equatable {
        case needMore
        /// The head ended `consumed` bytes into the last input.
        case head(Head, consumed: Int)
        case malformed(String)
    }

    private var bytes: [UInt8] = []
    static let maxHead = 65_536

    /// `requestMethod`: HEAD responses have no body (RFC 9110 §9.3.2).
    mutating func feed(_ input: UnsafeRawBufferPointer, requestMethod: String) -> Result {
        let start = bytes.count
        // Look for the blank line, also across the boundary of the previous input.
        for i in 0..<input.count {
            bytes.append(input[i])
            let n = bytes.count
            if input[i] == 0x0A && (n >= 2 && bytes[n - 2] == 0x0A || n >= 3 && bytes[n - 2] == 0x0D && bytes[n - 3] == 0x0A) {
                let head = parse(requestMethod: requestMethod)
                bytes.removeAll()
                switch head {
                case .success(let h): return .head(h, consumed: n - start)
                case .failure(let e): return .malformed(e.text)
                }
            }
            if n > Self.maxHead { return .malformed("the response head is longer than \(Self.maxHead) bytes") }
        }
        return .needMore
    }

    private struct Failure: Error { let text: String }

    private func parse(requestMethod: String) -> Result_<Head> {
        // Split on LF at the byte level ("\r\n" is one Character in Swift strings).
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> String in
            let trimmed = line.last == 0x0D ? line.dropLast() : line[...]
            return String(decoding: trimmed, as: UTF8.self)
        }
        while lines.first == "" { lines.removeFirst() }
        guard let statusLine = lines.first else { return .failure(Failure(text: "empty response")) }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...999).contains(status) else {
            return .failure(Failure(text: "the server's status line is not HTTP/1: '\(statusLine.prefix(60))'"))
        }
        var length: Int?
        var chunked = false
        var closes = parts[0] == "HTTP/1.0"
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            switch name {
            case "content-length": length = Int(value)
            case "transfer-encoding": chunked = value.lowercased().split(separator: ",").last.map { $0.trimmingCharacters(in: " \t") == "chunked" } ?? false
            case "connection":
                let options = value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
                if options.contains("close") { closes = true }
                if options.contains("keep-alive") { closes = false }
            default: break
            }
        }
        let framing: HTTPBodyScanner.Framing
        if requestMethod == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
            framing = .none
        } else if chunked {
            framing = .chunked
        } else if let length {
            framing = length == 0 ? .none : .length(length)
        } else {
            framing = .untilClose
        }
        return .success(Head(status: status, framing: framing, closes: closes))
    }

    private enum Result_<T> {
        case success(T)
        case failure(Failure)
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
