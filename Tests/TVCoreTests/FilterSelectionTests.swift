import FlowFilter
import FlowStore
import FlowTerms
import Testing
@testable import TVCore

/// The pure parts of `--filter` and the HAR selection in TVCore: how a flow row answers the
/// operators, the one sentence about unanswered operators, and reading ids and ranges.
@Suite struct FilterSelectionTests {
    static let flow = FlowRecord(id: 7, startTime: 1_000, clientAddress: "::1", clientPort: 50_000, serverAddress: "192.0.2.9",
                                 serverPort: 8443, transport: .udp, status: .failed)

    @Test func flowRowAnswersConnectionFieldsOnly() {
        let subject = FlowRowSubject(Self.flow)
        #expect(subject.texts(.domain) == ["192.0.2.9"])          // no name: the server's address
        #expect(subject.texts(.source) == ["[::1]:50000"])
        #expect(subject.texts(.destination) == ["192.0.2.9:8443"])
        #expect(FilterField.allCases.filter { subject.texts($0) == nil }
            == [.method, .url, .statusCode, .requestContentType, .responseContentType, .requestHeaders, .responseHeaders, .requestBody, .responseBody])
        #expect(subject.flag(.failed) == true)
        #expect(subject.flag(.udp) == true)
        #expect(subject.flag(.tcp) == false)
        #expect(subject.flag(.hasResponse) == nil)
        var named = Self.flow
        named.host = "example.test"
        #expect(FlowRowSubject(named).texts(.domain) == ["example.test"])
    }

    @Test func authorityHost() {
        #expect(ExchangeRowSubject.host("example.com") == "example.com")
        #expect(ExchangeRowSubject.host("example.com:8080") == "example.com")
        #expect(ExchangeRowSubject.host("[::1]:8443") == "::1")
        #expect(ExchangeRowSubject.host("[2001:db8::1]") == "2001:db8::1")
        #expect(ExchangeRowSubject.host(":80") == nil)
        #expect(ExchangeRowSubject.host("") == nil)
    }

    @Test func noticeNamesUnansweredOperatorsOnce() throws {
        var matcher = FilterMatcher(try FilterParser.parse("~m GET | ~h x | ~b y"))
        for _ in 0..<3 { _ = matcher.matches(FlowRowSubject(Self.flow)) }
        #expect(FilterNotice.sentence(matcher, rows: .flows)
            == "~b, ~h and ~m look at requests, which flow rows do not hold, so they matched no flow; `tv requests --filter` filters requests.")
        var requests = FilterMatcher(try FilterParser.parse("~b secret"))
        _ = requests.matches(FilterFields(texts: [.requestBody: ["no secret here"], .responseBody: []]))
        _ = requests.matches(FilterFields(texts: [:]))
        #expect(FilterNotice.sentence(requests, rows: .requests)
            == "~b looks in kept headers and bodies, which 1 of the 2 requests checked do not have (no content was kept for them: content.keep was off, their flow's recording budget had run out, tv answered them itself, or what was kept expired or was deleted), so it matched none of those.")
        var answered = FilterMatcher(try FilterParser.parse("~d x"))
        _ = answered.matches(FlowRowSubject(Self.flow))
        #expect(FilterNotice.sentence(answered, rows: .flows) == nil)
    }

    @Test func idsAndRanges() throws {
        var selection = HARSelection()
        try selection.add(["40", "41", "40", "50-58", "7-7"])
        #expect(selection.ids == [40, 41])
        #expect(selection.ranges == [50...58, 7...7])
        #expect(selection.onlyIDs == false)
        var record = Self.flow
        for (id, selected) in [(Int64(40), true), (42, false), (55, true), (7, true), (59, false)] {
            record.id = id
            #expect(selection.selects(record) == selected, "\(id)")
        }
        selection.from = 2_000
        record.id = 40
        #expect(selection.selects(record) == false)             // started before --from
        for (word, error) in [("48-40", HARSelectionError.backwardRange("48-40")), ("4x", .badID("4x")), ("40-", .badID("40-")),
                              ("-", .badID("-")), ("0", .badID("0")), ("1-2-3", .badID("1-2-3")), ("١٢", .badID("١٢"))] {
            var s = HARSelection()
            #expect(throws: error) { try s.add([word]) }
        }
        var single = HARSelection()
        try single.add(["3"])
        #expect(single.onlyIDs)
    }

    @Test func validation() throws {
        #expect(throws: HARSelectionError.nothingSelected) { try HARSelection().validate() }
        var both = HARSelection()
        both.all = true
        try both.add(["1"])
        #expect(throws: HARSelectionError.allWithIDs) { try both.validate() }
        var window = HARSelection()
        window.from = 5
        window.to = 5
        #expect(throws: HARSelectionError.emptyWindow) { try window.validate() }
        var filtered = HARSelection()
        filtered.filtered = true
        try filtered.validate()
    }
}
