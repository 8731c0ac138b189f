import Foundation
@testable import Proxy
import Testing
import Wire
import FlowTerms

/// `--proxy-auth`: the explicit proxy's 407 (RFC 9110 §11.7.1) and SOCKS5 username/password
/// (RFC 1929), played through `ConnectionMachine` with exact bytes.
@Suite("Proxy authentication")
struct ProxyAuthenticationTests {
    typealias Machine = ConnectionMachine
    static let credentials = ProxyCredentials(user: "u", password: Array("s3cret".utf8))

    static func machine(_ frontEnd: FrontEndKind) -> Machine {
        var settings = Machine.Settings(frontEnd: frontEnd, policy: InterceptionPolicy(inspectionEnabled: true, caAvailable: true),
                                        handshakeTimeoutMillis: 10_000, connectTimeoutMillis: 5_000)
        settings.proxyCredentials = credentials
        var m = Machine(settings: settings, facts: FlowFacts(id: 7, startMicros: 1_000, client: Endpoint(address: "127.0.0.1", port: 50000)),
                        recall: { _, _ in nil })
        _ = m.handle(.start)
        return m
    }

    static func bytes(_ m: inout Machine, _ data: [UInt8]) -> [Machine.Command] { data.withUnsafeBytes { m.handle(.clientBytes($0)) } }
    static func text(_ m: inout Machine, _ s: String) -> [Machine.Command] { bytes(&m, Array(s.utf8)) }
    static func basic(_ userPass: String) -> String { "Basic " + Data(userPass.utf8).base64EncodedString() }

    static func required(_ body: String) -> [UInt8] {
        let body = body + "\n"
        return Array(("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"tv\", charset=\"UTF-8\"\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body).utf8)
    }

    static let missingSentence = "the client gave no proxy credentials and this proxy requires them (tv run --proxy-auth); give the client the user name and password"

    @Test("the credentials compare by digest: right, wrong password, wrong user, header forms")
    func verdicts() {
        let c = Self.credentials
        #expect(c.matches(user: Array("u".utf8), password: Array("s3cret".utf8)))
        #expect(!c.matches(user: Array("u".utf8), password: Array("s3cre".utf8)))
        #expect(!c.matches(user: Array("u:s3".utf8), password: Array("cret".utf8)))
        #expect(c.judge(proxyAuthorization: nil) == .missing)
        #expect(c.judge(proxyAuthorization: Self.basic("u:s3cret")) == .accepted)
        #expect(c.judge(proxyAuthorization: "basic   " + Data("u:s3cret".utf8).base64EncodedString()) == .accepted)
        #expect(c.judge(proxyAuthorization: Self.basic("u:wrong")) == .wrong(user: "u"))
        #expect(c.judge(proxyAuthorization: Self.basic("v:s3cret")) == .wrong(user: "v"))
        #expect(c.judge(proxyAuthorization: "Bearer abc") == .wrong(user: nil))
        #expect(c.judge(proxyAuthorization: "Basic !!!") == .wrong(user: nil))
        #expect(c.judge(user: Array("u".utf8), password: Array("s3cret".utf8)) == .accepted)
        #expect(c.judge(user: Array("u".utf8), password: Array("x".utf8)) == .wrong(user: "u"))
    }

    @Test("explicit proxy: CONNECT without credentials is answered 407 with the Basic challenge, then closed")
    func connectWithoutCredentials() {
        var m = Self.machine(.explicitHTTP)
        let out = Self.text(&m, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        #expect(out == [.sendClient(Self.required("tv: " + Self.missingSentence)), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.status == .failed)
        #expect(m.facts.error == Self.missingSentence)
        // The flow keeps where the refused request asked to go (it read "ended before it named
        // a destination": a trial), the CONNECT's and an absolute-form request's alike.
        #expect(m.facts.host == "a.test" && m.facts.port == 443 && m.facts.hostOrigin == .connect)
        var plain = Self.machine(.explicitHTTP)
        _ = Self.text(&plain, "GET http://b.test:8080/x HTTP/1.1\r\nHost: b.test:8080\r\n\r\n")
        #expect(plain.facts.host == "b.test" && plain.facts.port == 8080)
    }

    @Test("explicit proxy: a wrong password is a 407 naming the user, never the password")
    func connectWithWrongPassword() {
        var m = Self.machine(.explicitHTTP)
        let out = Self.text(&m, "CONNECT a.test:443 HTTP/1.1\r\nProxy-Authorization: \(Self.basic("u:hunter2"))\r\n\r\n")
        let sentence = "the client's proxy password for user 'u' is wrong (tv run --proxy-auth); give the client the user name and password"
        #expect(out == [.sendClient(Self.required("tv: " + sentence)), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == sentence)
        #expect(m.facts.error?.contains("hunter2") == false)
    }

    @Test("explicit proxy: right credentials connect (CONNECT) and forward (absolute-form)")
    func rightCredentials() {
        var m = Self.machine(.explicitHTTP)
        let head = "CONNECT a.test:443 HTTP/1.1\r\nProxy-Authorization: \(Self.basic("u:s3cret"))\r\n\r\n"
        #expect(Self.text(&m, head) == [.consumeClient(head.utf8.count), .armTimer(millis: 5_000), .resolve(host: "a.test", port: 443)])
        var plain = Self.machine(.explicitHTTP)
        #expect(Self.text(&plain, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: \(Self.basic("u:s3cret"))\r\n\r\n")
            == [.armTimer(millis: 0), .startPlainHTTP])
        var bare = Self.machine(.explicitHTTP)
        #expect(Self.text(&bare, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
            == [.sendClient(Self.required("tv: " + Self.missingSentence)), .armTimer(millis: 0), .close(reset: false)])
    }

    @Test("SOCKS5: only username/password is offered; credentials checked, then the request")
    func socks5Accepted() {
        var m = Self.machine(.socks5)
        #expect(Self.bytes(&m, [5, 2, 0, 2]) == [.consumeClient(4), .sendClient([5, 2])])
        let auth: [UInt8] = [1, 1] + Array("u".utf8) + [6] + Array("s3cret".utf8)
        #expect(Self.bytes(&m, auth) == [.consumeClient(auth.count), .sendClient([1, 0])])
        let request: [UInt8] = [5, 1, 0, 3, 6] + Array("a.test".utf8) + [0x01, 0xBB]
        #expect(Self.bytes(&m, request) == [.consumeClient(request.count), .armTimer(millis: 5_000), .resolve(host: "a.test", port: 443)])
    }

    @Test("SOCKS5: greeting, credentials and request in one read are consumed step by step")
    func socks5OneRead() {
        var m = Self.machine(.socks5)
        let auth: [UInt8] = [1, 1] + Array("u".utf8) + [6] + Array("s3cret".utf8)
        let request: [UInt8] = [5, 1, 0, 1, 127, 0, 0, 1, 0x01, 0xBB]
        var unread: [UInt8] = [5, 1, 2] + auth + request
        #expect(Self.bytes(&m, unread) == [.consumeClient(3), .sendClient([5, 2])])
        unread.removeFirst(3)
        #expect(Self.bytes(&m, unread) == [.consumeClient(auth.count), .sendClient([1, 0])])
        unread.removeFirst(auth.count)
        let out = Self.bytes(&m, unread)
        #expect(out.first == .consumeClient(request.count))
    }

    @Test("SOCKS5: a wrong password gets 01 01 and the close; no-auth only gets 05 FF")
    func socks5Refused() {
        var m = Self.machine(.socks5)
        _ = Self.bytes(&m, [5, 1, 2])
        let auth: [UInt8] = [1, 1] + Array("u".utf8) + [5] + Array("wrong".utf8)
        #expect(Self.bytes(&m, auth) == [.sendClient([1, 1]), .armTimer(millis: 0), .close(reset: false)])
        #expect(m.facts.error == "the client's proxy password for user 'u' is wrong (tv run --proxy-auth); give the client the user name and password")
        var none = Self.machine(.socks5)
        #expect(Self.bytes(&none, [5, 1, 0]) == [.sendClient([5, 0xFF]), .armTimer(millis: 0), .close(reset: false)])
        #expect(none.facts.error == Self.missingSentence)
    }

    @Test("SOCKS5 parser: RFC 1929 version other than 1 is not SOCKS5 auth; partial credentials wait")
    func socks5Parser() {
        var p = SOCKS5HandshakeParser(requiresPassword: true)
        #expect(p.feed([5, 1, 2]) == .greeting(SOCKS5Greeting(methods: [2]), reply: [5, 2]))
        #expect(p.feed([1, 1, 0x75]) == .needMoreData)
        #expect(p.feed([1, 0x70]) == .credentials(user: [0x75], password: [0x70], byteCount: 5))
        var bad = SOCKS5HandshakeParser(requiresPassword: true)
        _ = bad.feed([5, 1, 2])
        #expect(bad.feed([5, 1, 0x75]) == .malformed(reason: "The username/password request starts with version 5, but RFC 1929 starts with 1."))
    }
}
