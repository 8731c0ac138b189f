import Wire
import Capture
import FlowTerms
import Foundation
import Testing
@testable import Tunnel

/// The decrypted capture's synthesized TCP streams: exact sequence and acknowledgment numbers,
/// flags and segment sizes, and tshark's reading of them (checksums verified, HTTP dissected).
@Suite("TCPStreamSynthesizer: handshake, segments, FIN and RST, as tshark reads them")
struct TCPStreamSynthesizerTests {
    let request = Array("GET /a HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8)
    let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".utf8)

    func tcp(_ packet: TCPStreamSynthesizer.Packet) throws -> (TCPFields, IPFields) {
        let d = try PacketDissector.dissect(packet.bytes).get()
        guard case .tcp(let t)? = d.transport else { throw CancellationError() }
        return (t, d.ip)
    }

    /// seq, ack, flags names, payload length of each packet.
    func summary(_ packets: [TCPStreamSynthesizer.Packet]) throws -> [String] {
        try packets.map { p in
            let (t, ip) = try tcp(p)
            let arrow = p.direction == .clientToServer ? ">" : "<"
            return "\(arrow) \(ip.source.description):\(t.sourcePort) seq \(t.sequenceNumber) ack \(t.acknowledgmentNumber) "
                + TCPFlags.acronyms(t.flags) + " len \(t.payloadLength)"
        }
    }

    @Test("a request and its response: handshake, data with PSH on the last segment, the peer's ACK, FINs")
    func exchange() throws {
        var s = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80),
                                     clientISN: 1000, serverISN: 5000, maximumSegmentSize: 30)
        var packets = s.handle(.opened)
        packets += s.handle(.data(.clientToServer, request))       // 39 bytes: 30 + 9
        packets += s.handle(.data(.serverToClient, response))      // 40 bytes: 30 + 10
        packets += s.handle(.ended(.closedByClient))
        #expect(s.handle(.data(.clientToServer, [1])) == [] && s.state == .ended)
        #expect(try summary(packets) == [
            "> 10.0.0.1:40000 seq 1000 ack 0 SYN len 0",
            "< 10.0.0.2:80 seq 5000 ack 1001 SYN, ACK len 0",
            "> 10.0.0.1:40000 seq 1001 ack 5001 ACK len 0",
            "> 10.0.0.1:40000 seq 1001 ack 5001 ACK len 30",
            "> 10.0.0.1:40000 seq 1031 ack 5001 PSH, ACK len 9",
            "< 10.0.0.2:80 seq 5001 ack 1040 ACK len 0",
            "< 10.0.0.2:80 seq 5001 ack 1040 ACK len 30",
            "< 10.0.0.2:80 seq 5031 ack 1040 PSH, ACK len 10",
            "> 10.0.0.1:40000 seq 1040 ack 5041 ACK len 0",
            "> 10.0.0.1:40000 seq 1040 ack 5041 FIN, ACK len 0",
            "< 10.0.0.2:80 seq 5041 ack 1041 FIN, ACK len 0",
            "> 10.0.0.1:40000 seq 1041 ack 5042 ACK len 0",
        ])
        #expect(try tcp(packets[0]).0.options == [.maximumSegmentSize(30)])
        #expect(try tcp(packets[3]).0.options == [])
    }

    @Test("reopened at a new file: a handshake one before each side's next byte, the data after it with no gap; nothing for a stream not open")
    func reopening() throws {
        var s = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80),
                                     clientISN: 1000, serverISN: 5000, maximumSegmentSize: 30)
        var fresh = s
        #expect(fresh.handle(.reopened) == [] && fresh.state == .fresh)
        _ = s.handle(.opened) + s.handle(.data(.clientToServer, request))
        let packets = s.handle(.reopened) + s.handle(.data(.serverToClient, response))
        #expect(try summary(packets) == [
            "> 10.0.0.1:40000 seq 1039 ack 0 SYN len 0",
            "< 10.0.0.2:80 seq 5000 ack 1040 SYN, ACK len 0",
            "> 10.0.0.1:40000 seq 1040 ack 5001 ACK len 0",
            "< 10.0.0.2:80 seq 5001 ack 1040 ACK len 30",
            "< 10.0.0.2:80 seq 5031 ack 1040 PSH, ACK len 10",
            "> 10.0.0.1:40000 seq 1040 ack 5041 ACK len 0",
        ])
        #expect(try tcp(packets[0]).0.options == [.maximumSegmentSize(30)])
        _ = s.handle(.ended(.closedByClient))
        #expect(s.handle(.reopened) == [] && s.state == .ended)
    }

    @Test("the server closing first sends the first FIN; a client's reset is the client's RST (a trial's was drawn as the server's)")
    func whoEnded() throws {
        var closed = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80), clientISN: 100, serverISN: 500)
        _ = closed.handle(.opened)
        #expect(try summary(closed.handle(.ended(.closed(firstFrom: .serverToClient)))) == [
            "< 10.0.0.2:80 seq 501 ack 101 FIN, ACK len 0",
            "> 10.0.0.1:40000 seq 101 ack 502 FIN, ACK len 0",
            "< 10.0.0.2:80 seq 502 ack 102 ACK len 0",
        ])
        var reset = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80), clientISN: 100, serverISN: 500)
        _ = reset.handle(.opened)
        #expect(try summary(reset.handle(.ended(.reset(from: .clientToServer)))) == ["> 10.0.0.1:40000 seq 101 ack 501 RST, ACK len 0"])
    }

    @Test("a flow cut off: RST-ACK from the server; data first opens the stream; sequence numbers wrap")
    func cutOffAndWrap() throws {
        var s = TCPStreamSynthesizer(client: endpoint("fd00::1", 5), server: endpoint("fd00::2", 443),
                                     clientISN: 0xffff_fffe, serverISN: 7)
        let packets = s.handle(.data(.clientToServer, [0x41, 0x42, 0x43])) + s.handle(.ended(.reset(from: .serverToClient)))
        #expect(try summary(packets) == [
            "> fd00::1:5 seq 4294967294 ack 0 SYN len 0",
            "< fd00::2:443 seq 7 ack 4294967295 SYN, ACK len 0",
            "> fd00::1:5 seq 4294967295 ack 8 ACK len 0",
            "> fd00::1:5 seq 4294967295 ack 8 PSH, ACK len 3",
            "< fd00::2:443 seq 8 ack 2 ACK len 0",
            "< fd00::2:443 seq 8 ack 2 RST, ACK len 0",
        ])
        #expect(s.maximumSegmentSize == 65_515)
    }

    @Test("segments as large as an IP packet allows by default (65,495 bytes over IPv4): the plan's ranges, and handle's packets built from them")
    func largestSegments() throws {
        var planner = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80), clientISN: 10, serverISN: 20)
        #expect(planner.maximumSegmentSize == 65_495 && TCPStreamSynthesizer.largestMSS(isIPv6: true) == 65_515)
        _ = planner.opening()
        let planned = planner.carrying(.serverToClient, count: 150_000)
        #expect(planned.map(\.payload) == [0..<65_495, 65_495..<130_990, 130_990..<150_000, 0..<0])
        #expect(planned.map(\.fields.sequence) == [21, 21 + 65_495, 21 + 130_990, 11])
        #expect(planned.map(\.direction) == [.serverToClient, .serverToClient, .serverToClient, .clientToServer])
        #expect(planner.carrying(.clientToServer, count: 0) == [])
        // The same stream through `handle`: the packets are the plans built whole.
        var s = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80), clientISN: 10, serverISN: 20)
        let body = (0..<150_000).map { UInt8(truncatingIfNeeded: $0) }
        let packets = s.handle(.opened) + s.handle(.data(.serverToClient, body))
        #expect(try summary(Array(packets.dropFirst(3))) == [
            "< 10.0.0.2:80 seq 21 ack 11 ACK len 65495",
            "< 10.0.0.2:80 seq 65516 ack 11 ACK len 65495",
            "< 10.0.0.2:80 seq 131011 ack 11 PSH, ACK len 19010",
            "> 10.0.0.1:40000 seq 11 ack 150021 ACK len 0",
        ])
        #expect(packets[3].bytes.count == 65_535 && Array(packets[4].bytes[40...]) == Array(body[65_495..<130_990]))
        #expect(try tcp(packets[0]).0.options == [.maximumSegmentSize(65_495)])
    }

    @Test("an IPv4 client of an IPv6 server: both ends written as IPv6, the IPv4 one mapped")
    func mixedFamilies() throws {
        let s = TCPStreamSynthesizer(client: endpoint("127.0.0.1", 5000), server: endpoint("::1", 8443), clientISN: 1, serverISN: 2)
        #expect(s.client == endpoint("::ffff:127.0.0.1", 5000) && s.server == endpoint("::1", 8443))
    }

    @Test("tshark: every checksum good, the HTTP/1 request and response dissected, no analysis warnings")
    func tsharkReadsIt() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") else {
            Issue.record("tshark is needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        var s = TCPStreamSynthesizer(client: endpoint("10.0.0.1", 40000), server: endpoint("10.0.0.2", 80),
                                     clientISN: 123_456, serverISN: 987_654, maximumSegmentSize: 16)
        // 150,000 bytes in the IPv6 stream's default segments: 65,515 + 65,515 + the rest.
        let bigBody = Array(repeating: UInt8(ascii: "x"), count: 150_000)
        let bigResponse = Array("HTTP/1.1 200 OK\r\nContent-Length: 150000\r\n\r\n".utf8) + bigBody
        var v6 = TCPStreamSynthesizer(client: endpoint("fd00::1", 40001), server: endpoint("fd00::2", 80),
                                      clientISN: 1, serverISN: 2)
        let packets = s.handle(.opened) + s.handle(.data(.clientToServer, request)) + s.handle(.data(.serverToClient, response))
            + s.handle(.ended(.closedByClient))
            + v6.handle(.data(.clientToServer, request)) + v6.handle(.data(.serverToClient, bigResponse)) + v6.handle(.ended(.reset(from: .serverToClient)))
        let lines = try PacketDissectorTests.tshark(
            packets.map(\.bytes), fields: ["ip.checksum.status", "tcp.checksum.status", "http.request.method", "http.request.uri",
                                           "http.response.code", "http.content_length", "tcp.analysis.flags"],
            options: ["ip.check_checksum:TRUE", "tcp.check_checksum:TRUE"])
        #expect(lines.count == packets.count)
        let rows = lines.map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        // 1 = good; IPv6 has no header checksum.
        #expect(rows.allSatisfy { $0[1] == "1" })
        #expect(rows.allSatisfy { $0[0] == "1" || $0[0] == "" })
        #expect(rows.allSatisfy { $0[6] == "" }, "\(rows.map { $0[6] })")
        #expect(rows.map { $0[2] }.filter { !$0.isEmpty } == ["GET", "GET"])
        #expect(rows.map { $0[3] }.filter { !$0.isEmpty } == ["/a", "/a"])
        #expect(rows.map { $0[4] }.filter { !$0.isEmpty } == ["200", "200"])
        #expect(rows.map { $0[5] }.filter { !$0.isEmpty } == ["2", "150000"])
    }
}
