import FlowStore
import FlowTerms
import HTTPReading
import Testing
@testable import TVCore

/// Where a request went against where its URL says (`RequestDestination`), and what `tv request`
/// and `--curl` make of it: exact values.
@Suite struct RequestDestinationTests {
    static func exchange(_ authority: String?, scheme: String = "https", connect: Bool = false) -> ExchangeRecord {
        ExchangeRecord(id: 9, flowID: 4, sequence: 1, httpVersion: "HTTP/1.1", method: connect ? "CONNECT" : "GET", scheme: scheme,
                       authority: authority, path: connect ? (authority ?? "") : "/x", queryRemoved: false, requestTime: 0, connect: connect)
    }

    static func flow(host: String?, origin: HostOrigin, address: String = "127.0.0.1", port: Int = 443) -> FlowRecord {
        FlowRecord(id: 4, startTime: 0, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: address, serverPort: port,
                   host: host, hostOrigin: origin, status: .inspected)
    }

    @Test("a URL naming the connection's server (its name or address, at its port) is no destination of its own")
    func sameServer() {
        let a = Self.flow(host: "a.example", origin: .connect)
        #expect(RequestDestination.differing(Self.exchange("a.example"), on: a) == nil)
        #expect(RequestDestination.differing(Self.exchange("A.Example.:443"), on: a) == nil)
        #expect(RequestDestination.differing(Self.exchange("127.0.0.1"), on: a) == nil)
        #expect(RequestDestination.differing(Self.exchange("a.example:80", scheme: "http"), on: Self.flow(host: "a.example", origin: .connect, port: 80)) == nil)
        // An international Host against the A-label the flow was named by.
        #expect(RequestDestination.differing(Self.exchange("bücher.example"), on: Self.flow(host: "xn--bcher-kva.example", origin: .sni)) == nil)
        #expect(RequestDestination.differing(Self.exchange("[::1]:8443"), on: Self.flow(host: nil, origin: .none, address: "::1", port: 8443)) == nil)
        // A CONNECT request's URL is the tunnel it asked for; no authority or no port: unknown.
        #expect(RequestDestination.differing(Self.exchange("b.example:443", connect: true), on: a) == nil)
        #expect(RequestDestination.differing(Self.exchange(nil), on: a) == nil)
        #expect(RequestDestination.differing(Self.exchange("a.example"), on: Self.flow(host: "a.example", origin: .connect, port: 0)) == nil)
        #expect(RequestDestination.differing(Self.exchange("a example"), on: a) == nil)
    }

    @Test("a Host forged inside a CONNECT tunnel: sent to the name the client gave the proxy")
    func forgedHost() throws {
        let d = try #require(RequestDestination.differing(Self.exchange("b.example"), on: Self.flow(host: "a.example", origin: .connect)))
        #expect(d.url.description == "b.example:443")
        #expect(d.connection.description == "a.example:443")
        #expect(d.curlConnectTo == "b.example:443:a.example:443")
        #expect(d.sentence == "  sent to a.example:443, not the b.example:443 its URL names (the URL's host is the request's own Host or :authority, RFC 9110 §7.2)")
        // SOCKS5 and reverse mode name it too.
        #expect(RequestDestination.differing(Self.exchange("b.example"), on: Self.flow(host: "a.example", origin: .socks))?.curlConnectTo == "b.example:443:a.example:443")
        #expect(RequestDestination.differing(Self.exchange("b.test:22031"), on: Self.flow(host: "127.0.0.1", origin: .reverse, port: 22445))?.curlConnectTo
                == "b.test:22031:127.0.0.1:22445")
    }

    @Test("a name the connection only announced (SNI, DNS) or none: sent to the address it dialled, at its port")
    func dialledAddress() {
        // curl --connect-to a.example:443:127.0.0.1:8443 through the proxy: CONNECT 127.0.0.1:8443, SNI a.example.
        #expect(RequestDestination.differing(Self.exchange("a.example"), on: Self.flow(host: "a.example", origin: .sni, port: 8443))?.curlConnectTo
                == "a.example:443:127.0.0.1:8443")
        #expect(RequestDestination.differing(Self.exchange("b.example"), on: Self.flow(host: "a.example", origin: .dns, address: "10.0.0.7"))?.curlConnectTo
                == "b.example:443:10.0.0.7:443")
        #expect(RequestDestination.differing(Self.exchange("[::1]:80", scheme: "http"), on: Self.flow(host: nil, origin: .none, address: "2001:db8::5", port: 8080))?.curlConnectTo
                == "[::1]:80:[2001:db8::5]:8080")
        // A flow named by the request's own Host (CONNECT to an address) is checked by address.
        #expect(RequestDestination.differing(Self.exchange("b.test:19503"), on: Self.flow(host: "b.test", origin: .httpHost, port: 19503))?.curlConnectTo
                == "b.test:19503:127.0.0.1:19503")
    }

    @Test("--curl carries --connect-to before the URL, with or without the kept request; tv request says where it went")
    func curlAndDetail() throws {
        let exchange = Self.exchange("b.example")
        let d = try #require(RequestDestination.differing(exchange, on: Self.flow(host: "a.example", origin: .connect)))
        #expect(CurlCommand(exchange, request: nil, destination: d).command == "curl --http1.1 --connect-to b.example:443:a.example:443 https://b.example/x")
        let request = HTTPMessage(startLine: "GET /x?q=1 HTTP/1.1", headers: [HTTPHeader("Host", "b.example"), HTTPHeader("Accept", "*/*")],
                                  body: HTTPBody(framing: "none", transferred: []), turn: 1, offset: 0)
        #expect(CurlCommand(exchange, request: request, destination: d).command
                == "curl --http1.1 --connect-to b.example:443:a.example:443 'https://b.example/x?q=1' -H 'Accept: */*' -H User-Agent:")
        var detail = RequestDetailPresentation(exchange: exchange, recorded: nil)
        detail.destination = d
        #expect(Array(detail.factLines().prefix(3)) == [
            "Request 9 — GET https://b.example/x", "  flow 4, exchange 1 of it, HTTP/1.1",
            "  sent to a.example:443, not the b.example:443 its URL names (the URL's host is the request's own Host or :authority, RFC 9110 §7.2)",
        ])
        var json = ""
        detail.writeJSON(reader: BoundedBodyReader()) { json += $0 }
        #expect(json.contains("\"sentTo\": \"a.example:443\""), "\(json)")
        detail.destination = nil
        json = ""
        detail.writeJSON(reader: BoundedBodyReader()) { json += $0 }
        #expect(json.contains("\"sentTo\": null"), "\(json)")
        // Why no content is shown: the sentence `tv request` prints, in the JSON too (the web
        // view draws it).
        #expect(json.contains("\"absence\": \"No headers or bodies are kept for this request's connection: content keeping was off when it was made (or inspection, for TLS), or what was kept has expired or was deleted (`tv content delete`). Without content keeping tv keeps each request's method"), "\(json)")
        detail.flowContentKept = true
        #expect(detail.absence?.hasPrefix("This request is not in the content kept of its connection") == true)
    }
}
