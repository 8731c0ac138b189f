import FlowStore
import FlowTerms
import Foundation
import Recording
import Testing

/// Issue 12 §4: strings that came from the network — SNI and host names, ALPN, certificate
/// fields, failure reasons, HTTP/1 and HTTP/2 start lines, header names and values, `:path`,
/// bodies read as text, pinned hosts — never reach the terminal as ESC, CSI, OSC, BEL, NUL, C1 or
/// bidi controls, in any command; they show as `TerminalText` escapes. The data folder is filled
/// through the real writers, as `tv run` would fill it.
@Suite(.serialized) struct TerminalEscapeCLITests {
    /// Clears the screen, sets the window title, rings the bell, then reverses what follows.
    static let attack = "\u{1B}[2J\u{1B}]0;pwned\u{07}\u{202E}"
    /// The same, as `TerminalText.line` prints it.
    static let shown = #"\x1b[2J\x1b]0;pwned\x07\u{202E}"#
    /// A host name from the network holding the attack and a newline that tries to forge a row.
    static let host = "evil" + attack + "moc.test\nFlow 99: forged.test"
    static let hostShown = "evil" + shown + #"moc.test\nFlow 99: forged.test"#

    /// Flow 1: inspected, hostile SNI, ALPN, certificate and error, HTTP/1.1 content with bidi in
    /// a header, the reason phrase and the body. Flow 2: HTTP/2 with ESC in a header name and
    /// value, NUL and the 8-bit CSI in a value, CSI and OSC in `:path`, bidi in the body.
    /// Flow 3: failed, a reason quoting the peer. Flow 4: an HTTP/1 request head holding ESC.
    /// A pinned host holding the attack.
    static func makeHome() throws -> (folder: String, dataDir: String) {
        let folder = NSTemporaryDirectory() + "/tv-escape-cli-\(getpid())-\(UUID().uuidString)"
        let dataDir = folder + "/data"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: dataDir + "/tunnelvision.sqlite3")
        let writer = try store.makeWriter()
        let start: Int64 = 1_764_471_900_000_000
        writer.open(FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "192.0.2.1",
                               serverPort: 443, host: host, hostOrigin: .sni, alpn: "h2" + attack, tlsVersion: "TLSv1.3",
                               status: .inspected, error: "peer said " + attack,
                               clientVersions: ["TLSv1.3" + attack], clientALPN: ["h2", "x" + attack],
                               certificateSubject: "CN=" + attack, certificateIssuer: "O=" + attack,
                               certificateSANs: ["DNS:" + attack], certificateNotBefore: start, certificateNotAfter: start))
        writer.open(FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_001, serverAddress: "192.0.2.1",
                               serverPort: 443, host: "h2.test", hostOrigin: .sni, alpn: "h2", status: .inspected))
        writer.open(FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_002, serverAddress: "192.0.2.1",
                               serverPort: 443, host: "failed.test", hostOrigin: .sni, status: .failed,
                               failureReason: "the server sent alert '" + attack + "'"))
        writer.open(FlowRecord(startTime: start, clientAddress: "127.0.0.1", clientPort: 50_003, serverAddress: "192.0.2.1",
                               serverPort: 80, host: "plain.test", hostOrigin: .connect, status: .notEncrypted))
        writer.close()
        try store.pinnedHosts.remember("pinned" + attack + ".test", reason: "alert " + attack, at: start)
        try store.clientPins.remember(clientAddress: "127.0.0.1", clientHello: "aaaaaaaaaaaa", host: "client" + attack + ".test", port: 443,
                                      kind: .lacksRoot, reason: "alert " + attack, at: start)
        store.close()

        var configuration = ContentWriterConfiguration(databasePath: dataDir + "/tunnelvision.sqlite3", directory: dataDir + "/content")
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration), policy: ContentPolicy(keep: true))
        let one = try #require(session.recorder(flow: 1))
        one.record(.clientToServer, at: 0, Array("GET /invoice\u{202E}fdp.exe HTTP/1.1\r\nHost: a.test\r\nX-Note: \u{2066}hidden\u{2069}\r\n\r\n".utf8))
        let body = Array("invoice\u{202E}txt.exe\tand text\n".utf8)
        one.record(.serverToClient, at: 1_500, Array("HTTP/1.1 200 O\u{202E}K\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        one.finish()

        let two = try #require(session.recorder(flow: 2))
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        let request = [0x82, 0x87] + literal(index: 4, Array("/\u{1B}[2J\u{1B}]0;path\u{07}".utf8))
            + literal(index: 1, Array("h2.test".utf8))
            + literal(name: Array("x-\u{1B}]0;name\u{07}".utf8), Array("v\u{1B}[31mred\u{00}\u{9B}2J".utf8))
        two.record(.clientToServer, at: 0, preface + frame(4, 0, 0, []) + frame(1, 0x05, 1, request))
        let response = [0x88] + literal(name: Array("x-title".utf8), Array("\u{1B}]2;title\u{07}\u{202E}".utf8))
        two.record(.serverToClient, at: 800, frame(1, 0x04, 1, response) + frame(0, 0x01, 1, body))
        two.finish()

        let four = try #require(session.recorder(flow: 4))
        four.record(.clientToServer, at: 0, Array("GET /\u{1B}]0;head\u{07} HTTP/1.1\r\nHost: plain.test\r\n\r\n".utf8))
        four.finish()
        session.writer.close()
        return (folder, dataDir)
    }

    /// An HTTP/2 frame: 24-bit length, type, flags, stream.
    static func frame(_ type: UInt8, _ flags: UInt8, _ stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF), type, flags,
                UInt8(stream >> 24), UInt8((stream >> 16) & 0xFF), UInt8((stream >> 8) & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    /// HPACK (RFC 7541 §6.2.2) "literal without indexing": by a static-table name index, or with
    /// a new name; lengths under 127, no Huffman coding.
    static func literal(index: UInt8, _ value: [UInt8]) -> [UInt8] { [index, UInt8(value.count)] + value }
    static func literal(name: [UInt8], _ value: [UInt8]) -> [UInt8] { [0x00, UInt8(name.count)] + name + [UInt8(value.count)] + value }

    static func expectClean(_ data: Data, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(rawTerminalControls(in: data) == [], "\(what) wrote raw controls", sourceLocation: sourceLocation)
        // A newline from a host name must not start a line of its own.
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("Flow 99") }, "\(what) printed a forged line", sourceLocation: sourceLocation)
    }

    static func run(_ arguments: [String], dataDir: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (status: Int32, out: String, err: String) {
        let result = try ContentCLITests.tv(arguments, dataDir: dataDir)
        expectClean(result.data, "tv " + arguments.joined(separator: " "), sourceLocation: sourceLocation)
        expectClean(Data(result.err.utf8), "tv " + arguments.joined(separator: " ") + " (standard error)", sourceLocation: sourceLocation)
        return (result.status, result.out, result.err)
    }

    @Test("no command prints a raw control or bidi character from the network")
    func everyCommandEscapes() throws {
        let (folder, dataDir) = try Self.makeHome()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let flows = try Self.run(["flows"], dataDir: dataDir)
        #expect(flows.status == 0)
        // The list cuts a host over 40 characters in its middle (its escaped form counts).
        let listedHost = Self.hostShown.count > 40 ? String(Self.hostShown.prefix(12)) + "…" + String(Self.hostShown.suffix(27)) : Self.hostShown
        #expect(flows.out.contains("  " + listedHost + "  h2" + Self.shown + " :443  "), "\(flows.out)")
        #expect(flows.out.contains("failed: the server sent alert '" + Self.shown + "'"))

        let flow = try Self.run(["flow", "1"], dataDir: dataDir)
        #expect(flow.status == 0)
        let lines = flow.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Flow 1: " + Self.hostShown)
        #expect(lines.contains("  error        peer said " + Self.shown))
        #expect(lines.contains("  offered      versions TLSv1.3" + Self.shown + "; ALPN h2, x" + Self.shown))
        #expect(lines.contains("  chosen       TLSv1.3; ALPN h2" + Self.shown))
        #expect(lines.contains("  certificate  CN=" + Self.shown))
        #expect(lines.contains("    issuer     O=" + Self.shown))
        #expect(lines.contains("    names      DNS:" + Self.shown))
        #expect(try Self.run(["flow", "3"], dataDir: dataDir).out.contains("  status       failed — the server sent alert '" + Self.shown + "'\n"))

        let turns = try Self.run(["turns", "1"], dataDir: dataDir)
        #expect(turns.out.contains("  GET /invoice\\u{202E}fdp.exe HTTP/1.1\n"))
        #expect(turns.out.contains("  invoice\\u{202E}txt.exe\tand text\n"))

        let http1 = try Self.run(["turns", "1", "--http"], dataDir: dataDir)
        #expect(http1.out.contains("    GET /invoice\\u{202E}fdp.exe HTTP/1.1\n    Host: a.test\n    X-Note: \\u{2066}hidden\\u{2069}\n"))
        #expect(http1.out.contains("    HTTP/1.1 200 O\\u{202E}K\n"))
        #expect(http1.out.contains("      invoice\\u{202E}txt.exe\tand text\n"))

        let h2 = try Self.run(["turns", "2", "--http"], dataDir: dataDir)
        #expect(h2.status == 0)
        #expect(h2.out.contains(#"    GET /\x1b[2J\x1b]0;path\x07 HTTP/2"# + "\n"))
        #expect(h2.out.contains(#"    x-\x1b]0;name\x07: v\x1b[31mred\x00\u{9B}2J"# + "\n"))
        #expect(h2.out.contains(#"    x-title: \x1b]2;title\x07\u{202E}"# + "\n"))
        #expect(h2.out.contains("      invoice\\u{202E}txt.exe\tand text\n"))

        let head = try Self.run(["turns", "4", "--http"], dataDir: dataDir)
        #expect(head.status == 0)
        #expect(head.out.hasPrefix("Flow 4: plain.test"))

        for arguments in [["flows", "--json"], ["flow", "1", "--json"], ["flow", "3", "--json"], ["turns", "1", "--json"],
                          ["turns", "2"], ["turns", "2", "--json"], ["turns", "2", "--http", "--json"], ["turns", "2", "--turn", "1"],
                          ["turns", "4"], ["turns", "4", "--json"], ["turns", "1", "--http", "--full"], ["pinned", "--json"]] {
            _ = try Self.run(arguments, dataDir: dataDir)
        }
        // JSON escapes the same characters and still reads back as what was recorded.
        let json = try ContentCLITests.tv(["flow", "1", "--json"], dataDir: dataDir)
        let object = try JSONSerialization.jsonObject(with: json.data) as? [String: Any]
        #expect(object?["host"] as? String == Self.host)

        // Pinned hosts are remembered in lower case.
        let pinnedShown = "pinned" + #"\x1b[2j\x1b]0;pwned\x07\u{202E}"# + ".test"
        let pinned = try Self.run(["pinned"], dataDir: dataDir)
        let clientShown = "client" + #"\x1b[2j\x1b]0;pwned\x07\u{202E}"# + ".test:443"
        #expect(pinned.out.hasPrefix(clientShown + "  lacks tv's root  127.0.0.1 (hello aaaaaaaaaaaa)                     refused tv 1×, last "), "\(pinned.out)")
        #expect(pinned.out.contains("\n" + pinnedShown + String(repeating: " ", count: clientShown.count - pinnedShown.count)
                                    + "  pinned           every client and port (remembered by an older tv)  refused tv "), "\(pinned.out)")
        #expect(pinned.out.contains("  alert " + Self.shown + "\n"))
        let notPinned = try Self.run(["pinned", "forget", "other" + Self.attack], dataDir: dataDir)
        #expect(notPinned.status == 1)
        #expect(notPinned.err.contains("other" + Self.shown + " is not listed by `tv pinned`; nothing to forget."))

        let harPath = folder + "/out.har"
        let har = try Self.run(["export", "har", "1", "2", "4", "-o", harPath], dataDir: dataDir)
        #expect(har.status == 0)
        Self.expectClean(try #require(FileManager.default.contents(atPath: harPath)), "the HAR file")

        let forgot = try Self.run(["pinned", "forget", "pinned" + Self.attack + ".test"], dataDir: dataDir)
        #expect(forgot.status == 0)
        #expect(forgot.out.hasPrefix("Forgot " + pinnedShown + ";"))
    }

    @Test("--raw sends no text holding bidi controls to a terminal, and writes it to a file byte for byte")
    func rawOnATerminal() throws {
        let (folder, dataDir) = try Self.makeHome()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Standard output (and error) on a pseudo-terminal: all it shows is the refusal.
        let shown = try PseudoTerminal.run(try TVBinary.require(), ["--data-dir", dataDir, "turns", "1", "--turn", "2", "--raw"],
                                           in: folder, environment: Run.environment(home: folder))
        #expect(shown.status == 1 && shown.before == nil, "\(shown)")
        #expect(shown.after == "tv: Turn 2 is binary or holds control characters, and standard output is a terminal; write it with -o FILE or redirect it.\n")

        let path = folder + "/turn.bin"
        #expect(try ContentCLITests.tv(["turns", "1", "--turn", "2", "--raw", "-o", path], dataDir: dataDir).status == 0)
        let written = try #require(FileManager.default.contents(atPath: path))
        #expect(String(decoding: written, as: UTF8.self) == "HTTP/1.1 200 O\u{202E}K\r\nContent-Length: 27\r\n\r\ninvoice\u{202E}txt.exe\tand text\n")
    }
}
