import Testing
@testable import Tunnel

@Suite("DNSMessageParser on glibc's queries and dnsmasq's answers")
struct DNSMessageParserTests {
    func payload(_ packet: CapturedPacket) throws -> [UInt8] {
        let u = try #require(try udp(packet.bytes)?.get())
        return Array(packet.bytes[u.payloadOffset..<(u.payloadOffset + u.payloadLength)])
    }

    @Test("glibc's A query: id, RD, one question")
    func query() throws {
        let q = CapturedPackets.first("A? www.origin.test.", "+ ")
        let message = try DNSMessageParser.parse(try payload(q)).get()
        #expect(q.summary.contains(" \(message.id)+ A?"))
        #expect(!message.isResponse && message.opcode == 0)
        #expect(message.questions == [DNSQuestion(name: "www.origin.test", type: DNSRecord.a)])
        #expect(message.answers.isEmpty)
    }

    @Test("dnsmasq's answers: CNAME then A / AAAA; names resolved through the CNAME chain")
    func answers() throws {
        let a = try DNSMessageParser.parse(try payload(CapturedPackets.first("q: A? www.origin.test."))).get()
        #expect(a.isResponse && a.responseCode == 0)
        #expect(a.answers.map(\.type) == [DNSRecord.cname, DNSRecord.a])
        #expect(a.answers[0].data == .name("origin.test") && a.answers[0].name == "www.origin.test")
        #expect(a.answers[1].data == .address(PacketAddress("10.203.0.2")!))
        let names = a.resolvedAddresses.map { "\($0.name)=\($0.address)" }.sorted()
        #expect(names == ["origin.test=10.203.0.2", "www.origin.test=10.203.0.2"])
        let aaaa = try DNSMessageParser.parse(try payload(CapturedPackets.first("q: AAAA? www.origin.test."))).get()
        #expect(aaaa.resolvedAddresses.map(\.address.description).allSatisfy { $0 == "fd03::2" })
        #expect(aaaa.resolvedAddresses.count == 2)
    }

    @Test("an answer names only what answers the question asked: the same ID and question (RFC 5452 §9.1), the question's CNAME chain")
    func answerMatch() throws {
        let a = try DNSMessageParser.parse(try payload(CapturedPackets.first("q: A? www.origin.test."))).get()
        let asked = DNSQuestion(name: "www.origin.test", type: DNSRecord.a)
        #expect(DNSAnswerMatch.judge(.success(a), asked: asked) == .answers(a))
        #expect(DNSAnswerMatch.judge(.success(a), asked: DNSQuestion(name: "www.origin.test", type: DNSRecord.aaaa)) == .doesNotAnswer)
        #expect(DNSAnswerMatch.judge(.success(a), asked: DNSQuestion(name: "origin.test", type: DNSRecord.a)) == .doesNotAnswer)
        #expect(DNSAnswerMatch.judge(.success(a), asked: nil) == .unchecked)
        var query = a
        query.isResponse = false
        #expect(DNSAnswerMatch.judge(.success(query), asked: asked) == .doesNotAnswer)
        #expect(DNSAnswerMatch.judge(DNSMessageParser.parse([0, 1, 2]), asked: asked) == .unreadable("shorter than the 12-byte header"))
        // The chain from the question: a record beside it names nothing.
        let bank = PacketAddress("192.0.2.1")!, origin = PacketAddress("10.203.0.2")!
        var spoofed = a
        spoofed.answers.append(DNSRecord(name: "www.bank.example", type: DNSRecord.a, ttl: 60, data: .address(bank)))
        #expect(spoofed.resolvedAddresses.contains { $0.name == "www.bank.example" })
        #expect(spoofed.resolvedAddresses(answering: asked).map { "\($0.name)=\($0.address)" }.sorted()
                == ["origin.test=\(origin)", "www.origin.test=\(origin)"])
        #expect(spoofed.resolvedAddresses(answering: DNSQuestion(name: "origin.test", type: DNSRecord.a)).map(\.name) == ["origin.test"])
        #expect(spoofed.resolvedAddresses(answering: nil).isEmpty)
        #expect(DNSQueryEnd.unanswered(seconds: 5, otherAnswers: 0) == "no answer within 5 s")
        #expect(DNSQueryEnd.unanswered(seconds: 5, otherAnswers: 2) == "no answer within 5 s; 2 datagrams with its ID answered another question (a spoofed or misdirected answer, which the program's resolver drops)")
    }

    @Test("TTLs: the smallest along the chain; a TTL with the top bit set reads as 0 (RFC 2181 §8)")
    func ttls() throws {
        let message = try DNSMessageParser.parse(hex("""
            1234 8180 0001 0002 0000 0000 0161 0474 6573 7400 0001 0001
            c00c 0005 0001 0000 012c 0004 0162 c00e
            c024 0001 0001 0000 0e10 0004 0a00 0001
            """)).get()
        // a.test CNAME b.test (300 s), b.test A 10.0.0.1 (3600 s).
        let resolved = Dictionary(uniqueKeysWithValues: message.resolvedAddresses.map { ($0.name, $0.ttl) })
        #expect(resolved == ["b.test": 3600, "a.test": 300])
        var top = hex("1234 8180 0000 0001 0000 0000 0162 0474 6573 7400 0001 0001 8000 0000 0004 0a00 0001")
        #expect(try DNSMessageParser.parse(top).get().answers.first?.ttl == 0)
        top[28] = 0x01   // RDLENGTH 260: past the end
        #expect(throws: DNSMessageParser.Failure.self) { try DNSMessageParser.parse(top).get() }
    }

    @Test("malformed names are refused: a pointer loop, a forward pointer, a label past the end, every truncation")
    func malformed() throws {
        let loop = hex("0001 0100 0001 0000 0000 0000 c00c 0001 0001")
        #expect(throws: DNSMessageParser.Failure.self) { try DNSMessageParser.parse(loop).get() }
        let forward = hex("0001 0100 0001 0000 0000 0000 c00e 0001 0001 0000")
        #expect(throws: DNSMessageParser.Failure.self) { try DNSMessageParser.parse(forward).get() }
        let long = hex("0001 0100 0001 0000 0000 0000 3f61")
        #expect(throws: DNSMessageParser.Failure.self) { try DNSMessageParser.parse(long).get() }
        let answer = try payload(CapturedPackets.first("q: AAAA? www.origin.test."))
        for cut in 0..<answer.count {
            if case .success = DNSMessageParser.parse(Array(answer[0..<cut])) { Issue.record("a cut at \(cut) parsed") }
        }
    }

    @Test("SERVFAIL for a query echoes its id and question with QR, RD, RA and RCODE 2")
    func serverFailure() throws {
        let query = try payload(CapturedPackets.first("A? www.origin.test.", "+ "))
        let reply = try #require(query.withUnsafeBytes { DNSMessageParser.serverFailure(answering: $0) })
        let message = try DNSMessageParser.parse(reply).get()
        #expect(reply.count == query.count)
        #expect(message.id == UInt16(query[0]) << 8 | UInt16(query[1]))
        #expect(message.isResponse && message.responseCode == 2 && reply[2] & 0x01 == 0x01 && reply[3] & 0x80 == 0x80)
        #expect(message.questions.first?.name == "www.origin.test")
    }
}
