import Capture
import FlowTerms
import Foundation
import Testing
import Wire
@testable import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture laid out in the file's format by the loop (`DecryptedCaptureBatch`,
/// `DecryptedCaptureLayout`) and finished by the writer (`DecryptedCaptureThread`): the file is
/// byte for byte the blocks of the synthesizer's whole packets (`TCPStreamSynthesizer.handle`),
/// and the headers-only segment builder it uses.
@Suite("DecryptedCaptureLayout: the loop lays the file out, the writer fills headers; the file equals the synthesizer's packets")
struct DecryptedCaptureLayoutTests {
    enum Event {
        case began(UInt64, PacketEndpoint, PacketEndpoint, Int64)
        case data(UInt64, Direction, Int64, [UInt8])
        case ended(UInt64, StreamEnd, Int64)
    }

    /// The expected file: the head, then per event the blocks of `handle`'s packets, chunks of
    /// one flow and direction that follow one another joined up to the MSS (first one's time).
    func model(_ events: [Event], batchStarts: Set<Int>) -> [UInt8] {
        var out = DecryptedCapture.heads
        var streams: [UInt64: (TCPStreamSynthesizer, Int64)] = [:]
        var joined: (flow: UInt64, direction: Direction, time: Int64, bytes: [UInt8])?
        func emit(_ packets: [TCPStreamSynthesizer.Packet], at micros: Int64, comment: String? = nil) {
            for (index, packet) in packets.enumerated() {
                packet.bytes.withUnsafeBytes {
                    out += PcapngBlocks.enhancedPacket(timestampMicros: micros, packet: $0, originalLength: packet.bytes.count,
                                                       comment: index == 0 ? comment : nil)
                }
            }
        }
        func close() {
            guard let j = joined, var stream = streams[j.flow] else { joined = nil; return }
            emit(stream.0.handle(.data(j.direction, j.bytes)), at: stream.1 + j.time)
            streams[j.flow] = stream
            joined = nil
        }
        for (index, event) in events.enumerated() {
            if batchStarts.contains(index) { close() }
            switch event {
            case let .began(flow, client, server, start):
                close()
                guard streams[flow] == nil else { continue }
                let isn = UInt32(truncatingIfNeeded: flow &* 0x9E37_79B1)
                var synthesizer = TCPStreamSynthesizer(client: client, server: server, clientISN: isn, serverISN: ~isn)
                emit(synthesizer.handle(.opened), at: start, comment: DecryptedCaptureThread.streamComment(flow: flow))
                streams[flow] = (synthesizer, start)
            case let .data(flow, direction, time, bytes):
                guard let stream = streams[flow] else { close(); continue }
                if let j = joined, j.flow == flow, j.direction == direction,
                   j.bytes.count + bytes.count <= stream.0.maximumSegmentSize {
                    joined!.bytes += bytes
                } else if bytes.isEmpty {
                    if let j = joined, j.flow == flow, j.direction == direction { continue }
                    close()
                } else {
                    close()
                    joined = (flow, direction, time, bytes)
                }
            case let .ended(flow, end, time):
                close()
                guard var stream = streams.removeValue(forKey: flow) else { continue }
                emit(stream.0.handle(.ended(end)), at: time)
            }
        }
        close()
        return out
    }

    static let v4Client = PacketEndpoint(PacketAddress("192.0.2.1")!, 50_000)
    static let v4Server = PacketEndpoint(PacketAddress("198.51.100.7")!, 443)
    static let v6Server = PacketEndpoint(PacketAddress("2001:db8::2")!, 8443)

    /// Two flows (IPv4, IPv4 → IPv6) interleaved: joined and unjoinable chunks, odd lengths, one
    /// over the MSS, empty chunks, a flow never begun, one begun twice, an end in order and a cut.
    static func events() -> [Event] {
        func bytes(_ count: Int, _ seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ seed) } }
        let start: Int64 = 1_764_620_000_000_000
        return [
            .began(7, v4Client, v4Server, start),
            .data(7, .clientToServer, 10, bytes(37, 1)),
            .data(7, .clientToServer, 11, bytes(4_001, 2)),
            .data(7, .clientToServer, 12, []),
            .data(7, .clientToServer, 13, bytes(3, 3)),
            .began(8, v4Client, v6Server, start + 5),
            .began(7, v4Client, v4Server, start + 6),
            .data(7, .serverToClient, 20, bytes(16_384, 4)),
            .data(8, .clientToServer, 21, bytes(999, 5)),
            .data(7, .serverToClient, 22, bytes(16_383, 6)),
            .data(9, .serverToClient, 23, bytes(5, 7)),
            .data(7, .serverToClient, 24, bytes(70_001, 8)),
            .data(7, .serverToClient, 25, bytes(1, 9)),
            .data(8, .serverToClient, 26, []),
            .data(8, .serverToClient, 27, bytes(65_000, 10)),
            .data(8, .serverToClient, 28, bytes(515, 11)),
            .data(8, .serverToClient, 29, bytes(21, 12)),
            .ended(7, .closed(firstFrom: .serverToClient), start + 1_000),
            .data(7, .serverToClient, 30, bytes(10, 13)),
            .ended(8, .reset(from: .clientToServer), start + 2_000),
            .ended(8, .closedByClient, start + 3_000),
        ]
    }

    func offer(_ event: Event, to batch: inout DecryptedCaptureBatch, counters: inout DecryptedCaptureCounters) {
        switch event {
        case let .began(flow, client, server, start):
            _ = batch.add(.began(flow: flow, client: client, server: server, startMicros: start,
                                 layout: DecryptedCaptureLayout(flow: flow, client: client, server: server)),
                          refusing: false, counters: &counters)
        case let .data(flow, direction, time, bytes):
            _ = bytes.withUnsafeBytes {
                batch.add(.data(flow: flow, direction: direction, timeMicros: time, bytes: $0), refusing: false, counters: &counters)
            }
        case let .ended(flow, end, time):
            _ = batch.add(.ended(flow: flow, end: end, timeMicros: time), refusing: false, counters: &counters)
        }
    }

    @Test("the file is the synthesizer's packets byte for byte: one batch or cut into several (the flows follow), O_DIRECT or buffered",
          arguments: [(true, [0]), (true, [0, 3, 8, 12, 18]), (true, Array(0..<21)), (false, [0, 5, 11])])
    func fileEqualsModel(direct: Bool, starts: [Int]) throws {
        let dir = NSTemporaryDirectory() + "tv-dlayout-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/d.pcapng"
        var configuration = DecryptedCaptureConfiguration(firstPath: path)
        configuration.directWrites = direct
        configuration.directBufferBytes = 16_384
        let writer = DecryptedCaptureThread(configuration: configuration, hooks: DecryptedCaptureHooks(update: { _ in }, health: { _, counters in
            Issue.record("write failed: \(counters.lastFailure?.message ?? "?")")
        }))
        let events = Self.events()
        var counters = DecryptedCaptureCounters()
        var batch = DecryptedCaptureBatch()
        var spare = DecryptedCaptureBatch()
        for (index, event) in events.enumerated() {
            if index > 0, starts.contains(index) {
                swap(&batch, &spare)
                writer.prepare(&batch, following: spare)
                #expect(writer.write(spare) == 0)
                spare.removeAll()
            }
            offer(event, to: &batch, counters: &counters)
        }
        #expect(writer.write(batch) == 0)
        writer.stop()
        #expect(counters.bytesDropped == 0 && counters.eventsDropped == 0)
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let expected = model(events, batchStarts: Set(starts))
        #expect(file.count == expected.count)
        let difference = (0..<min(file.count, expected.count)).first { file[$0] != expected[$0] }
        #expect(difference == nil, "first difference at \(difference ?? -1) of \(expected.count)")
    }

    @Test("layout sizes: IPv4 and IPv6 headers, data blocks over the MSS, byte offsets")
    func sizes() {
        let v4 = DecryptedCaptureLayout(flow: 7, client: Self.v4Client, server: Self.v4Server)
        let v6 = DecryptedCaptureLayout(flow: 7, client: Self.v4Client, server: Self.v6Server)
        #expect(v4.headerBytes == 40 && v6.headerBytes == 60)
        #expect(v4.maximumSegmentSize == 65_495 && v6.maximumSegmentSize == 65_515)
        #expect(v4.payloadOffset == 68 && v6.payloadOffset == 88)
        // "tv flow 7" is 9 bytes: option 4 + 9 + 3 padding, opt_endofopt 4.
        #expect(v4.openingBytes == (28 + 44 + 4) + 20 + (28 + 44 + 4) + (28 + 40 + 4))
        #expect(v4.finishingBytes == 3 * 72 && v4.resetBytes == 72 && v6.resetBytes == 92)
        #expect(v4.segmentBytes(0) == 72 && v4.segmentBytes(1) == 76 && v4.segmentBytes(4) == 76)
        #expect(v4.dataBytes(0) == 0 && v4.dataBytes(5) == 80 + 72)
        #expect(v4.dataBytes(65_496) == v4.segmentBytes(65_495) + v4.segmentBytes(1) + 72)
        #expect(v4.dataOffset(ofByte: 0) == 68 && v4.dataOffset(ofByte: 65_495) == v4.segmentBytes(65_495) + 68)
    }

    /// RFC 1071 §1 (3): the receiver's check, the sum over the pseudo-header and the whole
    /// segment (its checksum field included) is all ones.
    func receiverSum(_ packet: [UInt8], v6: Bool) -> UInt32 {
        let ipLength = v6 ? 40 : 20
        let source = PacketAddress(bytes: Array(packet[(v6 ? 8 : 12)..<(v6 ? 24 : 16)]))!
        let destination = PacketAddress(bytes: Array(packet[(v6 ? 24 : 16)..<(v6 ? 40 : 20)]))!
        let segment = Array(packet[ipLength...])
        let pseudo = InternetChecksum.pseudoHeaderSum(source: source, destination: destination, protocolNumber: IPProtocolNumber.tcp,
                                                      length: segment.count)
        return InternetChecksum.sum(segment, initial: pseudo)
    }

    @Test("appendHeaders then the payload is the whole packet; the checksum covers the payload (odd lengths, the MSS option, IPv4 and IPv6)",
          arguments: [("192.0.2.1", "198.51.100.7"), ("2001:db8::1", "2001:db8::2")])
    func headersThenPayload(addresses: (String, String)) throws {
        let v6 = addresses.0.contains(":")
        for (payload, mss) in [([UInt8](), UInt16?(1_460)), (Array("hello".utf8), nil), (Array("GET / HTTP/1.1\r\n\r\n".utf8), nil),
                               ((0..<65_495).map { UInt8(truncatingIfNeeded: $0 &* 31) }, nil)] {
            let fields = TCPSegmentBuilder.Segment(
                source: PacketEndpoint(PacketAddress(addresses.0)!, 50_000), destination: PacketEndpoint(PacketAddress(addresses.1)!, 443),
                sequence: 0xDEAD_BEEF, acknowledgment: 0x0102_0304, flags: TCPFlags.ack | TCPFlags.psh, window: 65_535,
                identification: 7, maximumSegmentSize: mss)
            var out: [UInt8] = [0xEE]  // what a block header before it would be
            payload.withUnsafeBytes { TCPSegmentBuilder.appendHeaders(fields, payload: $0, to: &out) }
            let headerLength = (v6 ? 40 : 20) + (mss == nil ? 20 : 24)
            #expect(out.count == 1 + headerLength)
            let packet = Array(out.dropFirst()) + payload
            #expect(packet.count == TCPSegmentBuilder.length(fields, payloadCount: payload.count))
            #expect(receiverSum(packet, v6: v6) == 0xFFFF, "\(payload.count) bytes")
            // The dissector reads the same segment back.
            let dissected = try PacketDissector.dissect(packet).get()
            guard case .tcp(let tcp)? = dissected.transport else { Issue.record("not TCP"); continue }
            #expect(tcp.sequenceNumber == 0xDEAD_BEEF && tcp.acknowledgmentNumber == 0x0102_0304 && tcp.payloadLength == payload.count)
        }
    }
}
