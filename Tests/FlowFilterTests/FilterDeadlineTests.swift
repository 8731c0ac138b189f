import FlowFilter
import Testing

/// A filter with a deadline: a regex that backtracks without end is cut (nil, `.outOfTime`), a
/// quick one answers as without a deadline, and the matcher always looks at its first row.
@Suite struct FilterDeadlineTests {
    /// 40 `a`s and a `b`: `(a+)+$` tries 2^40 ways to split the run before failing at the `b`
    /// (about as long as anyone waits; it must never run to its end here).
    static let backtracking = String(repeating: "a", count: 40) + "b"

    @Test func aRegexThatBacktracksIsCutAtTheDeadline() throws {
        let pattern = try #require(FilterPattern("(a+)+$"))
        #expect(pattern.search(Self.backtracking, until: FilterDeadline(.milliseconds(200))) == nil)
        // Another: nested quantifiers over the dot, in a body (dotAll).
        let dots = try #require(FilterPattern("(.*.*)*y", dotAll: true))
        #expect(dots.search(String(repeating: "x\n", count: 2_000), until: FilterDeadline(.milliseconds(200))) == nil)
    }

    @Test func aDeadlineChangesNoAnswerGivenInTime() throws {
        let deadline = FilterDeadline(.seconds(60))
        let cases: [(String, String, Bool)] = [
            ("(a+)+$", "aaaa", true),            // found: ICU's enumeration stops at the match
            ("^b.*z$", "abcz", false),           // not found, ICU
            ("secret", "a Secret here", true),   // the literal byte search
            ("secret", "nothing", false),
            ("ſecret", "SECRET", true),          // ICU: long s folds to s
        ]
        for (source, text, found) in cases {
            let pattern = try #require(FilterPattern(source))
            #expect(pattern.search(text, until: deadline) == found, "\(source) in \(text)")
            #expect(pattern.search(text) == found, "\(source) in \(text)")
        }
        // A host's A-label form, searched with the deadline too.
        let idn = try #require(FilterPattern("bücher"))
        #expect(idn.searchHost("xn--bcher-kva.test", until: deadline) == true)
    }

    @Test func aDeadlineAlreadyPassedStopsICUButNotTheByteSearch() throws {
        let passed = FilterDeadline(.zero)
        #expect(try #require(FilterPattern("a.c")).search("abc", until: passed) == nil)
        // A literal answered from the bytes needs no time.
        #expect(try #require(FilterPattern("abc")).search("xabcx", until: passed) == true)
        #expect(try #require(FilterPattern("abc")).search("xyz", until: passed) == false)
    }

    @Test func theMatcherLooksAtItsFirstRowThenStops() throws {
        let subject = FilterFields(texts: [.domain: ["api.test"], .responseBody: [Self.backtracking]])
        let quick = FilterFields(texts: [.domain: ["api.test"], .responseBody: ["ok"]])

        // A passed deadline: the first row is still decided (a page always moves on by one).
        var matcher = FilterMatcher(.term(FilterTerm(.domain, .regex(try #require(FilterPattern("api"))))), deadline: FilterDeadline(.zero))
        #expect(matcher.decide(quick) == .match)
        #expect(matcher.decide(quick) == .outOfTime(cut: false))
        #expect(matcher.rows == 1)

        // A row whose search runs past the deadline is cut, and counts as looked at.
        var body = FilterMatcher(.term(FilterTerm(.responseBody, .regex(try #require(FilterPattern("(a+)+$"))))),
                                 deadline: FilterDeadline(.milliseconds(200)))
        #expect(body.decide(subject) == .outOfTime(cut: true))
        #expect(body.rows == 1)
        #expect(body.unanswered.isEmpty)
        #expect(body.decide(quick) == .outOfTime(cut: false))

        // Negation and `|` do not turn a cut search into an answer.
        for text in ["!~bs '(a+)+$'", "~bs '(a+)+$' | ~d nothing", "~d api & ~bs '(a+)+$'"] {
            var m = FilterMatcher(try FilterParser.parse(text), deadline: FilterDeadline(.milliseconds(100)))
            #expect(m.decide(subject) == .outOfTime(cut: true), "\(text)")
            let after = m.matches(quick)
            #expect(!after, "\(text)")
        }

        // Without a deadline, the same matcher answers every row.
        var plain = FilterMatcher(try FilterParser.parse("~bs ok"))
        #expect(plain.decide(quick) == .match)
        #expect(plain.decide(quick) == .match)
        let onBacktracking = plain.matches(subject)
        #expect(!onBacktracking)
    }
}
