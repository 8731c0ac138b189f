import FlowFilter
import Testing

/// A regex term (the pattern must compile).
func rx(_ op: FilterOperator, _ regex: String) -> FilterExpression {
    .term(FilterTerm(op, .regex(FilterPattern(regex)!)))
}

/// An operator without an argument.
func flag(_ op: FilterOperator) -> FilterExpression { .term(FilterTerm(op)) }

/// `~c N`.
func code(_ n: Int) -> FilterExpression { .term(FilterTerm(.statusCode, .number(n))) }

/// The filter language's grammar: exact expressions for mitmproxy's operators, precedence,
/// adjacent terms and quoting; exact columns and sentences for each kind of mistake.
@Suite struct FilterParserTests {
    static let parses: [(String, FilterExpression)] = [
        ("~d example.com", rx(.domain, "example.com")),
        ("example", rx(.url, "example")),                                   // a bare regex is ~u
        ("  ~d   a  ", rx(.domain, "a")),
        ("~m POST & ~c 404", .and([rx(.method, "POST"), code(404)])),
        // ! binds tightest, then &, then |.
        ("~d a | ~d b & ~m GET", .or([rx(.domain, "a"), .and([rx(.domain, "b"), rx(.method, "GET")])])),
        ("!~q & ~s", .and([.not(flag(.request)), flag(.response)])),
        ("!(~d a | ~d b)", .not(.or([rx(.domain, "a"), rx(.domain, "b")]))),
        ("!!~e", .not(.not(flag(.error)))),
        // Adjacent terms are &, at the lowest precedence (mitmproxy's OneOrMore around the infix grammar).
        ("~d a | ~d b ~m GET", .and([.or([rx(.domain, "a"), rx(.domain, "b")]), rx(.method, "GET")])),
        ("~q ~d x", .and([flag(.request), rx(.domain, "x")])),
        ("(~c 200 ~t json) | ~e", .or([.and([code(200), rx(.contentType, "json")]), flag(.error)])),
        // Same-kind operands are flattened.
        ("~d a & ~d b & ~d c", .and([rx(.domain, "a"), rx(.domain, "b"), rx(.domain, "c")])),
        ("(~d a & ~d b) & ~d c", .and([rx(.domain, "a"), rx(.domain, "b"), rx(.domain, "c")])),
        ("~tcp | (~udp | ~all)", .or([flag(.tcp), flag(.udp), flag(.all)])),
        // A word runs to white space or ( ) ~ ' ": | and & inside it belong to the regex.
        ("~d foo|bar", rx(.domain, "foo|bar")),
        ("~d a&~m b", .and([rx(.domain, "a&"), rx(.method, "b")])),
        // Quotes: \" \' \\ stand for the character; other backslashes stay for the regex.
        ("~d \"a b\"", rx(.domain, "a b")),
        ("~h 'x: \\'y\\''", rx(.header, "x: 'y'")),
        ("~u \"\\.json$\"", rx(.url, "\\.json$")),
        ("~b \"say \\\"hi\\\"\"", rx(.body, "say \"hi\"")),
        ("~h \"a\\\\b\"", rx(.header, "a\\b")),
        ("~src \"^127\\.0\\.0\\.1:\" | ~dst \"\\[::1\\]:443\"", .or([rx(.source, "^127\\.0\\.0\\.1:"), rx(.destination, "\\[::1\\]:443")])),
        ("~hq a ~hs b ~bq c ~bs d ~tq e ~ts f", .and([rx(.requestHeader, "a"), rx(.responseHeader, "b"), rx(.requestBody, "c"),
                                                    rx(.responseBody, "d"), rx(.requestContentType, "e"), rx(.responseContentType, "f")])),
    ]

    @Test(arguments: parses)
    func parse(_ text: String, _ expected: FilterExpression) throws {
        #expect(try FilterParser.parse(text) == expected)
    }

    @Test(arguments: parses)
    func descriptionReadsBack(_ text: String, _ expected: FilterExpression) throws {
        #expect(try FilterParser.parse(expected.description) == expected)
    }

    @Test func oneHundredLevelsAreTaken() throws {
        let deep = String(repeating: "(", count: 100) + "~d a" + String(repeating: ")", count: 100)
        #expect(try FilterParser.parse(deep).description == "~d \"a\"")
        #expect(try FilterParser.parse(String(repeating: "!", count: 100) + "~q").description == String(repeating: "!", count: 100) + "~q")
        // Depth, not count: many levels one after the other are fine.
        #expect(throws: Never.self) { try FilterParser.parse(Array(repeating: "(~d a)", count: 500).joined(separator: " | ")) }
    }

    @Test func descriptionIsFullyParenthesized() throws {
        #expect(try FilterParser.parse("~d a | !~q ~c 404").description == "((~d \"a\" | !~q) & ~c 404)")
        #expect(try FilterParser.parse("~u 'a\"b\\\\c'").description == "~u \"a\\\"b\\\\c\"")
    }

    static let mistakes: [(String, FilterSyntaxError.Kind, Int, String)] = [
        ("~d a &", .expectedExpression(after: "&", found: nil), 7, "Expected an expression after '&' at column 7."),
        ("~m GET & ~q &   ", .expectedExpression(after: "&", found: nil), 17, "Expected an expression after '&' at column 17."),
        ("~d a | | ~m b", .expectedExpression(after: "|", found: "|"), 8, "Expected an expression after '|' at column 8, not '|'."),
        ("!", .expectedExpression(after: "!", found: nil), 2, "Expected an expression after '!' at column 2."),
        ("", .expectedExpression(after: nil, found: nil), 1, "Expected an expression at column 1."),
        ("& ~d a", .expectedExpression(after: nil, found: "&"), 1, "Expected an expression at column 1, not '&'."),
        ("()", .expectedExpression(after: "(", found: ")"), 2, "Expected an expression after '(' at column 2, not ')'."),
        ("(~d a", .unclosedParenthesis, 1, "The '(' at column 1 is not closed; add a ')'."),
        ("~d a & ((~m b)", .unclosedParenthesis, 8, "The '(' at column 8 is not closed; add a ')'."),
        ("~d a)", .unopenedParenthesis, 5, "The ')' at column 5 closes nothing; remove it or add a '(' before it."),
        // 100 levels are taken; the 101st '(' or '!' is refused where it stands (17,000 crashed tv).
        (String(repeating: "(", count: 101) + "~all" + String(repeating: ")", count: 101), .tooDeep(100), 101,
         "The expression nests deeper than 100 parentheses and '!' at column 101; write it with fewer levels."),
        (String(repeating: "!", count: 120_000) + "~all", .tooDeep(100), 101,
         "The expression nests deeper than 100 parentheses and '!' at column 101; write it with fewer levels."),
        (String(repeating: "(!", count: 51) + "~q" + String(repeating: ")", count: 51), .tooDeep(100), 101,
         "The expression nests deeper than 100 parentheses and '!' at column 101; write it with fewer levels."),
        ("~x foo", .unknownOperator("~x"), 1,
         "Unknown operator '~x' at column 1; the operators are ~all ~b ~bq ~bs ~c ~d ~dst ~e ~h ~hq ~hs ~m ~q ~s ~src ~t ~tq ~ts ~tcp ~udp ~u."),
        ("~u ü ~zz", .unknownOperator("~zz"), 6,
         "Unknown operator '~zz' at column 6; the operators are ~all ~b ~bq ~bs ~c ~d ~dst ~e ~h ~hq ~hs ~m ~q ~s ~src ~t ~tq ~ts ~tcp ~udp ~u."),
        ("~ d", .bareTilde, 2, "Expected an operator name after '~' at column 2, such as ~d or ~u."),
        ("~d", .missingArgument(.domain), 3, "Expected a regex after '~d' at column 3; quote it if it starts with ( ) ~ or a quote."),
        ("~d (a)", .missingArgument(.domain), 4, "Expected a regex after '~d' at column 4; quote it if it starts with ( ) ~ or a quote."),
        ("~m & ~d a", .missingArgument(.method), 4, "Expected a regex after '~m' at column 4; quote it if it starts with ( ) ~ or a quote."),
        ("~c", .missingArgument(.statusCode), 3, "Expected a status code (a number such as 404) after '~c' at column 3."),
        ("~c abc", .notANumber(.statusCode, "abc"), 4, "'abc' at column 4 is not a status code; '~c' takes a number such as 404."),
        ("~c -1", .notANumber(.statusCode, "-1"), 4, "'-1' at column 4 is not a status code; '~c' takes a number such as 404."),
        ("~d a & ~d [a", .badRegex("[a"), 11,
         "The regex '[a' at column 11 does not compile; put a backslash before a special character to match it literally."),
        ("~u 'a(b'", .badRegex("a(b"), 4,
         "The regex 'a(b' at column 4 does not compile; put a backslash before a special character to match it literally."),
        ("~d \"abc", .unclosedQuote("\""), 4, "The quote \" at column 4 is not closed; end the regex with another \"."),
        ("~d 'ab\\'", .unclosedQuote("'"), 4, "The quote ' at column 4 is not closed; end the regex with another '."),
    ]

    @Test(arguments: mistakes)
    func mistake(_ text: String, _ kind: FilterSyntaxError.Kind, _ column: Int, _ sentence: String) {
        #expect(throws: FilterSyntaxError(kind, column: column)) { try FilterParser.parse(text) }
        #expect(FilterSyntaxError(kind, column: column).message == sentence)
    }
}
