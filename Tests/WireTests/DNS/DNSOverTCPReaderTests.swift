import Testing
@testable import Wire

/// DNS over TCP (RFC 7766) cut into messages and paired, on the bytes of real exchanges: `dig
/// +tcp` and glibc's retry over TCP after a truncated answer, against dnsmasq, captured with
/// tcpdump over an MTU-576 veth (Scripts/fixtures/capture_dns_tcp.sh).
@Suite("DNS over TCP: framing and pairing on dig's and glibc's captured segments")
struct DNSOverTCPReaderTests {
    /// Feeds `chunks` to a framing and returns each message it handed on (copied).
    func messages(_ chunks: [[UInt8]], _ framing: inout DNSTCPFraming) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for chunk in chunks { chunk.withUnsafeBytes { framing.feed($0) { out.append(Array($0)) } } }
        return out
    }

    @Test("dig's query: one segment, one whole message of the length its prefix says, read in place")
    func oneSegment() throws {
        let query = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digOne)[0]
        #expect(query.summary.contains("10.203.7.1.40155 > 10.203.7.2.53") && query.payload.count == 51)
        var framing = DNSTCPFraming()
        let got = messages([query.payload], &framing)
        #expect(got == [Array(query.payload[2...])] && got[0].count == 49)
        #expect(framing.messages == 1 && framing.bytesPending == 0)
        let head = try #require(got[0].withUnsafeBytes { DNSMessageHead.read($0) })
        #expect(head == DNSMessageHead(id: 0x1b33, isResponse: false, questionCount: 1, question: DNSQuestionEntry(name: "tcp.test", type: 1)))
    }

    @Test("an answer of 46 A records in two segments (524 and 252 bytes): nothing after the first, the 774-byte message after the second")
    func acrossSegments() throws {
        let segments = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digMany)
        let answer = segments.filter { !$0.toServer }
        #expect(answer.map(\.payload.count) == [524, 252])
        var framing = DNSTCPFraming()
        #expect(messages([answer[0].payload], &framing).isEmpty)
        #expect(framing.bytesPending == 524)
        let got = messages([answer[1].payload], &framing)
        #expect(got.count == 1 && got[0].count == 774 && framing.bytesPending == 0)
        #expect(got[0] == Array((answer[0].payload + answer[1].payload)[2...]))
        let head = try #require(got[0].withUnsafeBytes { DNSMessageHead.read($0) })
        #expect(head.id == 0xa646 && head.isResponse && head.responseCode == 0 && head.question == DNSQuestionEntry(name: "many.test", type: 1))
    }

    @Test("the same bytes a byte at a time, and two messages in one burst: the same messages, in order")
    func anySplit() {
        let stream = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digMany).filter { !$0.toServer }.flatMap(\.payload)
        var byByte = DNSTCPFraming()
        let one = messages(stream.map { [$0] }, &byByte)
        #expect(one.count == 1 && one[0] == Array(stream[2...]))
        // The query and a copy of it in one burst, then the length split from its message.
        let query = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digOne)[0].payload
        var framing = DNSTCPFraming()
        let two = messages([query + query + [query[0]], Array(query[1...])], &framing)
        #expect(two == [Array(query[2...]), Array(query[2...]), Array(query[2...])] && framing.messages == 3)
    }

    @Test("glibc's retry over TCP: its query names many.test A; the answer in two segments is paired with it, whole")
    func glibcRetry() throws {
        let segments = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.glibcRetry)
        #expect(segments.map(\.toServer) == [true, false, false])
        var reader = DNSOverTCPReader()
        var found: [DNSOverTCPReader.Finding] = []
        for segment in segments {
            segment.payload.withUnsafeBytes { reader.read($0, fromClient: segment.toServer) { found.append($0) } }
        }
        let asked = DNSQuestionEntry(name: "many.test", type: 1)
        let message = Array((segments[1].payload + segments[2].payload)[2...])
        #expect(message.count == 763)
        #expect(found == [.query(id: 0xd73b, question: asked), .response(TCPDNSAnswer(message: message, asked: asked))])
        #expect(reader.counts.queries == 1 && reader.counts.responses == 1 && reader.counts.strayResponses == 0)
        reader.finish()
        #expect(reader.counts.bytesNotRead == 0 && reader.isReading)
    }

    @Test("a response no query asked is a stray (named nothing); a stream cut inside a message counts what it cut")
    func strayAndCut() {
        let dig = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digOne)
        var reader = DNSOverTCPReader()
        var found: [DNSOverTCPReader.Finding] = []
        dig[1].payload.withUnsafeBytes { reader.read($0, fromClient: false) { found.append($0) } }
        #expect(found.isEmpty && reader.counts.strayResponses == 1)
        Array(dig[0].payload.prefix(20)).withUnsafeBytes { reader.read($0, fromClient: true) { found.append($0) } }
        reader.finish()
        #expect(found.isEmpty && reader.counts.bytesNotRead == 20)
    }

    @Test("a port-53 connection that speaks something else: reading stops for good at its first message, every byte after counted")
    func notDNS() {
        var reader = DNSOverTCPReader()
        var found: [DNSOverTCPReader.Finding] = []
        // "GE" reads as a 18,245-byte length: 18,247 bytes make it whole, and 13 more follow.
        let request = Array("GET / HTTP/1.1\r\n".utf8) + [UInt8](repeating: 0x41, count: 18_231 + 13)
        request.withUnsafeBytes { reader.read($0, fromClient: true) { found.append($0) } }
        #expect(found.isEmpty && !reader.isReading && reader.counts.gaveUp)
        #expect(reader.counts.bytesNotRead == UInt64(request.count))
        [UInt8]([1, 2, 3]).withUnsafeBytes { reader.read($0, fromClient: false) { found.append($0) } }
        #expect(reader.counts.bytesNotRead == UInt64(request.count + 3))
    }

    @Test("at most 64 queries wait on one connection: the 65th is not tracked, and its response is a stray")
    func waitingBound() {
        var reader = DNSOverTCPReader()
        let query = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digOne)[0].payload
        for id in 0..<65 {
            var q = query
            q[2] = UInt8(id >> 8); q[3] = UInt8(id & 0xff)
            q.withUnsafeBytes { reader.read($0, fromClient: true) { _ in } }
        }
        #expect(reader.counts.queries == 65 && reader.counts.queriesNotTracked == 1)
        var answer = CapturedDNSOverTCP.connection(CapturedDNSOverTCP.digOne)[1].payload
        answer[2] = 0; answer[3] = 64
        var found = 0
        answer.withUnsafeBytes { reader.read($0, fromClient: false) { _ in found += 1 } }
        #expect(found == 0 && reader.counts.strayResponses == 1)
    }
}
