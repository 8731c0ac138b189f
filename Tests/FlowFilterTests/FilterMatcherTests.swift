import FlowFilter
import Testing

/// Evaluation over the fields of an exchange with kept content, and over a flow row (a
/// connection: no request fields): exact results, and exactly which operators went unanswered.
@Suite struct FilterMatcherTests {
    /// A POST that got a 404, with its headers and bodies kept.
    static let exchange = FilterFields(
        texts: [.domain: ["api.example.com"], .method: ["POST"], .url: ["https://api.example.com/v1/items?q=1"],
                .statusCode: ["404"], .requestContentType: ["application/json"], .responseContentType: ["text/html; charset=utf-8"],
                .requestHeaders: ["host: api.example.com", "authorization: Bearer x"], .responseHeaders: ["content-type: text/html"],
                .requestBody: ["{\"name\":\"a\"}"], .responseBody: ["<h1>Not\nfound</h1>"],
                .source: ["127.0.0.1:50000"], .destination: ["[2001:db8::1]:443"]],
        flags: [.hasResponse: true, .failed: false, .tcp: true, .udp: false])

    /// A request whose response never came, nothing kept.
    static let unanswered = FilterFields(
        texts: [.domain: ["api.example.com"], .method: ["GET"], .url: ["https://api.example.com/"], .statusCode: [],
                .requestContentType: [], .responseContentType: [], .source: ["127.0.0.1:50001"], .destination: ["192.0.2.1:443"]],
        flags: [.hasResponse: false, .failed: true, .tcp: true, .udp: false])

    /// A flow row: a connection.
    static let flow = FilterFields(
        texts: [.domain: ["api.example.com"], .source: ["127.0.0.1:50000"], .destination: ["[2001:db8::1]:443"]],
        flags: [.failed: false, .tcp: true, .udp: false])

    /// (expression, exchange, unanswered request, flow, the operators the flow could not answer)
    static let table: [(String, Bool, Bool, Bool, Set<FilterOperator>)] = [
        ("~d example", true, true, true, []),
        ("~d EXAMPLE\\.COM", true, true, true, []),                 // case-insensitive
        ("~d ^example", false, false, false, []),                   // searched, and ^ anchors
        ("~m post", true, false, false, [.method]),
        ("~c 404", true, false, false, [.statusCode]),
        ("~c 40", false, false, false, [.statusCode]),
        ("~u \"/v1/items\\?q=\"", true, false, false, [.url]),
        ("items", true, false, false, [.url]),                     // bare regex: URL
        ("~t json", true, false, false, [.contentType]),
        ("~tq html", false, false, false, [.requestContentType]),
        ("~ts html", true, false, false, [.responseContentType]),
        ("~h \"^authorization: bearer\"", true, false, false, [.header]),
        ("~hs authorization", false, false, false, [.responseHeader]),
        ("~b \"Not.found\"", true, false, false, [.body]),          // . crosses the line end in bodies
        ("~bq found", false, false, false, [.requestBody]),
        ("~q", false, true, false, [.request]),
        ("~s", true, false, false, [.response]),
        ("!~q", true, false, true, [.request]),
        ("!~h nomatch", true, true, true, [.header]),                    // no headers: ~h false, so ! true
        ("~e", false, true, false, []),
        ("~tcp", true, true, true, []),
        ("~udp", false, false, false, []),
        ("~all", true, true, true, []),
        ("~src \"^127\\.0\\.0\\.1:50000$\"", true, false, true, []),
        ("~dst \"\\[2001:db8::1\\]:443\"", true, false, true, []),
        // Written as the README shows it, an address in brackets is taken literally (as a regex
        // the brackets are a class: it matched nothing it named, and 192.0.2.1:443 through "1:443").
        ("~dst [2001:DB8::1]:443", true, false, true, []),
        ("~dst [2001:db8::1]", true, false, true, []),
        ("~dst [2001:db8::1]:44", false, false, false, []),
        ("~dst [::1]:443", false, false, false, []),
        ("~d example & !~c 200", true, true, true, [.statusCode]),  // a flow has no status: ~c false, so ! true
        ("~c 200 | ~c 404", true, false, false, [.statusCode]),
        ("~m GET | ~d nomatch", false, true, false, [.method]),
        // & and | stop at the operand that decides: the flow's ~m is not asked here.
        ("~d example | ~m POST", true, true, true, []),
        ("~m POST | ~d example", true, true, true, [.method]),
        ("~d nomatch ~m POST", false, false, false, []),
    ]

    @Test(arguments: table)
    func evaluate(_ text: String, _ onExchange: Bool, _ onUnanswered: Bool, _ onFlow: Bool, _ flowMissing: Set<FilterOperator>) throws {
        let expression = try FilterParser.parse(text)
        var missing: Set<FilterOperator> = []
        #expect(FilterMatcher.evaluate(expression, Self.exchange, &missing) == onExchange)
        #expect(missing.isEmpty)
        #expect(FilterMatcher.evaluate(expression, Self.unanswered, &missing) == onUnanswered)
        missing = []
        #expect(FilterMatcher.evaluate(expression, Self.flow, &missing) == onFlow)
        #expect(missing == flowMissing)
    }

    @Test func matcherCountsRowsAndUnansweredOperators() throws {
        var matcher = FilterMatcher(try FilterParser.parse("~d example & (~h auth | ~b secret)"))
        let results = [Self.exchange, Self.unanswered, Self.flow, Self.flow].map { matcher.matches($0) }
        #expect(results == [true, false, false, false])
        #expect(matcher.rows == 4)
        // The exchange answered ~h (it matched, so ~b was not asked); the other three had neither.
        #expect(matcher.unanswered == [.header: 3, .body: 3])
    }

    @Test("~d and ~u with an international name also match its A-label form, which tv stores; other operators do not convert")
    func internationalNames() throws {
        let stored = FilterFields(texts: [.domain: ["xn--bcher-kva.test"], .url: ["https://xn--bcher-kva.test/a"], .method: ["GET"]],
                                  flags: [.tcp: true])
        let asSent = FilterFields(texts: [.domain: ["bücher.test"], .url: ["https://bücher.test/a"]], flags: [.tcp: true])
        func matches(_ text: String, _ fields: FilterFields) throws -> Bool {
            var missing: Set<FilterOperator> = []
            return FilterMatcher.evaluate(try FilterParser.parse(text), fields, &missing)
        }
        #expect(try matches("~d bücher", stored))
        #expect(try matches("~d ^BÜCHER\\.test$", stored))
        #expect(try matches("~u bücher.test/a", stored))
        #expect(try matches("~d bücher", asSent))
        #expect(try matches("~d xn--bcher", stored))
        #expect(try !matches("~d ücher", stored))      // only a whole label converts
        #expect(try !matches("~m büch", stored))
    }

    @Test func addressesAsMitmproxyWritesThem() {
        #expect(filterAddress("127.0.0.1", port: 8080) == "127.0.0.1:8080")
        #expect(filterAddress("::1", port: 443) == "[::1]:443")
    }
}
