import Testing
import Wire
@testable import Tunnel

/// The mailbox between the relays (DNS-over-TCP responses they read) and the TUN engine: never
/// blocks, bounded, counts what it drops, hands everything over in order.
@Suite("TCPDNSAnswers: the relays' DNS-over-TCP responses, waiting for the engine")
struct TCPDNSAnswersTests {
    static func answer(_ n: Int) -> TCPDNSAnswer {
        TCPDNSAnswer(message: [UInt8(n & 0xff)], asked: DNSQuestionEntry(name: "n\(n).test", type: 1))
    }

    @Test("responses wait in order and are taken all at once; an empty mailbox says so with one load")
    func order() {
        let mailbox = TCPDNSAnswers()
        #expect(!mailbox.hasWaiting && mailbox.drain().isEmpty)
        mailbox.take([Self.answer(1), Self.answer(2)])
        mailbox.take([Self.answer(3)])
        #expect(mailbox.hasWaiting)
        #expect(mailbox.drain() == [Self.answer(1), Self.answer(2), Self.answer(3)])
        #expect(!mailbox.hasWaiting && mailbox.drain().isEmpty)
        #expect(mailbox.taken.load(ordering: .relaxed) == 3 && mailbox.dropped.load(ordering: .relaxed) == 0)
    }

    @Test("full: the newest are dropped and counted, what waited stays")
    func bound() {
        let mailbox = TCPDNSAnswers()
        mailbox.take((0..<(TCPDNSAnswers.capacity - 1)).map(Self.answer))
        mailbox.take([Self.answer(7_001), Self.answer(7_002), Self.answer(7_003)])
        #expect(mailbox.taken.load(ordering: .relaxed) == UInt64(TCPDNSAnswers.capacity))
        #expect(mailbox.dropped.load(ordering: .relaxed) == 2)
        let all = mailbox.drain()
        #expect(all.count == TCPDNSAnswers.capacity && all.last == Self.answer(7_001))
    }

    @Test("a relay's reader counts, summed as connections end")
    func streamCounts() {
        let mailbox = TCPDNSAnswers()
        var counts = DNSOverTCPReader.Counts()
        counts.strayResponses = 2
        counts.bytesNotRead = 40
        counts.gaveUp = true
        mailbox.streamEnded(counts)
        mailbox.streamEnded(DNSOverTCPReader.Counts())
        #expect(mailbox.strayResponses.load(ordering: .relaxed) == 2 && mailbox.bytesNotRead.load(ordering: .relaxed) == 40)
        #expect(mailbox.streamsNotDNS.load(ordering: .relaxed) == 1 && mailbox.queriesNotTracked.load(ordering: .relaxed) == 0)
    }
}
