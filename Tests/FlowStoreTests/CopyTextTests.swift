import Testing
@testable import FlowStore

/// `CopyText`: PostgreSQL's COPY text format (PostgreSQL documentation, COPY, "File Formats:
/// Text Format"), byte for byte.
@Suite struct CopyTextTests {
    func row(_ values: [SQLiteValue]) -> String {
        var out: [UInt8] = []
        CopyText.appendRow(values, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func valuesAreTabSeparatedWithBackslashNForNullAndANewlineAtTheEnd() {
        #expect(row([.integer(7), .null, .text("a\tb")]) == "7\t\\N\ta\\tb\n")
        #expect(row([.integer(-42), .real(0.5), .text("")]) == "-42\t0.5\t\n")
        #expect(row([]) == "\n")
    }

    @Test func textEscapesBackslashTabNewlineAndCarriageReturnAndNULBecomesReplacement() {
        #expect(row([.text("a\\b\nc\rd\u{0}é→")]) == "a\\\\b\\nc\\rd\u{FFFD}é→\n")
        // Other control characters travel as they are (the format escapes only these four).
        #expect(row([.text("bell\u{7}")]) == "bell\u{7}\n")
        // A backslash alone is escaped too (it would start an escape sequence).
        #expect(row([.text("\\N")]) == "\\\\N\n")
    }

    @Test func blobIsByteaHexWithItsBackslashEscaped() {
        #expect(row([.blob([0x0a, 0xff, 0x00])]) == "\\\\x0aff00\n")
        #expect(row([.blob([])]) == "\\\\x\n")
    }
}
