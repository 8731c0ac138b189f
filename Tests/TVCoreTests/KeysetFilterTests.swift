import FlowFilter
import Testing
@testable import TVCore

/// The filtered scan over keyset pages, with scripted decisions: exact rows kept, whether more
/// follow, where a page cut by the deadline stops, and the cursor the next page starts from.
@Suite struct KeysetFilterTests {
    /// Rows 10 down to 1 in store pages of `size`; `decide` answers by row.
    func scan(size: Int = 3, want: Int, after: String? = nil,
              _ decide: @escaping (Int) -> FilterDecision) throws -> KeysetFilter.Collected<Int> {
        let rows = Array((1...10).reversed())
        return try KeysetFilter.collect(want: want, after: after, fetch: { cursor in
            let start = cursor.map { c in rows.firstIndex(of: Int(c)!)! + 1 } ?? 0
            let page = Array(rows[start..<min(rows.count, start + size)])
            let next = start + size < rows.count ? page.last.map(String.init) : nil
            return (page, next, [])
        }, decide: decide)
    }

    @Test func aScanKeepsTheFirstMatchesAndSaysWhetherMoreFollow() throws {
        let even = try scan(want: 2) { $0 % 2 == 0 ? .match : .noMatch }
        #expect(even.rows == [10, 8])
        #expect(even.more)
        #expect(even.stopped == nil)
        let all = try scan(want: 5) { $0 % 2 == 0 ? .match : .noMatch }
        #expect(all.rows == [10, 8, 6, 4, 2])
        #expect(!all.more)
    }

    @Test func theDeadlineStopsTheScanWhereItPassed() throws {
        // Row 6's own search was cut: it is the last row looked at, across a store page boundary.
        let cut = try scan(want: 5) { $0 == 6 ? .outOfTime(cut: true) : ($0 == 9 ? .match : .noMatch) }
        #expect(cut.rows == [9])
        #expect(cut.more)
        #expect(cut.stopped?.lastLooked == 6)
        #expect(cut.stopped?.cut == true)
        // Time ran out before row 4 was looked at: the last row looked at is 5.
        let before = try scan(want: 5) { $0 <= 4 ? .outOfTime(cut: false) : .noMatch }
        #expect(before.rows.isEmpty)
        #expect(before.stopped?.lastLooked == 5)
        #expect(before.stopped?.cut == false)
    }

    @Test func theNextCursorGoesOnAfterTheLastRowLookedAt() throws {
        var matcher = FilterMatcher(.term(FilterTerm(.all)), deadline: FilterDeadline(.seconds(3)))
        _ = matcher.decide(FilterFields())
        _ = matcher.decide(FilterFields())
        let cut = try scan(want: 5) { $0 == 6 ? .outOfTime(cut: true) : ($0 == 9 ? .match : .noMatch) }
        let ending = KeysetFilter.ending(cut, after: "11", matcher: matcher, cursor: { "c\($0)" }, id: { Int64($0 * 100) })
        #expect(ending.next == "c6")
        #expect(ending.stopped == FilterTimeLimitReached(limit: .seconds(3), looked: 2, matched: 1, cut: 600))
        let before = try scan(want: 5) { $0 <= 4 ? .outOfTime(cut: false) : .noMatch }
        #expect(KeysetFilter.ending(before, after: nil, matcher: matcher, cursor: { "c\($0)" }, id: { Int64($0) }).stopped?.cut == nil)
        // Not stopped: the last row shown when more follow, else none.
        let even = try scan(want: 2) { $0 % 2 == 0 ? .match : .noMatch }
        #expect(KeysetFilter.ending(even, after: nil, matcher: matcher, cursor: { "c\($0)" }, id: { Int64($0) }).next == "c8")
        let all = try scan(want: 5) { $0 % 2 == 0 ? .match : .noMatch }
        #expect(KeysetFilter.ending(all, after: nil, matcher: matcher, cursor: { "c\($0)" }, id: { Int64($0) }) == (nil, nil))
    }

    @Test func theSentenceSaysHowFarItLookedAndTheRowItCut() {
        let stopped = FilterTimeLimitReached(limit: .milliseconds(1_500), looked: 1_234, matched: 1, cut: 57)
        #expect(stopped.sentence(.flows) == "The filter stopped looking after 1.5 s (its time limit): 1,234 flows looked at, 1 matched; the next page goes on from there. The search in flow 57 ran out of time, so it is not shown: its regex backtracks or its texts are long; `tv flow 57` shows it.")
        #expect(FilterTimeLimitReached(limit: .seconds(5), looked: 1, matched: 0, cut: nil).sentence(.requests)
                == "The filter stopped looking after 5 s (its time limit): 1 request looked at, 0 matched; the next page goes on from there.")
    }
}
