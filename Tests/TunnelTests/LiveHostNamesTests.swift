import Testing
@testable import Tunnel

@Suite("LiveHostNames: the names DNS answers gave, while live")
struct LiveHostNamesTests {
    let a = PacketAddress(bytes: [203, 0, 113, 100])!
    let b = PacketAddress(bytes: [203, 0, 113, 101])!
    let second: UInt64 = 1_000_000_000

    @Test("the asked name comes before its CNAME target; a later answer's name before both")
    func order() {
        var table = LiveHostNames()
        let answer = DNSMessage(id: 1, isResponse: true, questions: [DNSQuestion(name: "www.example", type: 1)], answers: [
            DNSRecord(name: "www.example", type: DNSRecord.cname, ttl: 300, data: .name("edge.cdn.example")),
            DNSRecord(name: "edge.cdn.example", type: DNSRecord.a, ttl: 60, data: .address(a)),
        ])
        table.learn(answer.resolvedAddresses, question: "www.example", now: 0)
        #expect(table.names(for: a, now: 1) == ["www.example", "edge.cdn.example"])
        table.learn([DNSResolvedAddress(name: "api.example", address: a, ttl: 30)], question: "api.example", now: 5 * second)
        #expect(table.names(for: a, now: 6 * second) == ["api.example", "www.example", "edge.cdn.example"])
        #expect(table.names(for: b, now: 6 * second) == [])
    }

    @Test("a name is live for its TTL and a minute more (a day at most); expired names are swept")
    func lifetime() {
        var table = LiveHostNames()
        table.learn([DNSResolvedAddress(name: "short.example", address: a, ttl: 0),
                     DNSResolvedAddress(name: "long.example", address: a, ttl: 600),
                     DNSResolvedAddress(name: "huge.example", address: b, ttl: 10_000_000)], question: nil, now: 0)
        #expect(table.names(for: a, now: 59 * second) == ["long.example", "short.example"])
        #expect(table.names(for: a, now: 60 * second) == ["long.example"])
        #expect(table.names(for: a, now: 660 * second) == [])
        #expect(table.names(for: b, now: 86_399 * second) == ["huge.example"])
        #expect(table.names(for: b, now: 86_400 * second) == [])
        table.expire(now: 100 * second)
        #expect(table.count == 2)
        table.expire(now: 86_400 * second)
        #expect(table.count == 0)
    }

    @Test("bounded: names per address, then addresses (expired first, then the soonest to expire), counted")
    func bounds() {
        var table = LiveHostNames(capacity: 8, namesPerAddress: 2)
        table.learn((0..<3).map { DNSResolvedAddress(name: "n\($0).example", address: a, ttl: 50) }, question: nil, now: 0)
        #expect(table.names(for: a, now: 1).count == 2)
        for i in 0..<8 {
            table.learn([DNSResolvedAddress(name: "x.example", address: PacketAddress(bytes: [10, 0, 0, UInt8(i)])!, ttl: UInt32(100 + i))], question: nil, now: 0)
        }
        // The table held 9 addresses' worth: the ninth made room by dropping the soonest to expire (a, ttl 50).
        #expect(table.count == 8 && table.evicted == 1)
        #expect(table.names(for: a, now: 1) == [])
        #expect(table.names(for: PacketAddress(bytes: [10, 0, 0, 7])!, now: 1) == ["x.example"])
    }
}
