/// A filter regex that is a plain ASCII literal (`password`, `api_key`), searched in UTF-8
/// bytes instead of through ICU, with the same answers as ICU's case-insensitive search.
///
/// Why: `~b` searched every kept body by bridging it to UTF-16 for `NSRegularExpression`: 24 s
/// over 511 MiB of kept bodies where grep took 0.5 s (a trial). Most bodies searched for a word
/// hold it, or hold no byte that ICU's case folding could read as it.
///
/// Exactness: an ASCII run of the text that equals the literal case-insensitively is an ICU
/// match, and ICU matches nothing else in ASCII text. Outside ASCII, only the 19 characters whose
/// full case folding (Unicode 14's CaseFolding.txt, C+F, as Python's `str.casefold` computed it)
/// holds an ASCII letter can take part in a match (`ß` is "ss", `ſ` "s", `K` (U+212A) "k", `ﬁ`
/// "fi", `İ` "i̇" …). When the literal is not found in the bytes and such a character (of a letter
/// the literal has) is in the text, ICU decides, over the text around each of them only: a match
/// through one spans at most the literal's length in characters on either side.
struct LiteralSearch: Sendable, Equatable {
    /// The literal's bytes, ASCII letters lowercased.
    let folded: [UInt8]
    /// UTF-8 of the special characters whose folding holds one of the literal's letters.
    let specials: [[UInt8]]

    /// The UTF-8 of each non-ASCII character whose full case folding holds an ASCII letter, with
    /// those letters.
    static let foldingToASCII: [(utf8: [UInt8], letters: String)] = [
        ([0xC3, 0x9F], "s"), ([0xC4, 0xB0], "i"), ([0xC5, 0x89], "n"), ([0xC5, 0xBF], "s"), ([0xC7, 0xB0], "j"),
        ([0xE1, 0xBA, 0x96], "h"), ([0xE1, 0xBA, 0x97], "t"), ([0xE1, 0xBA, 0x98], "w"), ([0xE1, 0xBA, 0x99], "y"),
        ([0xE1, 0xBA, 0x9A], "a"), ([0xE1, 0xBA, 0x9E], "s"), ([0xE2, 0x84, 0xAA], "k"),
        ([0xEF, 0xAC, 0x80], "f"), ([0xEF, 0xAC, 0x81], "fi"), ([0xEF, 0xAC, 0x82], "fl"), ([0xEF, 0xAC, 0x83], "fi"),
        ([0xEF, 0xAC, 0x84], "fl"), ([0xEF, 0xAC, 0x85], "st"), ([0xEF, 0xAC, 0x86], "st"),
    ]

    /// The search for `source`, nil unless it is a non-empty ASCII literal: printable ASCII with
    /// none of ICU's regex syntax characters (`\ ^ $ . | ? * + ( ) [ ] { }`).
    init?(_ source: String) {
        let bytes = Array(source.utf8)
        let syntax = Set("\\^$.|?*+()[]{}".utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && !syntax.contains($0) }) else { return nil }
        folded = bytes.map(Self.lower)
        let letters = Set(folded)
        specials = Self.foldingToASCII.filter { $0.letters.utf8.contains(where: letters.contains) }.map(\.utf8)
    }

    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// What the bytes tell.
    enum Verdict: Equatable {
        case found
        case absent
        /// ICU must look at these byte ranges of the text (around characters its folding could
        /// read as the literal's letters), at most `mostWindows` of them.
        case askICU([Range<Int>])
        /// ICU must look at the whole text: more such characters than `mostWindows` (a body with
        /// "Straße" in every record), where one search costs less than a string and a search per
        /// window (measured: 2× slower).
        case askICUEverywhere
    }

    /// The most windows ICU is asked about one by one.
    static let mostWindows = 8

    /// Whether the literal is at `i` (case aside; `i + count` within `text`).
    @inline(__always)
    private func matches(_ text: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        var j = 0
        while j < folded.count && Self.lower(text[i + j]) == folded[j] { j += 1 }
        return j == folded.count
    }

    /// Searches `text` (valid UTF-8, as a Swift string holds it): eight bytes at a time for the
    /// literal's first byte (`| 0x20` folds a letter's case, a word holding a zero byte after
    /// the XOR holds a candidate; what else it lets through is checked whole), OR-ing the words
    /// to learn whether any byte is beyond ASCII. A byte at a time this ran at ~0.5 GB/s, a third
    /// of `tv requests --filter '~b …'`; Swift's `SIMD32` compiled to per-element code, slower
    /// still (perf).
    func verdict(in text: UnsafeBufferPointer<UInt8>) -> Verdict {
        let m = folded.count, n = text.count
        guard let base = text.baseAddress, n > 0 else { return .absent }
        let first = folded[0]
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let wanted = UInt64(first) &* ones
        let fold: UInt64 = first >= 0x61 && first <= 0x7A ? 0x2020_2020_2020_2020 : 0
        var words: UInt64 = 0
        var nonASCII: UInt8 = 0
        let last = n - m  // the last start a match can have (negative: none)
        var i = 0
        while i + 8 <= n {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            words |= word
            let y = (word | fold) ^ wanted
            if (y &- ones) & ~y & highs != 0 {
                for k in i..<(i + 8) where k <= last && Self.lower(text[k]) == first && matches(text, at: k) { return .found }
            }
            i += 8
        }
        while i < n {
            let byte = text[i]
            nonASCII |= byte
            if i <= last && Self.lower(byte) == first && matches(text, at: i) { return .found }
            i += 1
        }
        if words & highs != 0 { nonASCII |= 0x80 }
        guard nonASCII & 0x80 != 0, !specials.isEmpty else { return .absent }
        // Each special character found, widened by the literal's length in characters (at most
        // 4 bytes each) on both sides, moved out to character boundaries; overlapping ones merged.
        var windows: [Range<Int>] = []
        i = 0
        while i < n {
            let byte = text[i]
            if byte >= 0xC3, let special = specials.first(where: { Self.has($0, in: text, at: i) }) {
                var start = max(0, i - 4 * m), end = min(n, i + special.count + 4 * m)
                while start > 0 && text[start] & 0xC0 == 0x80 { start -= 1 }
                while end < n && text[end] & 0xC0 == 0x80 { end += 1 }
                if let previous = windows.last, previous.upperBound >= start {
                    windows[windows.count - 1] = previous.lowerBound..<end
                } else {
                    guard windows.count < Self.mostWindows else { return .askICUEverywhere }
                    windows.append(start..<end)
                }
                i += special.count
            } else {
                i += 1
            }
        }
        return windows.isEmpty ? .absent : .askICU(windows)
    }

    @inline(__always)
    static func has(_ bytes: [UInt8], in text: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        guard i + bytes.count <= text.count else { return false }
        for k in 0..<bytes.count where text[i + k] != bytes[k] { return false }
        return true
    }
}
