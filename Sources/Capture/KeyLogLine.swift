/// One line of an NSS key log (the SSLKEYLOGFILE text OpenSSL's keylog callback writes and
/// pcapng's Decryption Secrets Blocks carry, pcapng §4.7 and NSS's "Key Log Format"):
/// `LABEL CLIENT_RANDOM SECRET`, three fields separated by one space, the client random and the
/// secret in hex, one line per secret. Every reader of key log text in tv splits it here: the
/// capture writer (which client randoms got their secret, `TLSClientRandom`) and the audit bundle's
/// cut (`PcapngCut`, which lines belong to the session's connections).
///
/// A line is a set of byte ranges into the text it was read from (no copy).
public struct KeyLogLine: Equatable, Sendable {
    /// The whole line, without its newline.
    public let line: Range<Int>
    /// The label (`CLIENT_TRAFFIC_SECRET_0`, `CLIENT_RANDOM`, …).
    public let label: Range<Int>
    /// The client random's hex, as written (64 digits in a well-formed line; not checked here).
    public let random: Range<Int>
    /// The secret's hex, as written.
    public let secret: Range<Int>

    /// Calls `body` with each line of `text` that has exactly three non-empty fields separated by
    /// single spaces, in order. Other lines (blank, `#` comments, fewer or more fields, a field
    /// left empty by two spaces) are skipped; a last line without a newline counts.
    public static func forEach(in text: UnsafeRawBufferPointer, _ body: (KeyLogLine) throws -> Void) rethrows {
        var start = 0
        while start < text.count {
            var end = start
            var spaces: (Int, Int, extra: Bool) = (-1, -1, false)
            while end < text.count, text[end] != 0x0a {
                if text[end] == 0x20 {
                    if spaces.0 < 0 { spaces.0 = end } else if spaces.1 < 0 { spaces.1 = end } else { spaces.extra = true }
                }
                end += 1
            }
            let (first, second) = (spaces.0, spaces.1)
            if !spaces.extra, text[start] != 0x23, first > start, second > first + 1, end > second + 1 {
                try body(KeyLogLine(line: start..<end, label: start..<first, random: first + 1..<second, secret: second + 1..<end))
            }
            start = end + 1
        }
    }

    /// The lines `forEach` finds in `text`.
    public static func lines(in text: UnsafeRawBufferPointer) -> [KeyLogLine] {
        var found: [KeyLogLine] = []
        forEach(in: text) { found.append($0) }
        return found
    }

    /// The client random this line names, read from `text` (the text the line was found in):
    /// nil unless its field is exactly 64 hex digits (either case).
    public func clientRandom(in text: UnsafeRawBufferPointer) -> TLSClientRandom? {
        guard random.count == 64 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for i in 0..<4 {
            var word: UInt64 = 0
            for digit in text[random.lowerBound + 16 * i..<random.lowerBound + 16 * (i + 1)] {
                guard let value = KeyLogLine.hexValue(digit) else { return nil }
                word = word << 4 | UInt64(value)
            }
            switch i {
            case 0: words.0 = word
            case 1: words.1 = word
            case 2: words.2 = word
            default: words.3 = word
            }
        }
        return TLSClientRandom(words: words)
    }

    /// Whether this line's label is `label` (exact bytes), read from `text`.
    public func hasLabel(_ label: String, in text: UnsafeRawBufferPointer) -> Bool {
        label.utf8.elementsEqual(text[self.label])
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
}
