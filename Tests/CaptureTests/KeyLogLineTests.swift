@testable import Capture
import Testing

/// `KeyLogLine` splits NSS key log text (SSLKEYLOGFILE) into its three fields.
@Suite("KeyLogLine: the fields of an NSS key log's lines")
struct KeyLogLineTests {
    func lines(_ text: String) -> [KeyLogLine] { Array(text.utf8).withUnsafeBytes { KeyLogLine.lines(in: $0) } }

    @Test("three fields a line, by byte ranges; blank, `#` comment (even of three words), two- and four-field lines and empty fields skipped; a last line without a newline counts")
    func fields() {
        let text = "# two words\n\nA bb cc\nTWO fields\nFOUR f i e\nX  y z\nLAST r s"
        #expect(lines(text) == [
            KeyLogLine(line: 13..<20, label: 13..<14, random: 15..<17, secret: 18..<20),
            KeyLogLine(line: 50..<58, label: 50..<54, random: 55..<56, secret: 57..<58),
        ])
    }

    @Test("the client random: exactly 64 hex digits, either case, as TLSClientRandom's four big-endian words")
    func clientRandom() {
        // A line as OpenSSL 3's keylog callback writes it (lower-case hex).
        let random = (0..<32).map { String(format: "%02x", $0) }.joined()
        let text = Array("CLIENT_RANDOM \(random) \(String(repeating: "ab", count: 48))\nCLIENT_RANDOM \(random.uppercased()) 00\nCLIENT_RANDOM \(random.dropLast()) 00\nCLIENT_RANDOM \(random.dropLast())g 00\n".utf8)
        let found = text.withUnsafeBytes { raw in KeyLogLine.lines(in: raw).map { $0.clientRandom(in: raw) } }
        let expected = TLSClientRandom(words: (0x0001_0203_0405_0607, 0x0809_0a0b_0c0d_0e0f, 0x1011_1213_1415_1617, 0x1819_1a1b_1c1d_1e1f))
        #expect(found == [expected, expected, nil, nil])
        #expect(text.withUnsafeBytes { raw in KeyLogLine.lines(in: raw).map { $0.hasLabel("CLIENT_RANDOM", in: raw) } } == [true, true, true, true])
        #expect(text.withUnsafeBytes { raw in KeyLogLine.lines(in: raw)[0].hasLabel("CLIENT_RANDOM_", in: raw) } == false)
    }
}
