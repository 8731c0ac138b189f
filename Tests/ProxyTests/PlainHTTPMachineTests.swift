@testable import Proxy
import Testing
import Wire
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The plain-HTTP machine, playbook style: events in, the exact commands out.
@Suite("PlainHTTPMachine")
struct PlainHTTPMachineTests {
    typealias Machine = PlainHTTPMachine
    typealias Command = PlainHTTPMachine.Command

    static let first = FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000))
    static let server = SocketAddress(numericHost: "127.0.0.1", port: 8080)!
    static let second = SocketAddress(numericHost: "127.0.0.1", port: 8081)!

    /// A machine after `.start` at 1 s; flows after the first get ids 100, 101…
    static func started() -> Machine {
        final class IDs { var next: UInt64 = 100 }
        let ids = IDs()
        var m = Machine(settings: .init(), facts: first, newFlowID: { defer { ids.next += 1 }; return ids.next })
        #expect(run(&m, .start, at: 1) == [.armTimer(at: 301_000_000_000)])
        return m
    }

    /// The commands for `event` at `seconds` (wall clock: µs = seconds × 1000 + 1000).
    static func run(_ m: inout Machine, _ event: Machine.Event, at seconds: UInt64) -> [Command] {
        var out: [Command] = []
        m.handle(event, at: .init(nanos: seconds * 1_000_000_000, micros: Int64(seconds) * 1_000 + 1_000), into: &out)
        return out
    }

    static func client(_ m: inout Machine, _ text: String, at seconds: UInt64) -> [Command] {
        Array(text.utf8).withUnsafeBytes { run(&m, .clientBytes($0), at: seconds) }
    }

    static func server(_ m: inout Machine, _ text: String, at seconds: UInt64) -> [Command] {
        Array(text.utf8).withUnsafeBytes { run(&m, .serverBytes($0), at: seconds) }
    }

    static func flow(_ base: FlowFacts = first, port: UInt16 = 8080, server: Endpoint? = nil) -> FlowFacts {
        var flow = base
        flow.host = nil
        flow.hostOrigin = .none
        flow.port = port
        flow.status = .notEncrypted
        flow.server = server
        return flow
    }

    static let get = "GET http://127.0.0.1:8080/a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\n\r\n"
    static let forwarded = Array("GET /a HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n".utf8)

    /// Drives a first GET to "connected".
    static func requested(_ m: inout Machine) {
        _ = client(&m, get, at: 2)
        _ = run(&m, .connected, at: 2)
    }

    @Test("a request: the head starts its deadline, the flow is aimed, the leg opened, the head sent in origin-form without Proxy-*")
    func request() {
        var m = Self.started()
        #expect(Self.client(&m, Self.get, at: 2) == [
            .armTimer(at: 12_000_000_000), .updateFlow(Self.flow()), .newServerLeg, .armTimer(at: 12_000_000_000),
            .connect(Self.server), .sendServer(Self.forwarded, record: nil),
        ])
        let connected = Self.flow(server: Endpoint(address: "127.0.0.1", port: 8080))
        var sent = connected
        sent.bytesFromClient = UInt64(Self.forwarded.count)
        #expect(Self.run(&m, .connected, at: 2) == [.updateFlow(sent), .serverReady])
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        // The response's bytes are not told yet: the timer is armed for the trailing report.
        #expect(Self.server(&m, response, at: 3) == [.tallyFromServer(response.utf8.count, record: nil), .writeClient(0..<response.utf8.count, record: nil),
                                                    .armTimer(at: 5_000_000_000)])
        #expect(m.facts?.bytesFromServer == UInt64(response.utf8.count))
        #expect(!m.serverReadsPaused)
    }

    @Test("recording: the head and the response are recorded on the flow at their offsets")
    func recorded() {
        var m = Machine(settings: .init(recording: true), facts: Self.first, newFlowID: { 100 })
        _ = Self.run(&m, .start, at: 1)
        let out = Self.client(&m, Self.get, at: 2)
        #expect(out.last == .sendServer(Self.forwarded, record: .init(flow: 7, offsetMicros: 2_000)))
        _ = Self.run(&m, .connected, at: 2)
        let at3 = Machine.Recording(flow: 7, offsetMicros: 3_000)
        #expect(Self.server(&m, "HTTP/1.1 204 No Content\r\n\r\n", at: 3).prefix(2) == [.tallyFromServer(27, record: at3), .writeClient(0..<27, record: at3)])
        // A head in two reads: each read is recorded as the server said it; the rows read the
        // head once it goes on whole, at the second read's offset.
        _ = Self.client(&m, Self.get, at: 4)
        #expect(Self.server(&m, "HTTP/1.1 204 No", at: 5) == [.tallyFromServer(15, record: .init(flow: 7, offsetMicros: 5_000))])
        let at6 = Machine.Recording(flow: 7, offsetMicros: 6_000)
        #expect(Self.server(&m, " Content\r\n\r\n", at: 6).prefix(3) == [.tallyFromServer(12, record: at6), .sendClient(Array("HTTP/1.1 204 No".utf8), record: at6),
                                                                             .writeClient(0..<12, record: at6)])
    }

    @Test("a body is passed on by range as it comes; the next head starts its own deadline")
    func body() {
        var m = Self.started()
        _ = Self.client(&m, "POST http://127.0.0.1:8080/p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 5\r\n\r\n", at: 2)
        _ = Self.run(&m, .connected, at: 2)
        #expect(Self.client(&m, "abc", at: 3) == [.forwardToServer(0..<3, record: nil), .armTimer(at: 5_000_000_000)])
        #expect(Self.client(&m, "de", at: 4) == [.forwardToServer(0..<2, record: nil)])
        // The trailing report (2 s after the client's last byte) comes first, then the head's deadline.
        #expect(Self.client(&m, "G", at: 5) == [.armTimer(at: 7_000_000_000)])
        let quiet = Self.run(&m, .timer, at: 7)
        guard case .updateFlow(let told)? = quiet.first else { Issue.record("\(quiet)"); return }
        #expect(told.bytesFromClient == UInt64("POST /p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 5\r\n\r\n".utf8.count + 5))
        #expect(Array(quiet.dropFirst()) == [.armTimer(at: 15_000_000_000)])
    }

    @Test("a 101 turns the connection into a tunnel: client bytes go on raw, framing is no longer read")
    func upgrade() {
        var m = Self.started()
        _ = Self.client(&m, "GET http://127.0.0.1:8080/ws HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", at: 2)
        _ = Self.run(&m, .connected, at: 2)
        let switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{01}x"
        let n = switching.utf8.count
        #expect(Self.server(&m, switching, at: 3) == [.tallyFromServer(n, record: nil), .writeClient(0..<n, record: nil), .armTimer(at: 5_000_000_000)])
        #expect(Self.client(&m, "GET not a head", at: 4) == [.forwardToServer(0..<14, record: nil)])
        #expect(Self.run(&m, .clientEnded, at: 5) == [.shutdownServerWrite])
        var flow = m.facts!
        flow.durationMicros = 7_000 - 1_000
        #expect(Self.run(&m, .serverEnded, at: 6) == [.shutdownClientWrite(finishWhenSent: false), .closeServer(reset: false),
                                                     .closeFlow(flow, recorded: false), .close(reset: false)])
    }

    @Test("a request for another host waits for the previous response, then goes over a new leg as a new flow")
    func anotherHost() {
        var m = Self.started()
        Self.requested(&m)
        let other = "GET http://127.0.0.1:8081/b HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n"
        #expect(Self.client(&m, other, at: 3) == [.armTimer(at: 13_000_000_000)])
        #expect(m.paused)
        let done = m.facts!
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        let n = response.utf8.count
        var ended = done
        ended.bytesFromServer = UInt64(n)
        ended.lastActivityMicros = 4_000 + 1_000
        ended.durationMicros = 5_000 - 1_000
        var next = Self.flow(FlowFacts(id: 100, startMicros: 5_000, client: Self.first.client), port: 8081)
        next.bytesFromClient = 0
        let out = Self.server(&m, response, at: 4)
        #expect(out == [
            .tallyFromServer(n, record: nil), .writeClient(0..<n, record: nil), .armTimer(at: 6_000_000_000), .closeServer(reset: false), .closeFlow(ended, recorded: false),
            // The held head is parsed again: its deadline starts now.
            .armTimer(at: 14_000_000_000),
            .openFlow(FlowFacts(id: 100, startMicros: 5_000, client: Self.first.client)), .updateFlow(next), .newServerLeg,
            .armTimer(at: 14_000_000_000), .connect(Self.second),
            .sendServer(Array("GET /b HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n".utf8), record: nil), .runAgain,
        ], "\(out)")
        #expect(m.serverReadsPaused)
        #expect(!m.paused)
    }

    @Test("a response nobody asked for: the one asked for goes on, the rest is dropped and the server's leg reset (its flow says why); the next request opens a new leg as a new flow; empty lines between responses are let go")
    func unaskedResponse() {
        var m = Self.started()
        Self.requested(&m)
        let asked = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nresp-A"
        let injected = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nX-Evil: 1\r\n\r\nINJECTED!"
        let out = Self.server(&m, asked + injected, at: 3)
        let n = asked.utf8.count
        #expect(out.prefix(2) == [.tallyFromServer(n + injected.utf8.count, record: nil), .writeClient(0..<n, record: nil)], "\(out)")
        #expect(out.contains(.closeServer(reset: true)), "\(out)")
        guard case .closeFlow(let ended, _)? = out.last else { Issue.record("\(out)"); return }
        #expect(ended.error == "the server sent \(injected.utf8.count) bytes no request asked for (a response the client would have taken for its next request's); tv dropped them and closed the connection to the server")
        let next = Self.client(&m, Self.get, at: 4)
        #expect(next.contains(.connect(Self.server)) && next.contains(.newServerLeg), "\(next)")
        #expect(next.contains { if case .openFlow(let f) = $0 { return f.id == 100 } else { return false } }, "\(next)")

        // After a `Connection: close` response, the client's side is still closed once it is sent.
        var closing = Self.started()
        Self.requested(&closing)
        let closed = Self.server(&closing, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi" + injected, at: 3)
        #expect(closed.contains(.closeServer(reset: true)) && closed.contains(.shutdownClientWrite(finishWhenSent: true)), "\(closed)")

        var blank = Self.started()
        Self.requested(&blank)
        let lenient = Self.server(&blank, asked + "\r\n", at: 3)
        #expect(lenient.prefix(2) == [.tallyFromServer(n + 2, record: nil), .writeClient(0..<n, record: nil)], "\(lenient)")
        #expect(!lenient.contains(.closeServer(reset: true)))
    }

    @Test("Connection: close: after the response, half-close toward the client and finish once it is sent")
    func closeAfterResponse() {
        var m = Self.started()
        _ = Self.client(&m, "GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n", at: 2)
        _ = Self.run(&m, .connected, at: 2)
        let out = Self.server(&m, "HTTP/1.1 204 No Content\r\n\r\n", at: 3)
        #expect(out.suffix(1) == [.shutdownClientWrite(finishWhenSent: true)])
        #expect(Self.run(&m, .clientSent, at: 3).last == .close(reset: false))
        #expect(m.closed)
    }

    @Test("connect failures: the next address, then a 502 naming the target and the last error; the flow fails with it")
    func connectFailures() {
        var m = Self.started()
        _ = Self.client(&m, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", at: 2)
        #expect(Self.run(&m, .resolved([Self.server, Self.second], attempt: 1), at: 2) == [.connect(Self.server)])
        #expect(Self.run(&m, .resolved([Self.server], attempt: 0), at: 2) == [])
        #expect(Self.run(&m, .connectFailed(Errno(ECONNREFUSED)), at: 2) == [.connect(Self.second)])
        let out = Self.run(&m, .connectFailed(Errno(ECONNREFUSED)), at: 3)
        let reason = "tv could not connect to a.test:80 (connection refused)"
        var failed = Self.first
        failed.host = "a.test"
        failed.hostOrigin = .connect
        failed.port = 80
        failed.status = .failed
        failed.error = reason
        // Nothing reached a server: the head queued for it never left (it read 33 B up).
        failed.bytesFromClient = 0
        failed.durationMicros = 4_000 - 1_000
        #expect(out == [.answerClient(ConnectionMachine.errorResponse(502, body: reason), linger: false),
                        .closeServer(reset: false), .closeFlow(failed, recorded: false), .close(reset: false)], "\(out)")
    }

    @Test("no answer within the connect timeout: 504, the address kept as the flow's server")
    func connectTimeout() {
        var m = Self.started()
        _ = Self.client(&m, Self.get, at: 2)
        #expect(Self.run(&m, .timer, at: 11) == [.armTimer(at: 12_000_000_000)])
        let out = Self.run(&m, .timer, at: 12)
        let reason = "tv could not connect to 127.0.0.1:8080 (no answer)"
        guard case .answerClient(let bytes, false) = out.first else { Issue.record("\(out)"); return }
        #expect(bytes == ConnectionMachine.errorResponse(504, body: reason))
        guard case .closeFlow(let flow, _) = out[2] else { Issue.record("\(out)"); return }
        #expect(flow.server == Endpoint(address: "127.0.0.1", port: 8080))
        #expect(flow.error == reason)
    }

    @Test("a head not whole in time: 408 (lingering), counted, closed; the first flow fails with the head sentence")
    func headDeadline() {
        var m = Self.started()
        #expect(Self.client(&m, "GET http://127.0.0.1:8080/ HT", at: 2) == [.armTimer(at: 12_000_000_000)])
        #expect(Self.client(&m, "TP/1.1\r\n", at: 5) == [])
        let reason = "the client sent no complete request head within 10 s (tv closed the connection)"
        var failed = Self.first
        failed.status = .failed
        failed.error = reason
        failed.durationMicros = 13_000 - 1_000
        #expect(Self.run(&m, .timer, at: 12) == [.countHeadTimeout, .answerClient(HeadDeadline.requestTimeoutResponse(limitMillis: 10_000), linger: true),
                                                 .closeFlow(failed, recorded: false), .close(reset: false)])
    }

    @Test("a late head while a response is under way: closed without a 408 (it would be read as part of the response)")
    func headDeadlineUnderWay() {
        var m = Self.started()
        Self.requested(&m)
        _ = Self.client(&m, "GET http://127.0.0.1:8080/b", at: 3)
        let out = Self.run(&m, .timer, at: 13)
        #expect(out.first == .countHeadTimeout)
        #expect(!out.contains { if case .answerClient = $0 { return true } else { return false } })
        #expect(out.last == .close(reset: false))
    }

    @Test("requests it does not take: 400 with the sentence (431 for a head past 64 KiB); a malformed chunked body: 400")
    func refused() {
        var m = Self.started()
        let out = Self.client(&m, "GET /relative HTTP/1.1\r\nHost: a\r\n\r\n", at: 2)
        let reason = "tv forwards absolute-form http:// requests on this connection, not 'GET /relative'"
        #expect(out.contains(.answerClient(ConnectionMachine.errorResponse(400, body: reason), linger: false)))
        #expect(out.last == .close(reset: false))
        var chunked = Self.started()
        _ = Self.client(&chunked, "POST http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nTransfer-Encoding: chunked\r\n\r\n", at: 2)
        let bad = Self.client(&chunked, "zz\r\n", at: 3)
        #expect(bad.contains(.answerClient(ConnectionMachine.errorResponse(400, .chunkedBodyRefused(.client, .sizeNotHex(0x7A))), linger: false)))
        #expect(String(decoding: ConnectionMachine.errorResponse(400, .chunkedBodyRefused(.client, .sizeNotHex(0x7A))), as: UTF8.self).hasSuffix(
            "\r\n\r\ntv: the client's chunked body is malformed: A chunk size line starts with byte 0x7a, which is not a hexadecimal digit (RFC 9112 §7.1).\n"))
        // A chunk size past tv's count is said as tv's limit, not as malformed.
        var large = Self.started()
        _ = Self.client(&large, "POST http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nTransfer-Encoding: chunked\r\n\r\n", at: 2)
        let limit = Self.client(&large, "10000000000000002\r\nab\r\n0\r\n\r\n", at: 3)
        #expect(limit.contains(.answerClient(ConnectionMachine.errorResponse(400, .chunkedBodyRefused(.client, .sizeTooLarge)), linger: false)), "\(limit)")
        #expect(ConnectionFailure.chunkedBodyRefused(.client, .sizeTooLarge).sentence.hasPrefix("the client's chunked body is past a limit of tv's: "))
        // Valid bodies the trial's client sent go through whole: a 16-digit size with leading
        // zeros, an 8 KB extension, 70 KB of trailers (the 8 KB one got "400 … malformed").
        for body in ["0000000000000002\r\nab\r\n0\r\n\r\n", "2;x=" + String(repeating: "e", count: 8_000) + "\r\nab\r\n0\r\n\r\n",
                     "2\r\nab\r\n0\r\nX-T: " + String(repeating: "v", count: 70_000) + "\r\n\r\n"] {
            var valid = Self.started()
            _ = Self.client(&valid, "POST http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nTransfer-Encoding: chunked\r\n\r\n", at: 2)
            let out = Self.client(&valid, body, at: 3)
            #expect(!out.contains { if case .answerClient = $0 { return true } else { return false } }, "\(body.prefix(20))")
            #expect(out.contains(.forwardToServer(0 ..< body.utf8.count, record: nil)), "\(body.prefix(20)): \(out)")
        }
        // A head past 64 KiB on a kept-alive connection: 431 (RFC 6585 §5), not 400.
        var long = Self.started()
        let tooLarge = Self.client(&long, "GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Filler: " + String(repeating: "a", count: 70_000), at: 2)
        #expect(tooLarge.contains(.answerClient(ConnectionMachine.errorResponse(431, .requestUnreadable("The request head exceeds 65536 bytes without ending in an empty line.")), linger: false)))
        // Behind a request still waiting for its response: no answer yet (it would be read as
        // that request's: a re-check's pipelined GET took the 400), the client read no more;
        // once the response went on whole, tv's 400 and the close (it was a reset, and the
        // response never reached the client: a hostile-input trial).
        var piped = Self.started()
        let both = Self.client(&piped, Self.get + "POST http://127.0.0.1:8080/b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", at: 2)
        #expect(!both.contains { if case .answerClient = $0 { return true } else { return false } }, "\(both)")
        #expect(!both.contains { if case .close = $0 { return true } else { return false } }, "\(both)")
        #expect(!piped.readsClient)
        _ = Self.run(&piped, .connected, at: 2)
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let answered = Self.server(&piped, response, at: 3)
        #expect(answered.firstIndex(of: .writeClient(0 ..< response.utf8.count, record: nil)).map { $0 < answered.count - 2 } == true, "\(answered)")
        #expect(answered.contains { if case .answerClient(let bytes, _) = $0 { return bytes.starts(with: Array("HTTP/1.1 400 ".utf8)) } else { return false } }, "\(answered)")
        #expect(answered.last == .deliverThenClose(reset: false), "\(answered)")
    }

    @Test("the server closing before its response is complete: the flow says so; the client gets our FIN")
    func responseIncomplete() {
        var m = Self.started()
        Self.requested(&m)
        _ = Self.server(&m, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", at: 3)
        let out = Self.run(&m, .serverEnded, at: 4)
        guard case .closeFlow(let flow, _) = out.first else { Issue.record("\(out)"); return }
        #expect(flow.error == "the server closed the connection before its response was complete")
        #expect(Array(out.dropFirst()) == [.shutdownClientWrite(finishWhenSent: false), .closeServer(reset: false), .close(reset: false)])
    }

    @Test("a malformed response head: what came before it goes on, then tv's 502 with the reason, delivered before the close")
    func malformedResponse() {
        let reason = "The response has Content-Length values that disagree (3, 5), so its body cannot be delimited (RFC 9112 §6.3)."
        var m = Self.started()
        Self.requested(&m)
        let bad = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello"
        let out = Self.server(&m, bad, at: 3)
        guard out.count == 5, case .closeFlow(let flow, _) = out[3] else { Issue.record("\(out)"); return }
        #expect(flow.error == "the server's response was not understood: " + reason, "\(flow)")
        #expect(out[0] == .tallyFromServer(bad.utf8.count, record: nil))
        #expect(out[1] == .answerClient(ConnectionMachine.errorResponse(502, .responseUnreadable(reason)), linger: false), "\(out)")
        #expect(out[2] == .closeServer(reset: false) && out[4] == .deliverThenClose(reset: false), "\(out)")

        // Pipelined: the first response is whole and goes on; the second's head is garbage.
        var p = Self.started()
        Self.requested(&p)
        _ = Self.client(&p, Self.get, at: 2)
        let good = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        let both = Self.server(&p, good + "garbage\r\n\r\n", at: 3)
        #expect(both.prefix(2) == [.tallyFromServer(good.utf8.count + 11, record: nil), .writeClient(0..<good.utf8.count, record: nil)], "\(both)")
        #expect(both.contains { if case .answerClient(let bytes, _) = $0 { return bytes.starts(with: Array("HTTP/1.1 502 Bad Gateway\r\n".utf8)) } else { return false } }, "\(both)")

        // A head split across reads: its first part was held, so the 502 is still the client's
        // whole answer.
        var q = Self.started()
        Self.requested(&q)
        #expect(Self.server(&q, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n", at: 3) == [.tallyFromServer(36, record: nil), .armTimer(at: 5_000_000_000)])
        let split = Self.server(&q, "Content-Length: 5\r\n\r\n", at: 3)
        #expect(split.first == .tallyFromServer(21, record: nil) && split.contains(.answerClient(ConnectionMachine.errorResponse(502, .responseUnreadable(reason)), linger: false))
                && split.last == .deliverThenClose(reset: false), "\(split)")
        #expect(!split.contains { if case .sendClient = $0 { return true } else { return false } }, "\(split)")
    }

    @Test("the client ending its side while its response has not begun: tv still waits 30 s for it (a half-close), then closes without an answer nobody would read; a response that began goes on")
    func clientLeftWaiting() {
        var m = Self.started()
        Self.requested(&m)
        #expect(Self.run(&m, .clientEnded, at: 3) == [.shutdownServerWrite, .armTimer(at: 33_000_000_000)])
        #expect(m.abandonedDeadline == 33_000_000_000)
        let out = Self.run(&m, .timer, at: 33)
        guard out.count == 3, case .closeFlow(let flow, _) = out[1] else { Issue.record("\(out)"); return }
        #expect(out[0] == .closeServer(reset: false) && out[2] == .close(reset: false))
        #expect(flow.error == "the client closed the connection while it waited for the response, which had not begun when tv gave up waiting for it")
        #expect(!out.contains { if case .answerClient = $0 { return true } else { return false } })

        // A half-closing client whose response comes within the wait gets it whole.
        var h = Self.started()
        Self.requested(&h)
        _ = Self.run(&h, .clientEnded, at: 3)
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        #expect(Self.server(&h, response, at: 20).contains(.writeClient(0..<response.utf8.count, record: nil)))
        #expect(h.abandonedDeadline == nil)

        // The server closing in answer to the client's FIN (Node's servers do): the client left;
        // no 502 for it (it was recorded as a server failure and a 502 by tv: a trial).
        var n = Self.started()
        Self.requested(&n)
        _ = Self.run(&n, .clientEnded, at: 3)
        let ended = Self.run(&n, .serverEnded, at: 3)
        #expect(!ended.contains { if case .answerClient = $0 { return true } else { return false } }, "\(ended)")
        guard let closing = ended.first(where: { if case .closeFlow = $0 { return true } else { return false } }),
              case .closeFlow(let left, _) = closing else { Issue.record("\(ended)"); return }
        #expect(left.error == "the client closed the connection before the response began, and the server then closed its side too")
        #expect(left.status != .failed)
    }

    @Test("the Host the server gets is the absolute-form target's (RFC 9112 §3.2.2), in the place of the client's; a forged one goes (two are refused with 400 before)")
    func hostFromTheTarget() {
        var m = Self.started()
        let out = Self.client(&m, "GET http://127.0.0.1:8080/h HTTP/1.1\r\nAccept: */*\r\nHost: evil.example\r\nX-A: 1\r\n\r\n", at: 2)
        guard case .sendServer(let bytes, _)? = out.last else { Issue.record("\(out)"); return }
        #expect(String(decoding: bytes, as: UTF8.self) == "GET /h HTTP/1.1\r\nAccept: */*\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\n\r\n")
        var v6 = Self.started()
        // HTTP/1.0 needs no Host (1.1 without one is refused): one is added from the target.
        let none = Self.client(&v6, "GET http://[::1]/h HTTP/1.0\r\nAccept: */*\r\n\r\n", at: 2)
        guard case .sendServer(let made, _)? = none.last else { Issue.record("\(none)"); return }
        #expect(String(decoding: made, as: UTF8.self) == "GET /h HTTP/1.0\r\nAccept: */*\r\nHost: [::1]\r\n\r\n")
        // Field values go on as the bytes sent: UTF-8 "café", a lone 0xE9, 0xFF (a trial's reached
        // the server as UTF-8 of each byte: 0xC3 0x83 0xC2 0xA9 …).
        var raw = Self.started()
        let valueV: [UInt8] = Array("caf".utf8) + [0xC3, 0xA9]
        let valueW: [UInt8] = [0xE9, 0x20, 0xFF]
        var head: [UInt8] = Array("GET http://127.0.0.1:8080/b HTTP/1.1\r\nHost: a\r\nX-V: ".utf8)
        head += valueV
        head += Array("\r\nX-W: ".utf8)
        head += valueW
        head += Array("\r\n\r\n".utf8)
        let sent = head.withUnsafeBytes { Self.run(&raw, .clientBytes($0), at: 2) }
        guard case .sendServer(let forwarded, _)? = sent.last else { Issue.record("\(sent)"); return }
        var expected: [UInt8] = Array("GET /b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-V: ".utf8)
        expected += valueV
        expected += Array("\r\nX-W: ".utf8)
        expected += valueW
        expected += Array("\r\n\r\n".utf8)
        #expect(Array(forwarded) == expected)
    }

    @Test("fields the Connection header names are not forwarded (RFC 9110 §7.6.1), but framing, Host, Upgrade and Connection itself stay")
    func hopByHopFields() {
        var m = Self.started()
        let head = "POST http://127.0.0.1:8080/p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: keep-alive, X-Hop, Content-Length, Upgrade\r\n"
            + "X-Hop: secret\r\nKeep-Alive: timeout=5\r\nUpgrade: websocket\r\nContent-Length: 2\r\nX-End: 1\r\n\r\n"
        let out = Self.client(&m, head, at: 2)
        guard case .sendServer(let bytes, _)? = out.last else { Issue.record("\(out)"); return }
        #expect(String(decoding: bytes, as: UTF8.self) == "POST /p HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: keep-alive, X-Hop, Content-Length, Upgrade\r\n"
                + "Upgrade: websocket\r\nContent-Length: 2\r\nX-End: 1\r\n\r\n")
    }

    @Test("a response head split across reads is held until whole, then goes on in order: the held start, then the chunk")
    func splitResponseHead() {
        var m = Self.started()
        Self.requested(&m)
        let start = "HTTP/1.1 200 OK\r\nConte"
        let rest = "nt-Length: 3\r\n\r\nabc"
        let first = Self.server(&m, start, at: 3)
        #expect(first == [.tallyFromServer(start.utf8.count, record: nil), .armTimer(at: 5_000_000_000)])
        #expect(!m.isBetweenExchanges)
        let second = Self.server(&m, rest, at: 3)
        #expect(second == [.tallyFromServer(rest.utf8.count, record: nil), .sendClient(Array(start.utf8), record: nil), .writeClient(0..<rest.utf8.count, record: nil)], "\(second)")
        #expect(m.isBetweenExchanges)

        // A whole response, then the next one's head begun: the whole one goes on, the start waits.
        var p = Self.started()
        Self.requested(&p)
        _ = Self.client(&p, Self.get, at: 2)
        let whole = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
        let out = Self.server(&p, whole + "HTTP/1.1 2", at: 3)
        #expect(out == [.tallyFromServer(whole.utf8.count + 10, record: nil), .writeClient(0..<whole.utf8.count, record: nil), .armTimer(at: 5_000_000_000)], "\(out)")
        let end = Self.server(&p, "04 No Content\r\n\r\n", at: 3)
        #expect(end == [.tallyFromServer(17, record: nil), .sendClient(Array("HTTP/1.1 2".utf8), record: nil), .writeClient(0..<17, record: nil)], "\(end)")
    }

    @Test("the server ending or failing before its response head is whole: tv's 502 in its place, nothing of the head passed on; idle then: 504")
    func noResponseHead() {
        let cases: [(String, Machine.Event, UInt64, Int, String)] = [
            ("", .serverEnded, 4, 502, "the server closed the connection before its response was complete"),
            ("HTTP/1.1 200 OK\r\nContent-Le", .serverEnded, 4, 502, "the server closed the connection before its response was complete"),
            ("not http at all", .serverEnded, 4, 502, "the server closed the connection before its response was complete"),
            ("HTTP/1.1 200", .serverFailed(reset: true, .system(Errno(ECONNRESET))), 4, 502, "the server reset the connection"),
            ("", .timer, 400, 504, "no response from the server within 300 s of the request"),
        ]
        for (sent, event, at, status, sentence) in cases {
            var m = Self.started()
            Self.requested(&m)
            if !sent.isEmpty {
                #expect(!Self.server(&m, sent, at: 3).contains { if case .writeClient = $0 { return true } else { return false } })
            }
            let out = Self.run(&m, event, at: at)
            let text = status == 502 ? "Bad Gateway" : "Gateway Timeout"
            guard out.count == 4, case .answerClient(let answer, linger: false) = out[0], case .closeFlow(let flow, _) = out[2] else { Issue.record("\(out)"); continue }
            #expect(answer.starts(with: Array("HTTP/1.1 \(status) \(text)\r\n".utf8)) && String(decoding: answer, as: UTF8.self).hasSuffix("tv: \(sentence)\n"), "\(String(decoding: answer, as: UTF8.self))")
            #expect(flow.error == sentence && flow.status == .failed, "\(flow)")
            #expect(out[1] == .closeServer(reset: false))
            #expect(out[3] == (status == 504 ? .close(reset: false) : .deliverThenClose(reset: false)), "\(out)")
        }
    }

    @Test("leg failures, idle and stop end the connection with the sentence; a send failure is a reset")
    func endings() {
        // After the response head (a body under way): the server's failures and idle end it
        // without an answer (`noResponseHead` has the ones before it).
        let cases: [(Machine.Event, UInt64, String, Bool)] = [
            (.serverFailed(reset: true, .system(Errno(ECONNRESET))), 3, "the server reset the connection", true),
            (.clientFailed(reset: false, .tls(TLSFailure(peerAlert: nil, systemError: nil, eof: false, text: "bad record mac"))), 3, "reading from the client failed: bad record mac", false),
            (.sendFailed(to: .client, .system(Errno(EPIPE))), 3, "sending to the client failed: broken pipe", true),
            (.timer, 400, "closed after 300 s without traffic", false),
            (.shutdown(holdsNothing: true), 3, "tv stopped", true),
            (.shutdown(holdsNothing: false), 3, "tv stopped", true),
        ]
        for (event, at, sentence, reset) in cases {
            var m = Self.started()
            Self.requested(&m)
            _ = Self.server(&m, "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", at: 2)
            let out = Self.run(&m, event, at: at)
            guard out.count == 3, case .closeFlow(let flow, _) = out[1] else { Issue.record("\(out)"); continue }
            #expect(out[0] == .closeServer(reset: reset))
            #expect(flow.error == sentence)
            // A server's read failure: what tv holds for the client is delivered before the close.
            if case .serverFailed = event {
                #expect(out[2] == .deliverThenClose(reset: reset))
            } else {
                #expect(out[2] == .close(reset: reset))
            }
        }
    }

    @Test("tv stopping between exchanges with nothing held: FINs, so the client still reads what its socket holds; anything part way, or bytes left in tv, a reset")
    func shutdownBetweenExchanges() {
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        func answered() -> Machine {
            var m = Self.started()
            Self.requested(&m)
            _ = Self.server(&m, response, at: 3)
            return m
        }
        var done = answered()
        #expect(done.isBetweenExchanges)
        var out = Self.run(&done, .shutdown(holdsNothing: true), at: 4)
        guard out.count == 3, case .closeFlow(let flow, _) = out[1] else { Issue.record("\(out)"); return }
        #expect(flow.error == "tv stopped")
        #expect(out[0] == .closeServer(reset: false))
        #expect(out[2] == .close(reset: false))
        var held = answered()
        out = Self.run(&held, .shutdown(holdsNothing: false), at: 4)
        #expect(out.first == .closeServer(reset: true) && out.last == .close(reset: true), "\(out)")
        // The response part way: a reset however much tv sent.
        var midResponse = Self.started()
        Self.requested(&midResponse)
        _ = Self.server(&midResponse, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", at: 3)
        #expect(!midResponse.isBetweenExchanges)
        out = Self.run(&midResponse, .shutdown(holdsNothing: true), at: 4)
        #expect(out.first == .closeServer(reset: true) && out.last == .close(reset: true), "\(out)")
        // A request awaiting its response, and the next head half sent.
        var awaiting = Self.started()
        Self.requested(&awaiting)
        #expect(!awaiting.isBetweenExchanges)
        var halfHead = answered()
        _ = Self.client(&halfHead, "GET http://127.0.0.1:8080/b HT", at: 4)
        #expect(!halfHead.isBetweenExchanges)
        out = Self.run(&halfHead, .shutdown(holdsNothing: true), at: 5)
        #expect(out.last == .close(reset: true), "\(out)")
    }

    @Test("the client leaving before any request: the first flow fails with that sentence")
    func goneBeforeRequest() {
        var m = Self.started()
        #expect(Self.run(&m, .clientEnded, at: 2) == [])
        let out = Self.run(&m, .passDone(clientReadClosed: true, clientUnsent: false), at: 2)
        var failed = Self.first
        failed.status = .failed
        failed.error = "the client closed the connection before its first request"
        failed.durationMicros = 3_000 - 1_000
        #expect(out == [.closeFlow(failed, recorded: false), .close(reset: false)])
    }
}
