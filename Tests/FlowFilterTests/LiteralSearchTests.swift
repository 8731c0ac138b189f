@testable import FlowFilter
import Testing

/// The byte search of plain ASCII literals (`LiteralSearch`) against ICU's case-insensitive
/// search, which it must answer as: exact verdicts, then random texts of ASCII, the characters
/// whose case folding holds ASCII letters, and other characters, compared with ICU's answer.
@Suite struct LiteralSearchTests {
    func verdict(_ literal: String, _ text: String) -> LiteralSearch.Verdict? {
        guard let search = LiteralSearch(literal) else { return nil }
        var text = text
        return text.withUTF8 { search.verdict(in: $0) }
    }

    @Test("which sources are literals: printable ASCII without regex syntax")
    func literals() {
        #expect(LiteralSearch("password")?.folded == Array("password".utf8))
        #expect(LiteralSearch("API_Key: x-y/z #1")?.folded == Array("api_key: x-y/z #1".utf8))
        for regex in ["pass.*", "a|b", "\\d", "^x", "x$", "(a)", "[ab]", "a{2}", "a+", "a?", ""] { #expect(LiteralSearch(regex) == nil, "\(regex)") }
        #expect(LiteralSearch("straße") == nil, "a non-ASCII literal is ICU's")
        #expect(LiteralSearch("tab\there") == nil)
        // Only the special characters that can stand for the literal's letters are looked for.
        #expect(LiteralSearch("xyz")?.specials == [[0xE1, 0xBA, 0x99]])
        #expect(LiteralSearch("123")?.specials == [])
    }

    @Test("verdicts: found in ASCII case aside, absent without a special character, ICU asked around one")
    func verdicts() {
        #expect(verdict("Password", "my PASSWORD is") == .found)
        #expect(verdict("password", "nothing here") == .absent)
        #expect(verdict("password", "pässwörd, ünïcödé") == .absent, "no character that folds to one of its letters")
        #expect(verdict("pw", "p") == .absent)
        // "ſ" (U+017F, 2 bytes at 2–3) may be an "s": ICU looks at it with up to 4 × 8 bytes around.
        #expect(verdict("password", "paſsword") == .askICU([0..<9]))
        let long = String(repeating: "x", count: 50) + "ſ" + String(repeating: "y", count: 50)
        #expect(verdict("sa", long) == .askICU([42..<60]))
        // Two specials close together: one window.
        #expect(verdict("ss", "aaaaaaaaaaßaſaaaaaaaaaaaaaaaaaaaaaa") == .askICU([2..<23]))
        // More than eight apart: ICU over the whole text once.
        let spread = Array(repeating: "ß" + String(repeating: "x", count: 20), count: 9).joined()
        #expect(verdict("ss", spread) == .askICUEverywhere)
        #expect(verdict("ss", Array(repeating: "ß" + String(repeating: "x", count: 20), count: 8).joined())?.windows == 8)
    }

    /// Deterministic: SplitMix64.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    @Test("random texts: the same answer as ICU's for every literal")
    func againstICU() throws {
        let pieces = ["p", "a", "s", "S", "w", "o", "r", "d", "k", "K", "f", "F", "i", "I", "l", "t", "n", "j", "h", "y", "x", " ", "-",
                      "ß", "ẞ", "ſ", "\u{212A}", "ﬀ", "ﬁ", "ﬂ", "ﬃ", "ﬄ", "ﬅ", "ﬆ", "İ", "ŉ", "ǰ", "ẖ", "ẗ", "ẘ", "ẙ", "ẚ",
                      "é", "ü", "中", "😀", "\u{0307}", "\u{FFFD}"]
        let literals = ["password", "ss", "SS", "k", "fi", "ffi", "ffl", "st", "n", "i", "j", "h", "a", "wy", "sk", "fl", "is", "kfi", "pass word", "x-y"]
        var random = Random(state: 0x7476)
        var asked = 0, compared = 0, matched = 0
        for _ in 0..<4_000 {
            let length = random.below(120)
            let text = (0..<length).map { _ in pieces[random.below(pieces.count)] }.joined()
            for source in literals {
                let pattern = try #require(FilterPattern(source, dotAll: true))
                let icu = pattern.searchICU(text)
                #expect(pattern.search(text) == icu, "\(source) in \(text.unicodeScalars.map { String($0.value, radix: 16) })")
                if case .askICU = verdict(source, text) { asked += 1 }
                compared += 1
                if icu { matched += 1 }
            }
        }
        // The comparison covered all three verdicts many times.
        #expect(compared == 80_000 && asked > 1_000 && matched > 5_000, "asked \(asked), matched \(matched)")
    }
}

extension LiteralSearch.Verdict {
    /// How many windows ICU is asked about (nil: not windows).
    var windows: Int? { if case .askICU(let w) = self { return w.count }; return nil }
}
