import FlowTerms
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPReading
import Testing
@testable import TVCore

/// `tv request ID --curl` sends what the client sent: exact command lines, then the printed
/// commands run by a real curl against a local server that answers with the request it read.
@Suite struct CurlReplayTests {
    static func exchange(_ method: String, version: String = "HTTP/1.1", scheme: String = "https", authority: String = "example.com",
                         bodyBytes: Int = 0) -> ExchangeRecord {
        ExchangeRecord(id: 5, flowID: 2, sequence: 1, httpVersion: version, method: method, scheme: scheme, authority: authority,
                       path: "/p", requestBodyBytes: Int64(bodyBytes), requestTime: 0, state: .complete)
    }

    static func request(_ startLine: String, _ headers: [(String, String)], body: [UInt8] = []) -> HTTPMessage {
        HTTPMessage(startLine: startLine, headers: headers.map { HTTPHeader($0.0, $0.1) },
                    body: HTTPBody(framing: body.isEmpty ? "none" : "content-length", transferred: body), turn: 1, offset: 0)
    }

    @Test("a body starting with @ goes as --data-raw, so curl sends it and reads no file (a trial's @/etc/hostname)")
    func atBodyIsData() {
        let body = Array("@/etc/hostname".utf8)
        let curl = CurlCommand(Self.exchange("POST", bodyBytes: 14), request: Self.request(
            "POST /p HTTP/1.1", [("Host", "example.com"), ("Content-Type", "text/plain"), ("Content-Length", "14")], body: body))
        #expect(curl.command == "curl --http1.1 https://example.com/p -H 'Content-Type: text/plain' -H User-Agent: -H Accept: --data-raw @/etc/hostname")
        // CR, LF, tab and ESC are the body's own bytes, in ANSI-C quotes.
        let lines = CurlCommand(Self.exchange("PUT", bodyBytes: 9), request: Self.request(
            "PUT /p HTTP/1.1", [("Host", "example.com"), ("Content-Type", "text/plain"), ("User-Agent", "u"), ("Accept", "*/*")],
            body: Array("a\r\nb\n\tc\u{1B}".utf8)))
        #expect(lines.command == #"curl --http1.1 -X PUT https://example.com/p -H 'Content-Type: text/plain' -H 'User-Agent: u' -H 'Accept: */*' --data-raw $'a\x0d\x0ab\x0a\x09c\x1b'"#)
    }

    @Test("a header sent empty is -H 'Name;' (curl reads 'Name:' as removing it)")
    func emptyHeader() {
        let curl = CurlCommand(Self.exchange("GET"), request: Self.request(
            "GET /p HTTP/1.1", [("Host", "example.com"), ("X-Empty", ""), ("User-Agent", ""), ("Accept", "*/*")]))
        #expect(curl.command == "curl --http1.1 https://example.com/p -H 'X-Empty;' -H 'User-Agent;' -H 'Accept: */*'")
        #expect(CurlCommand.headerWord(HTTPHeader("X-Space", " ")) == "X-Space;")
        #expect(CurlCommand.headerWord(HTTPHeader("X-A", "b")) == "X-A: b")
    }

    @Test("curl's own headers are removed only where the request lacked them: User-Agent, Accept; with a body Content-Type; past 1 KiB over HTTP/1.1 Expect")
    func curlsOwnHeaders() {
        #expect(CurlCommand.ownHeaders(bodyBytes: nil, version: "HTTP/1.1") == ["User-Agent", "Accept"])
        #expect(CurlCommand.ownHeaders(bodyBytes: 1_024, version: "HTTP/1.1") == ["User-Agent", "Accept", "Content-Type"])
        #expect(CurlCommand.ownHeaders(bodyBytes: 1_025, version: "HTTP/1.1") == ["User-Agent", "Accept", "Content-Type", "Expect"])
        #expect(CurlCommand.ownHeaders(bodyBytes: 1_025, version: "HTTP/2") == ["User-Agent", "Accept", "Content-Type"])
        #expect(CurlCommand.ownHeaders(bodyBytes: 1_025, version: "HTTP/1.0") == ["User-Agent", "Accept", "Content-Type"])
        // Present in any case (HTTP/2's names are lower case): kept as sent, nothing removed.
        let h2 = CurlCommand(Self.exchange("POST", version: "HTTP/2", bodyBytes: 3), request: Self.request(
            "POST /p HTTP/2", [(":method", "POST"), (":path", "/p"), (":authority", "example.com"), ("user-agent", "app/2"),
                               ("accept", "application/json"), ("content-type", "application/json")], body: Array("{}\n".utf8)))
        #expect(h2.command == "curl --http2 https://example.com/p -H 'user-agent: app/2' -H 'accept: application/json' -H 'content-type: application/json' --data-raw $'{}\\x0a'")
        // A form body without its Content-Type past 1 KiB: curl's type and Expect removed.
        let big = String(repeating: "a", count: 1_100)
        let form = CurlCommand(Self.exchange("POST", scheme: "http", bodyBytes: 1_100), request: Self.request(
            "POST /p HTTP/1.1", [("Host", "example.com"), ("User-Agent", "u"), ("Accept", "*/*")], body: Array(big.utf8)))
        #expect(form.command == "curl http://example.com/p -H 'User-Agent: u' -H 'Accept: */*' -H Content-Type: -H Expect: --data-raw \(big)")
    }

    @Test("a target that is not a path or an http(s) URL goes as --request-target, never as a word curl could read as an option")
    func requestTarget() {
        #expect(CurlCommand.url(target: "/a?b", scheme: "https", authority: "h") == ("https://h/a?b", nil))
        #expect(CurlCommand.url(target: "HTTP://h:8080/a", scheme: "http", authority: "h:8080") == ("HTTP://h:8080/a", nil))
        #expect(CurlCommand.url(target: "*", scheme: "http", authority: "h") == ("http://h", "*"))
        #expect(CurlCommand.url(target: "file:///etc/passwd", scheme: "http", authority: "h") == ("http://h", "file:///etc/passwd"))
        let options = CurlCommand(Self.exchange("OPTIONS", scheme: "http"), request: Self.request(
            "OPTIONS -o/tmp/x HTTP/1.1", [("Host", "example.com"), ("User-Agent", "u"), ("Accept", "*/*")]))
        #expect(options.command == "curl -X OPTIONS --request-target -o/tmp/x http://example.com -H 'User-Agent: u' -H 'Accept: */*'")
    }

    /// What a server read, as its echo gives it back: the head's lines after the request line,
    /// and the body.
    struct Read: Equatable, CustomStringConvertible {
        var requestLine: String
        var headers: [String]
        var body: [UInt8]
        var description: String { "\(requestLine) \(headers) \(String(decoding: body, as: UTF8.self).debugDescription)" }

        init(requestLine: String, headers: [String], body: [UInt8]) {
            self.requestLine = requestLine
            self.headers = headers
            self.body = body
        }

        init?(echo: [UInt8]) {
            guard let end = (0..<max(0, echo.count - 3)).first(where: { Array(echo[$0..<($0 + 4)]) == [13, 10, 13, 10] }) else { return nil }
            var lines: [String] = []
            var start = 0
            for index in 0...end where index == end || (echo[index] == 13 && echo[index + 1] == 10) {
                lines.append(String(decoding: echo[start..<index], as: UTF8.self))
                start = index + 2
            }
            requestLine = lines[0]
            headers = Array(lines.dropFirst())
            body = Array(echo[(end + 4)...])
        }
    }

    @Test("the printed commands, run by curl, send the request the client sent: its body's bytes, its empty header, no header it lacked")
    func replayedThroughCurl() throws {
        let server = try EchoServer()
        defer { server.stop() }
        let authority = "127.0.0.1:\(server.port)"
        func replay(_ method: String, _ startLine: String, _ headers: [(String, String)], body: [UInt8] = [], version: String = "HTTP/1.1") throws -> Read? {
            let curl = CurlCommand(Self.exchange(method, version: version, scheme: "http", authority: authority, bodyBytes: body.count),
                                   request: Self.request(startLine, headers, body: body))
            let run = try Self.bash(curl.command + " -s --max-time 10")
            return Read(echo: run)
        }
        // The trial's body: the 14 bytes, not the file.
        let at = try replay("POST", "POST /up HTTP/1.1", [("Host", authority), ("Content-Length", "14")], body: Array("@/etc/hostname".utf8))
        #expect(at == Read(requestLine: "POST /up HTTP/1.1", headers: ["Host: \(authority)", "Content-Length: 14"], body: Array("@/etc/hostname".utf8)), "\(String(describing: at))")
        // An empty header, no User-Agent or Accept: as sent (curl writes an empty field `Name:`).
        let empty = try replay("GET", "GET /e?q=1 HTTP/1.1", [("Host", authority), ("X-Empty", ""), ("X-B", "1")])
        #expect(empty == Read(requestLine: "GET /e?q=1 HTTP/1.1", headers: ["Host: \(authority)", "X-Empty:", "X-B: 1"], body: []), "\(String(describing: empty))")
        // Every line end and control of a text body, past 1 KiB, with no Content-Type.
        let text = Array(("line\r\nnext\n\ttab \u{1B}[31m @x 'quote' \\ $HOME `cmd`\r" + String(repeating: "z", count: 1_100)).utf8)
        let body = try replay("PUT", "PUT /t HTTP/1.1", [("Host", authority), ("User-Agent", "app/1"), ("Content-Length", "\(text.count)")], body: text)
        #expect(body == Read(requestLine: "PUT /t HTTP/1.1", headers: ["Host: \(authority)", "User-Agent: app/1", "Content-Length: \(text.count)"], body: text),
                "\(String(describing: body))")
        // HTTP/1.0, a typed body, an OPTIONS *.
        let old = try replay("POST", "POST /o HTTP/1.0", [("Host", authority), ("Accept", "text/html"), ("Content-Type", "application/json"), ("Content-Length", "2")],
                             body: Array("{}".utf8), version: "HTTP/1.0")
        #expect(old == Read(requestLine: "POST /o HTTP/1.0", headers: ["Host: \(authority)", "Accept: text/html", "Content-Type: application/json", "Content-Length: 2"],
                            body: Array("{}".utf8)), "\(String(describing: old))")
        let star = try replay("OPTIONS", "OPTIONS * HTTP/1.1", [("Host", authority)])
        #expect(star == Read(requestLine: "OPTIONS * HTTP/1.1", headers: ["Host: \(authority)"], body: []), "\(String(describing: star))")
    }

    /// Standard output of `bash -c command` (bash: Debian's /bin/sh, dash 0.5.12, reads no
    /// `$'…'`, in which the command writes a control character).
    static func bash(_ command: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(out)
    }
}

/// A loopback HTTP/1 server (Python) that answers each request with the bytes of the request it
/// read (head and Content-Length body), then closes.
final class EchoServer {
    static let script = #"""
    import socket, sys, threading
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    print(s.getsockname()[1], flush=True)
    def serve(c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                d = c.recv(65536)
                if not d:
                    return
                data += d
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                d = c.recv(65536)
                if not d:
                    break
                body += d
            out = head + b"\r\n\r\n" + body
            c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(out) + out)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#

    let port: Int
    private let process = Process()

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var line: [UInt8] = []
        while line.last != 0x0A {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw CocoaError(.fileReadCorruptFile)
        }
        self.port = port
    }

    /// SIGKILL: a child of the test runner inherits its blocked SIGTERM (a run waited forever).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
