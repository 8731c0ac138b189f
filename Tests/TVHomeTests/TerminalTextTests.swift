import Foundation
import Testing
@testable import TVHome

/// Issue 12 §4: text from the network reaches the terminal only as visible escapes. Every
/// expectation is the exact string printed (a `#"…"#` literal holds its backslashes as typed).
@Suite("TerminalText")
struct TerminalTextTests {
    @Test("ESC, CSI, OSC and BEL lose their power and show what they were")
    func escapeSequences() {
        // Clear the screen (CSI 2J), move home, set the title (OSC 0 … BEL), a colour.
        #expect(TerminalText.line("a\u{1B}[2J\u{1B}[Hb") == #"a\x1b[2J\x1b[Hb"#)
        #expect(TerminalText.line("x\u{1B}]0;pwned\u{07}y") == #"x\x1b]0;pwned\x07y"#)
        #expect(TerminalText.line("\u{1B}]8;;http://evil.test\u{1B}\\link\u{1B}]8;;\u{1B}\\")
                == #"\x1b]8;;http://evil.test\x1b\link\x1b]8;;\x1b\"#)
        #expect(TerminalText.line("\u{1B}[31mred\u{1B}[0m") == #"\x1b[31mred\x1b[0m"#)
        // The 8-bit CSI and OSC (C1 controls, as UTF-8 scalars) and the rest of C1.
        #expect(TerminalText.line("\u{9B}2J\u{9D}0;t\u{9C}") == #"\u{9B}2J\u{9D}0;t\u{9C}"#)
        #expect(TerminalText.line("\u{80}\u{85}\u{9F}") == #"\u{80}\u{85}\u{9F}"#)
    }

    @Test("NUL, DEL and every other C0 control, as \\xHH")
    func controls() {
        #expect(TerminalText.line("a\u{00}b") == #"a\x00b"#)
        #expect(TerminalText.line("\u{7F}") == #"\x7f"#)
        #expect(TerminalText.line("\u{01}\u{08}\u{0B}\u{0C}\u{1F}") == #"\x01\x08\x0b\x0c\x1f"#)
        for value in UInt32(0)..<0x20 {
            let escaped = TerminalText.line(String(Unicode.Scalar(value)!))
            #expect(escaped.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, "U+\(value) → \(escaped)")
        }
    }

    @Test("a line field cannot forge a line or break the columns; a text keeps LF and TAB")
    func lineEnds() {
        #expect(TerminalText.line("evil.test\nFlow 9: bank.test") == #"evil.test\nFlow 9: bank.test"#)
        #expect(TerminalText.line("a\r\nb\tc") == #"a\r\nb\tc"#)
        #expect(TerminalText.text("a\nb\tc") == "a\nb\tc")
        #expect(TerminalText.text("a\r\u{1B}[2Kb\u{07}") == #"a\x0d\x1b[2Kb\x07"#)
    }

    @Test("bidi controls and line separators are named, in both shapes")
    func bidi() {
        // "txt.exe" shown as "exe.txt" by a right-to-left override.
        #expect(TerminalText.line("invoice\u{202E}txt.exe") == #"invoice\u{202E}txt.exe"#)
        #expect(TerminalText.text("invoice\u{202E}txt.exe") == #"invoice\u{202E}txt.exe"#)
        let all = "\u{061C}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}\u{2028}\u{2029}"
        #expect(TerminalText.line(all)
                == #"\u{61C}\u{200E}\u{200F}\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}\u{2066}\u{2067}\u{2068}\u{2069}\u{2028}\u{2029}"#)
    }

    @Test("ordinary text is kept as it is: accents, CJK, emoji (with joiners), punctuation")
    func ordinaryText() {
        for text in ["café.example", "例え.テスト", "naïve — “quoted” ½", "👩‍💻 🇫🇷", "GET /a?b=c&d=%1B HTTP/1.1", ""] {
            #expect(TerminalText.line(text) == text)
            #expect(TerminalText.text(text) == text)
        }
    }

    @Test("a run of backslashes is doubled only where it would read as an escape")
    func backslashes() {
        // Kept: a certificate subject's RFC 2253 escapes, a JSON body's \" and \u00e9, a path's
        // \\ (a trial's C:\\Users showed as C:\\\Users).
        #expect(TerminalText.line(#"CN=a\,b"#) == #"CN=a\,b"#)
        #expect(TerminalText.text(#"{"a":"\"q\" \u00e9 \n"}"#) == #"{"a":"\"q\" \u00e9 \n"}"#)
        #expect(TerminalText.text(#"C:\\Users"#) == #"C:\\Users"#)
        #expect(TerminalText.line(#"a\\b"#) == #"a\\b"#)
        #expect(TerminalText.text(#"a\"#) == #"a\"#)
        // Doubled, the whole run: before x, u{, an escaped character; in a line also n, r, t.
        #expect(TerminalText.line(#"\x1b"#) == #"\\x1b"#)
        #expect(TerminalText.line(#"\u{202E}"#) == #"\\u{202E}"#)
        #expect(TerminalText.line(#"C:\temp\new"#) == #"C:\\temp\\new"#)
        #expect(TerminalText.text(#"\\x1b"#) == #"\\\\x1b"#)
        #expect(TerminalText.line("a\\\u{1B}") == #"a\\\x1b"#)
        #expect(TerminalText.text("a\\\\\u{1B}") == #"a\\\\\x1b"#)
        #expect(TerminalText.text(#"\n"#) == #"\n"#)
        #expect(TerminalText.text(#"\u0041 \ux"#) == #"\u0041 \ux"#)
        // So a literal "\x1b" and a real ESC print differently.
        #expect(TerminalText.line(#"\x1b"#) != TerminalText.line("\u{1B}"))
    }

    /// Reads an escaped text back by the rule `TerminalText` documents.
    static func unescape(_ text: String, line: Bool) -> String {
        let s = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func hex(_ digits: ArraySlice<Unicode.Scalar>) -> Unicode.Scalar { Unicode.Scalar(UInt32(String(String.UnicodeScalarView(digits)), radix: 16)!)! }
        while i < s.count {
            guard s[i] == "\\" else {
                out.append(s[i])
                i += 1
                continue
            }
            var end = i
            while end < s.count, s[end] == "\\" { end += 1 }
            let run = end - i
            let next: Unicode.Scalar? = end < s.count ? s[end] : nil
            let escapeLetter = next == "x" || (next == "u" && end + 1 < s.count && s[end + 1] == "{") || (line && (next == "n" || next == "r" || next == "t"))
            guard escapeLetter else {
                out.append(contentsOf: repeatElement("\\", count: run))
                i = end
                continue
            }
            out.append(contentsOf: repeatElement("\\", count: run / 2))
            i = end
            guard run % 2 == 1, let letter = next else { continue }
            switch letter {
            case "x":
                out.append(hex(s[(end + 1)..<(end + 3)]))
                i = end + 3
            case "u":
                let close = s[end...].firstIndex(of: "}")!
                out.append(hex(s[(end + 2)..<close]))
                i = close + 1
            default:
                out.append(letter == "n" ? "\n" : letter == "r" ? "\r" : "\t")
                i = end + 1
            }
        }
        return String(out)
    }

    @Test("every text reads back from its escaped form, in both shapes")
    func readsBack() {
        let alphabet: [Unicode.Scalar] = ["\\", "x", "u", "{", "}", "n", "t", "1", "b", "\u{1B}", "\n", "\t", "\r", "\u{202E}", "\u{9B}", "é"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            var text = String.UnicodeScalarView()
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            for _ in 0..<Int(seed >> 60) {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text.append(alphabet[Int(seed >> 33) % alphabet.count])
            }
            let original = String(text)
            #expect(Self.unescape(TerminalText.line(original), line: true) == original, "\(original.debugDescription) → \(TerminalText.line(original))")
            #expect(Self.unescape(TerminalText.text(original), line: false) == original, "\(original.debugDescription) → \(TerminalText.text(original))")
        }
    }

    @Test("the console's guard leaves escaped and ordinary lines alone and escapes what was missed")
    func guarded() {
        let escaped = TerminalText.line("a\u{1B}]0;t\u{07}")
        #expect(TerminalText.guarded(escaped) == escaped)
        #expect(TerminalText.guarded("two\nlines\twith a tab\n") == "two\nlines\twith a tab\n")
        #expect(TerminalText.guarded(#"C:\x"#) == #"C:\x"#)
        #expect(TerminalText.guarded("missed \u{1B}[2J\n") == #"missed \x1b[2J"# + "\n")
    }

    @Test("JSON writes the same controls as \\u escapes, and C0 as before")
    func json() {
        #expect(JSONValue.string("a\u{1B}b\u{07}\u{00}\u{7F}\u{9B}\u{202E}é").serialized()
                == #""a\u001bb\u0007\u0000\u007f\u009b\u202eé""#)
    }
}

@Suite("Shell words for the commands tv suggests")
struct ShellWordTests {
    @Test("plain words as they are, others in single quotes, control and bidi characters in ANSI-C quotes that bash reads back to the same bytes")
    func quoting() throws {
        #expect(ShellWord.quote("curl") == "curl")
        #expect(ShellWord.quote("a b") == "'a b'")
        #expect(ShellWord.quote("it's") == #"'it'\''s'"#)
        #expect(ShellWord.quote("User-Agent: ua\u{1B}[31mRED") == #"$'User-Agent: ua\x1b[31mRED'"#)
        #expect(ShellWord.quote("a\u{202E}b'c\\d") == #"$'a\u202eb\'c\\d'"#)
        // bash reads each back to the word itself.
        for word in ["User-Agent: ua\u{1B}[31mRED", "a\u{202E}b'c\\d", "tab\there", "nul-less \u{7F} del"] {
            let script = "printf %s " + ShellWord.quote(word)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let out = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(String(decoding: out, as: UTF8.self) == word, "\(script)")
        }
    }
}
