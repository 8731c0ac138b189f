/// Whether bytes read as text for a person: valid UTF-8 — a character cut off at the very end is
/// tolerated (the recording budget cuts anywhere) — holding no C0 control other than tab, CR and
/// LF. DEL and the C1 controls (U+007F–U+009F) do not make bytes binary: in UTF-8 a C1 control
/// is a two-byte sequence that text (a JSON string may hold one as it is) writes on purpose, and
/// every view draws them escaped (`TerminalText` on a terminal, `visible` in tv web's pages). A
/// JSON body holding U+0080 was drawn as text by `tv request` (its pretty-printer) and as a hex
/// dump by tv web (this rule): a trial. The one rule for text or hex, in every command and page.
public enum PrintableText {
    /// The text, or nil when the bytes are not printable text. A cut last character is dropped.
    public static func text(_ bytes: some Collection<UInt8>) -> String? {
        let bytes = Array(bytes)
        let whole = bytes.count - cutCharacterLength(bytes)
        guard let text = String(validating: bytes[..<whole], as: UTF8.self) else { return nil }
        return text.unicodeScalars.contains(where: makesBinary) ? nil : text
    }

    /// Whether `scalar`, in valid UTF-8, makes the bytes binary: a C0 control other than tab,
    /// LF and CR (NUL, ESC…). Pure; the rule `text` and `Scanner` share.
    public static func makesBinary(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D
    }

    /// How many bytes at the end form the start of a UTF-8 sequence that was cut short (0…3).
    public static func cutCharacterLength(_ bytes: [UInt8]) -> Int {
        var back = 0
        while back < min(3, bytes.count) {
            let byte = bytes[bytes.count - 1 - back]
            if byte & 0xC0 == 0x80 {  // a continuation byte: keep looking for the lead
                back += 1
                continue
            }
            let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return needed > back + 1 ? back + 1 : 0
        }
        return 0
    }
}

extension PrintableText {
    /// `PrintableText.text`'s decision over bytes that come in pieces: feed each with `take`,
    /// then read `printable` and `cutCharacter`. Holds at most 3 bytes between pieces.
    public struct Scanner: Sendable, Equatable {
        /// The start of a character the last piece ended inside.
        private var carry: [UInt8] = []
        private var refused = false

        /// A scanner that has seen nothing (which reads as text).
        public init() {}

        /// Scans the next piece.
        public mutating func take(_ piece: some Collection<UInt8>) {
            guard !refused else { return }
            let bytes = carry + piece
            let whole = bytes.count - PrintableText.cutCharacterLength(bytes)
            carry = Array(bytes[whole...])
            guard let text = String(validating: bytes[..<whole], as: UTF8.self) else {
                refused = true
                return
            }
            if text.unicodeScalars.contains(where: PrintableText.makesBinary) { refused = true }
        }

        /// Whether everything taken reads as text (a character cut off at the very end tolerated).
        public var printable: Bool { !refused }
        /// Bytes at the end that start a character cut short (0…3); dropped when shown as text.
        public var cutCharacter: Int { refused ? 0 : carry.count }
    }
}
