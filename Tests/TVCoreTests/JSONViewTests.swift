import FlowTerms
import Foundation
import HTTPReading
import Testing
import TVHome
@testable import TVCore

/// `tv request ID`'s JSON body view: its lines read back as the JSON the server sent (a trial's
/// `"x\ty"` showed as `"x\\ty"`), nothing a terminal acts on reaches it, and its size is bounded
/// (a 57 KB body printed 27,025 lines; one nested 500 deep printed 59.5 MB).
@Suite struct JSONViewTests {
    static let exchange = ExchangeRecord(id: 8, flowID: 3, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                         authority: "example.com", path: "/j", status: 200, reason: "OK", requestTime: 0, state: .complete)

    /// The lines of the response body as `tv request` prints them (after its `body:` line).
    static func bodyLines(_ body: [UInt8], full: Bool = false, type: String = "application/json") -> [String] {
        let recorded = HTTPExchange(
            request: HTTPMessage(startLine: "GET /j HTTP/1.1", headers: [HTTPHeader("Host", "example.com")], body: HTTPBody(framing: "none"), turn: 1, offset: 0),
            response: HTTPMessage(startLine: "HTTP/1.1 200 OK", headers: [HTTPHeader("Content-Type", type), HTTPHeader("Content-Length", "\(body.count)")],
                                  body: HTTPBody(framing: "content-length", transferred: body), turn: 2, offset: 100))
        var lines: [String] = []
        RequestDetailPresentation(exchange: exchange, recorded: recorded, full: full).write(reader: BoundedBodyReader()) { lines.append($0) }
        guard let at = lines.lastIndex(where: { $0.hasPrefix("    body: ") }) else { return lines }
        return Array(lines[(at + 1)...])
    }

    /// `value` parsed, written again with sorted keys, so two parses compare as text.
    static func canonical(_ text: some Collection<UInt8>) -> String? {
        guard let value = try? JSONSerialization.jsonObject(with: Data(text), options: [.fragmentsAllowed]),
              let again = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else { return nil }
        return String(decoding: again, as: UTF8.self)
    }

    @Test("escapes in strings are shown as sent: \\t stays \\t, \\\\ stays \\\\")
    func escapesAsSent() {
        #expect(Self.bodyLines(Array(#"{"a":"x\ty"}"#.utf8)) == ["      {", #"        "a": "x\ty""#, "      }"])
        #expect(Self.bodyLines(Array(#"["x\ny\\z","C:\\Users",  "\u001b[2J \"q\" \/"]"#.utf8))
                == ["      [", #"        "x\ny\\z","#, #"        "C:\\Users","#, #"        "\u001b[2J \"q\" \/""#, "      ]"])
    }

    @Test("what a terminal acts on, held raw in a string, is written as the JSON escape of the same character")
    func terminalCharactersAsJSONEscapes() throws {
        let body = Array("{\"k\u{202E}\":\"a\u{9B}2J\u{7F}\u{2028}é😀\"}".utf8)
        let lines = Self.bodyLines(body)
        #expect(lines == ["      {", #"        "k\u202e": "a\u009b2J\u007f\u2028é😀""#, "      }"])
        #expect(!lines.joined().unicodeScalars.contains(where: TerminalText.isEscaped))
        #expect(Self.canonical(Array(lines.joined(separator: "\n").utf8)) == Self.canonical(body))
    }

    @Test("the view of JSON with every kind of escape parses back to what was sent", arguments: [
        #"{"a":"x\ty","b":"x\ny\\z","c":"\"\\\/\b\f\n\r\t","d":"\u0000\u001f\u00e9\ud83d\ude00"}"#,
        #"[1,-2.5e3,true,false,null,{},[],{"":""},"\\\\\\\\",["\\u0041"]]"#,
        "{ \"spaced\" :\t[ 1 ,\r\n 2 ] , \"tab\\tkey\" : \"v\" }",
        #""a lone string with \\ and \" in it""#,
        "{\"raw\":\"é \u{85} \u{200F} \u{2029}\"}",
    ])
    func readsBackAsSent(_ json: String) throws {
        let body = Array(json.utf8)
        let lines = Self.bodyLines(body, full: true)
        let shown = lines.map { String($0.dropFirst(6)) }.joined(separator: "\n")
        #expect(try #require(Self.canonical(Array(shown.utf8))) == Self.canonical(body), "\(lines)")
    }

    @Test("a preview stops after 100 lines, and says how much of the body it showed")
    func previewLineCap() {
        let body = Array(("[" + (0..<2_000).map { "\"item\($0)\"" }.joined(separator: ",") + "]").utf8)
        let lines = Self.bodyLines(body)
        // `[` and items 0…98: 1 + 10 × 8 + 89 × 9 bytes.
        #expect(lines.count == 101)
        #expect(lines.first == "      [")
        #expect(lines[99] == #"        "item98","#)
        #expect(lines.last == "      … showing 882 of \(Units.grouped(Int64(body.count))) bytes; --full prints all that was kept.")
        let full = Self.bodyLines(body, full: true)
        #expect(full.count == 2_002 && full.last == "      ]" && !full.contains { $0.hasPrefix("      …") })
    }

    @Test("a preview stops after 1,024 bytes of the body, inside a long string if need be")
    func previewByteCap() {
        let body = Array(("{\"data\":\"" + String(repeating: "a", count: 60_000) + "\"}").utf8)
        #expect(Self.bodyLines(body) == [
            "      {",
            "        \"data\": \"" + String(repeating: "a", count: 1_015),
            "      … showing 1,024 of 60,011 bytes; --full prints all that was kept.",
        ])
        // A multi-byte character is never cut: the byte before it ends the preview.
        let wide = Array(("[\"a" + String(repeating: "é", count: 600) + "\"]").utf8)
        #expect(Self.bodyLines(wide) == ["      [", "        \"a" + String(repeating: "é", count: 510), "      … showing 1,023 of 1,205 bytes; --full prints all that was kept."])
    }

    @Test("nesting past 16 levels stays on one line, so a deep body costs about its own size even with --full")
    func deepNesting() {
        let deep = Array((String(repeating: "[", count: 500) + "1" + String(repeating: "]", count: 500)).utf8)
        let lines = JSONIndentation.lines(deep) ?? []
        #expect(lines.count == 33)
        #expect(lines[15] == String(repeating: " ", count: 30) + "[")
        #expect(lines[16] == String(repeating: " ", count: 32) + String(repeating: "[", count: 484) + "1" + String(repeating: "]", count: 484))
        #expect(lines[17] == String(repeating: " ", count: 30) + "]")
        #expect(lines.reduce(0) { $0 + $1.utf8.count + 1 } == 1_546)
        // Members deeper than the last indented level: without spaces, as sent without whitespace.
        let objects = Array((String(repeating: "{\"a\":", count: 17) + "{\"x\":1, \"y\":[2,3]}" + String(repeating: "}", count: 17)).utf8)
        let nested = JSONIndentation.lines(objects) ?? []
        #expect(nested.count == 33)
        #expect(nested[15] == String(repeating: " ", count: 30) + "\"a\": {")
        #expect(nested[16] == String(repeating: " ", count: 32) + #""a": {"a":{"x":1,"y":[2,3]}}"#)
        #expect(nested[32] == "}")
    }

    @Test("a text body's backslashes are shown as sent; only a run before an escape's letter is doubled")
    func plainTextBackslashes() {
        #expect(Self.bodyLines(Array(#"C:\\Users and C:\temp"#.utf8), type: "text/plain") == [#"      C:\\Users and C:\temp"#])
        #expect(Self.bodyLines(Array("literal \\x1b and \\u{9B}, real \u{9B}".utf8), type: "text/plain") == [#"      literal \\x1b and \\u{9B}, real \u{9B}"#])
    }
}
