import Testing
@testable import Tunnel

/// Whose a resolver's datagram is on a DNS association where one socket asks several questions
/// (glibc asks A and AAAA at once): by its ID, a waiting query's, else an answered one's, else
/// the one query waiting. A trial's duplicating path filed every repeated A answer under the
/// AAAA query.
@Suite struct DNSReplyOwnerTests {
    @Test("a waiting query's ID is that query's; an answered query's ID is that query's, even while another waits")
    func byID() {
        #expect(DNSReplyOwner.of(id: 0x1111, isWaiting: true, wasAnswered: false, onlyWaiting: 0x1111) == .waiting(0x1111))
        #expect(DNSReplyOwner.of(id: 0x1111, isWaiting: false, wasAnswered: true, onlyWaiting: 0x2222) == .answered(0x1111))
        // An ID a new query took again: the waiting one's.
        #expect(DNSReplyOwner.of(id: 0x1111, isWaiting: true, wasAnswered: true, onlyWaiting: nil) == .waiting(0x1111))
    }

    @Test("an ID no query has (or none: too short) goes to the one query waiting, when one alone waits; else nobody's")
    func strays() {
        #expect(DNSReplyOwner.of(id: 0x3333, isWaiting: false, wasAnswered: false, onlyWaiting: 0x2222) == .onlyWaiting(0x2222))
        #expect(DNSReplyOwner.of(id: nil, isWaiting: false, wasAnswered: false, onlyWaiting: 0x2222) == .onlyWaiting(0x2222))
        #expect(DNSReplyOwner.of(id: 0x3333, isWaiting: false, wasAnswered: false, onlyWaiting: nil) == .none)
        #expect(DNSReplyOwner.of(id: nil, isWaiting: false, wasAnswered: false, onlyWaiting: nil) == .none)
    }

    @Test("answered queries are kept by ID, the oldest forgotten past the capacity; remembering again makes an ID the newest; updating keeps its place")
    func recentAnswers() {
        var recent = RecentDNSAnswers<String>(capacity: 3)
        recent.remember(1, "a")
        recent.remember(2, "b")
        recent.remember(3, "c")
        #expect(recent.ids == [1, 2, 3] && recent.count == 3)
        recent.remember(4, "d")
        #expect(recent.ids == [2, 3, 4] && recent[1] == nil && recent[4] == "d")
        recent.remember(2, "b2")
        #expect(recent.ids == [3, 4, 2] && recent[2] == "b2")
        recent[3] = "c2"
        #expect(recent.ids == [3, 4, 2] && recent[3] == "c2")
        recent.forget(4)
        #expect(recent.ids == [3, 2] && recent[4] == nil)
        recent[3] = nil
        #expect(recent.ids == [2] && recent.count == 1)
    }
}
