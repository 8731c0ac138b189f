import Capture
import FlowTerms
import Testing
import Tunnel
@testable import TVCore

/// `tv packet FLOW N`'s presentation: the row's facts, the header grid and the DNS fields from
/// real packets (dnsmasq's answers and curl's request, captured by tcpdump), the hex dump, and
/// the four sentences that are never said alike.
@Suite("PacketDetailPresentation: facts, header grid, DNS answers, bytes, and the four sentences")
struct PacketDetailPresentationTests {
    static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = text.utf8.makeIterator()
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : (c | 0x20) - 87 }
        while let hi = it.next(), let lo = it.next() { out.append(nibble(hi) << 4 | nibble(lo)) }
        return out
    }

    /// dnsmasq's NXDOMAIN for missing.test (Scripts/fixtures/capture_dns_answers.sh).
    static let nxdomain = hex("4500003a10654000401104b60acb08020acb08010035e78f0026d37e6ca681830001000000000000076d697373696e670474657374000001"
                              + "0001")
    /// dnsmasq's A answer for v4only.test.
    static let answer = hex("4500004910364000401104d60acb08020acb080100359f420035de15e5e0858000010001000000000676346f6e6c79047465737400000100"
                            + "01c00c000100010000000000040acb0007")

    static func row(_ n: Int64 = 2, size: Int, flags: UInt8? = nil, meaning: PacketMeaning = .data) -> PacketRow {
        PacketRow(flow: 9, n: n, captureSeq: 3, fileOffset: 4_096, timeMicros: 1_764_620_000_004_500, direction: .serverToClient,
                  originalLength: Int64(size), includedLength: Int64(size), tcpFlags: flags, meaning: meaning)
    }

    static func detail(_ outcome: CaptureRecord.Outcome, size: Int, snapLength: Int = 65_535) -> PacketDetailPresentation {
        PacketDetailPresentation(row: row(size: size), firstPacketMicros: 1_764_620_000_000_000, fileName: "capture-000003.pcapng",
                                 snapLength: snapLength, outcome: outcome)
    }

    @Test("ICMP in the grid: the type and the code each with its own name (port unreachable, v4 and v6); a code without a name is its number")
    func icmpGrid() throws {
        let quote = "4500001c00004000401100000a0000010a000002e1851b5f00080000"
        let v4 = try PacketDissector.dissect(Self.hex("450000380000000040010000" + "0a0000020a000001" + "0303000000000000" + quote)).get()
        #expect(Array(PacketHeaderGrid.sections(v4).dropFirst()) == [
            .init("ICMP", [.init("type", "3 (Destination unreachable)"), .init("code", "3 (port unreachable)")]),
            .init("Quoted packet", [.init("from", "10.0.0.1"), .init("to", "10.0.0.2"), .init("protocol", "UDP"), .init("length", "28 bytes (28 quoted)"),
                                    .init("ports", "57733 → 7007"), .init("UDP length", "8 bytes")]),
        ])
        let v6 = try PacketDissector.dissect(Self.hex("60000000000c3a40" + "fd000000000000000000000000000001fd000000000000000000000000000002"
                                                       + "0104000000000000" + "60000000")).get()
        #expect(PacketHeaderGrid.sections(v6).last == .init("ICMPv6", [.init("type", "1 (Destination unreachable)"), .init("code", "4 (port unreachable)")]))
        let echo = try PacketDissector.dissect(Self.hex("4500001c0000000040010000" + "0a0000020a000001" + "0800000000010001")).get()
        #expect(PacketHeaderGrid.sections(echo).last == .init("ICMP", [.init("type", "8 (Echo request)"), .init("code", "0")]))
    }

    @Test("fragmentation needed: the next-hop MTU, and the quoted packet's addresses, protocol, ports and lengths (a trial's showed neither); packet too big likewise")
    func pathTooSmallGrid() throws {
        // A router's ICMP about a 1,428-byte DF datagram 10.77.0.1:40000 → 10.42.3.2:21101, MTU
        // 1280, quoting its headers and 20 of its payload bytes.
        let quote4 = "45000594000040004011000" + "00a4d00010a2a03029c40526d058000000000000000000000000000000000000000000000"
        let v4 = try PacketDissector.dissect(Self.hex("4500004c0000000040010000" + "0a2a01010a4d0001" + "0304000000000500" + quote4)).get()
        #expect(Array(PacketHeaderGrid.sections(v4).dropFirst()) == [
            .init("ICMP", [.init("type", "3 (Destination unreachable)"), .init("code", "4 (fragmentation needed and DF set)"),
                           .init("next-hop MTU", "1280 bytes")]),
            .init("Quoted packet", [.init("from", "10.77.0.1"), .init("to", "10.42.3.2"), .init("protocol", "UDP"), .init("length", "1,428 bytes (48 quoted)"),
                                    .init("ports", "40000 → 21101"), .init("UDP length", "1,408 bytes")]),
        ])
        let quote6 = "6000000005801140" + "fd770000000000000000000000000001" + "fd420003000000000000000000000002" + "9c40526d05800000"
        let v6 = try PacketDissector.dissect(Self.hex("6000000000383a40" + "fd420001000000000000000000000001fd770000000000000000000000000001"
                                                       + "0200000000000500" + quote6)).get()
        #expect(Array(PacketHeaderGrid.sections(v6).dropFirst()) == [
            .init("ICMPv6", [.init("type", "2 (Packet too big)"), .init("code", "0"), .init("MTU", "1280 bytes")]),
            .init("Quoted packet", [.init("from", "fd77::1"), .init("to", "fd42:3::2"), .init("protocol", "UDP"), .init("length", "1,448 bytes (48 quoted)"),
                                    .init("ports", "40000 → 21101"), .init("UDP length", "1,408 bytes")]),
        ])
    }

    @Test("DNS over TCP (RFC 7766): a segment holding a message's length and all of it gets the DNS fields; a part of one says so; a bare ACK has no DNS section")
    func dnsOverTCP() throws {
        let message = Array(Self.nxdomain[28...])   // the NXDOMAIN reply's DNS message (after IPv4 20 + UDP 8)
        func segment(_ payload: [UInt8]) -> [UInt8] {
            let total = 40 + payload.count
            return Self.hex("4500") + [UInt8(total >> 8), UInt8(total & 0xff)] + Self.hex("0000400040060000" + "0acb08020acb0801")
                + Self.hex("0035e78f" + "00000001" + "00000001" + "5018" + "fa00" + "0000" + "0000") + payload
        }
        let whole = try PacketDissector.dissect(segment([UInt8(message.count >> 8), UInt8(message.count & 0xff)] + message)).get()
        #expect(PacketHeaderGrid.sections(whole).last?.title == "DNS")
        #expect(PacketHeaderGrid.sections(whole).last?.fields.contains(.init("answer", "No such name (NXDOMAIN)")) == true, "\(PacketHeaderGrid.sections(whole))")
        let part = try PacketDissector.dissect(segment([UInt8(message.count >> 8), UInt8(message.count & 0xff)] + message.prefix(10))).get()
        #expect(part.dns == .partOfTCPMessage)
        #expect(PacketHeaderGrid.sections(part).last == .init("DNS", [.init("message", "part of a DNS message over TCP that other segments complete (tshark reassembles it)")]))
        let ack = try PacketDissector.dissect(segment([])).get()
        #expect(ack.dns == nil)
    }

    @Test("an NXDOMAIN reply: facts, IPv4 and UDP fields, 'No such name', the bytes")
    func nxdomainReply() {
        let lines = Self.detail(.bytes(Self.nxdomain), size: 58).lines
        #expect(lines == [
            "Packet 2 of flow 9",
            "  when        0.005 s after the flow's first packet (2025-12-01 20:13:20.004500 UTC)",
            "  direction   ← server to client",
            "  size        58 bytes",
            "  meaning     data",
            "IPv4",
            "  from      10.203.8.2",
            "  to        10.203.8.1",
            "  TTL       64",
            "  id        0x1065",
            "  fragment  don't fragment",
            "UDP",
            "  ports   53 → 59279",
            "  length  38 bytes",
            "DNS",
            "  message      reply",
            "  looked up    missing.test",
            "  record type  A",
            "  answer       No such name (NXDOMAIN)",
            "Bytes (58 kept, capture-000003.pcapng at offset 4096)",
            "  00000000  45 00 00 3a 10 65 40 00  40 11 04 b6 0a cb 08 02  |E..:.e@.@.......|",
            "  00000010  0a cb 08 01 00 35 e7 8f  00 26 d3 7e 6c a6 81 83  |.....5...&.~l...|",
            "  00000020  00 01 00 00 00 00 00 00  07 6d 69 73 73 69 6e 67  |.........missing|",
            "  00000030  04 74 65 73 74 00 00 01  00 01                    |.test.....|",
        ])
    }

    @Test("an answer: the address; NODATA is said differently from NXDOMAIN")
    func answers() {
        let lines = Self.detail(.bytes(Self.answer), size: 73).lines
        #expect(lines.contains("  addresses    10.203.0.7"))
        #expect(!lines.contains { $0.contains("answer ") })
        // dnsmasq's NODATA (AAAA for a name with only an A record) read by the same grid.
        let nodata = PacketHeaderGrid.dnsFields(.message(.init(id: 1, isReply: true, name: "v4only.test", recordType: 28,
                                                                answer: .init(outcome: .noRecordsOfThatType))))
        #expect(nodata.last == .init("answer", "No records of that type (the name exists)"))
        #expect(PacketHeaderGrid.dnsFields(.captureKeptTooLittle) != PacketHeaderGrid.dnsFields(.notDNS(reason: "x")))
    }

    @Test("the four sentences: deleted, read failure (retry offered), snap length cut (permanent), display cap (2 KB)")
    func fourSentences() {
        let deleted = Self.detail(.deleted, size: 58)
        #expect(deleted.lines.last == "capture-000003.pcapng was deleted: those bytes are gone; the connection stays in your history.")
        #expect(!deleted.lines.contains { $0.hasPrefix("Bytes") })
        let failed = Self.detail(.readFailed("Input/output error"), size: 58)
        #expect(failed.lines.last == "The bytes could not be read from capture-000003.pcapng (Input/output error); try `tv packet 9 2` again.")
        // A damaged file is not offered a retry: the same bytes are there next time.
        let damaged = Self.detail(.damaged("the file ends before the record does"), size: 58)
        #expect(damaged.lines.last == "capture-000003.pcapng is damaged where this packet was written (the file ends before the record does): "
                + "it was changed or cut after tv wrote it, so these bytes cannot be drawn; the connection stays in your history.")
        let cut = Self.detail(.bytes(Array(Self.nxdomain.prefix(40))), size: 58, snapLength: 40)
        #expect(cut.lines.last == "The capture kept 40 of this packet's 58 bytes: its snap length (40) cut the rest when it was written, and that is permanent; `tv settings set capture.snaplen BYTES` keeps more from the next session.")
        #expect(cut.lines.contains("  message  the capture kept too little of this packet to read it; `tv settings set capture.snaplen` keeps more from the next session"))
        let big = [UInt8](repeating: 0x41, count: 3_000)
        let capped = Self.detail(.bytes(big), size: 3_000)
        #expect(capped.lines.last == "Showing the first 2,048 of the 3,000 bytes kept (the display's cap, 2 KB); the file holds them all.")
        #expect(capped.lines.filter { $0.hasPrefix("  0000") }.count == 128)
        let sentences = [deleted.absence, failed.absence, cut.snapLengthCut, capped.displayCapNote]
        #expect(Set(sentences.compactMap { $0 }).count == 4)
        #expect(deleted.snapLengthCut == nil && deleted.displayCapNote == nil && capped.absence == nil && capped.snapLengthCut == nil)
        let other = Self.detail(.notThisPacket(recordLength: 1_500, recordTimeMicros: 0), size: 58)
        #expect(other.lines.last == "The record at this packet's place in capture-000003.pcapng is of another packet (1,500 bytes, this one was 58), so it is not drawn.")
        let lost = Self.detail(.neverWritten(fileBytes: 4_096), size: 58)
        #expect(lost.lines.last == "Packet \(lost.row.n) of flow \(lost.row.flow) never reached capture-000003.pcapng: the session writing it ended (killed, or crashed) before it wrote its last packets, and the file keeps the 4,096 bytes written before; the connection stays in your history.")
        let then = Self.detail(.bytes([]), size: 58).row.timeMicros
        let otherTime = Self.detail(.notThisPacket(recordLength: 58, recordTimeMicros: then - 1_500_000), size: 58)
        #expect(otherTime.lines.last == "The record at this packet's place in capture-000003.pcapng is of another packet (captured 1.5 s before this one), so it is not drawn.")
    }

    @Test("a name from the wire is one line in the grid: a newline in a DNS label is shown escaped, never drawn (a trial forged a line so)")
    func gridValuesAreOneLine() {
        // dnsmasq's NXDOMAIN with the label "missing" made "m\nssing".
        let forged = Self.hex("4500003a10654000401104b60acb08020acb08010035e78f0026d37e6ca681830001000000000000076d0a7373696e670474657374000001"
                              + "0001")
        let lines = Self.detail(.bytes(forged), size: 58).lines
        #expect(lines.contains { $0.hasPrefix("  looked up") && $0.hasSuffix("m\\nssing.test") }, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("ssing") })
    }

    @Test("--json: the facts, the grid, the hex and each sentence under its own key")
    func json() {
        let text = Self.detail(.deleted, size: 58).json.serialized(pretty: false)
        #expect(text.contains("\"absence\":\"capture-000003.pcapng was deleted: those bytes are gone; the connection stays in your history.\""))
        #expect(text.contains("\"hex\":null") && text.contains("\"snapLengthCut\":null"))
        // The capture as `tv packets --json` gives it: its sequence number, the file's name beside.
        #expect(text.contains("\"capture\":3,\"captureFile\":\"capture-000003.pcapng\""), "\(text)")
        let syn = PacketDetailPresentation(row: Self.row(size: 60, flags: 0x12, meaning: .accepted), firstPacketMicros: 1_764_620_000_000_000,
                                           fileName: "capture-000003.pcapng", snapLength: 65_535, outcome: .deleted)
        #expect(syn.json.serialized(pretty: false).contains("\"tcpFlags\":[\"SYN\",\"ACK\"]"))
        let shown = Self.detail(.bytes(Self.nxdomain), size: 58).json.serialized(pretty: false)
        #expect(shown.contains("\"hex\":\"4500003a1065"))
        #expect(shown.contains("\"DNS\":{\"message\":\"reply\",\"looked up\":\"missing.test\",\"record type\":\"A\",\"answer\":\"No such name (NXDOMAIN)\"}"))
    }
}
