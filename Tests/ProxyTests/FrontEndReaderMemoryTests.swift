@testable import Proxy
import FlowTerms
import Testing

/// `FrontEndReader` keeps its parsers in a box made on first use and dropped by `reset`, copied on
/// write (issue 21, memory per idle connection).
@Suite("Front-end reader's parsers: made on first use, dropped when done, copied on write")
struct FrontEndReaderMemoryTests {
    static let head = "CONNECT example.com:443 HTTP/1.1\r\n"
    static let host = "Host: example.com:443\r\n"

    func request(_ reader: inout FrontEndReader, _ text: String) -> FrontEndReader.ProxyRequest {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { reader.proxyRequest($0, frontEnd: .explicitHTTP) }
    }

    @Test("none before the first byte, held while reading, none after reset")
    func lifetime() {
        var reader = FrontEndReader()
        #expect(!reader.holdsParsers)
        #expect(request(&reader, Self.head) == .needMore)
        #expect(reader.holdsParsers)
        reader.reset()
        #expect(!reader.holdsParsers)
    }

    @Test("a copy taken mid-head reads on by itself: feeding one never advances the other")
    func copiesAreIndependent() {
        var first = FrontEndReader()
        #expect(request(&first, Self.head) == .needMore)
        var second = first
        let whole = Self.head + Self.host + "\r\n"
        let connect = FrontEndReader.ProxyRequest.connect(
            consume: whole.utf8.count, OriginalDestination(host: "example.com", port: 443, origin: .connect))
        #expect(request(&first, whole) == connect)
        #expect(request(&second, Self.head + Self.host) == .needMore)
        #expect(request(&second, whole) == connect)
        first.reset()
        #expect(!first.holdsParsers)
        #expect(second.holdsParsers)
    }
}
