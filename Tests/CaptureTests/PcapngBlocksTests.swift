import Wire
import Capture
import Testing

/// The blocks byte for byte against draft-ietf-opsawg-pcapng (§3.1 block layout, §3.5 options,
/// §4.1 SHB, §4.2 IDB, §4.3 EPB, §4.7 DSB), little-endian.
@Suite("pcapng blocks, exact bytes")
struct PcapngBlocksTests {
    @Test("Section Header Block: 28 bytes, magic 1A2B3C4D, version 1.0, section length -1, no options")
    func sectionHeader() {
        #expect(PcapngBlocks.sectionHeader() == [
            0x0A, 0x0D, 0x0D, 0x0A, 0x1C, 0x00, 0x00, 0x00,
            0x4D, 0x3C, 0x2B, 0x1A, 0x01, 0x00, 0x00, 0x00,
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0x1C, 0x00, 0x00, 0x00,
        ])
    }

    @Test("Interface Description Block: LINKTYPE_RAW (101), snaplen, if_tsresol 6 (µs), opt_endofopt")
    func interfaceDescription() {
        #expect(PcapngBlocks.interfaceDescription(snapLength: 65_535) == [
            0x01, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
            0x65, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x00,
            0x09, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x20, 0x00, 0x00, 0x00,
        ])
    }

    @Test("shb_userappl (code 4), if_name (2) and if_description (3): UTF-8, padded to 32 bits, before opt_endofopt")
    func namedBlocks() {
        #expect(PcapngBlocks.sectionHeader(application: "tv") == [
            0x0A, 0x0D, 0x0D, 0x0A, 0x28, 0x00, 0x00, 0x00,
            0x4D, 0x3C, 0x2B, 0x1A, 0x01, 0x00, 0x00, 0x00,
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0x04, 0x00, 0x02, 0x00, 0x74, 0x76, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x28, 0x00, 0x00, 0x00,
        ])
        #expect(PcapngBlocks.interfaceDescription(snapLength: 0, name: "tv0", description: "TUN") == [
            0x01, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00,
            0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x09, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00,
            0x02, 0x00, 0x03, 0x00, 0x74, 0x76, 0x30, 0x00,
            0x03, 0x00, 0x03, 0x00, 0x54, 0x55, 0x4E, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x30, 0x00, 0x00, 0x00,
        ])
    }

    @Test("Enhanced Packet Block: timestamp split high/low, lengths, data padded to 32 bits, epb_flags outbound")
    func enhancedPacket() {
        // 2^32 + 5 µs: high word 1, low word 5.
        let block = [UInt8]([0x45, 0xAA, 0xBB]).withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 4_294_967_301, packet: $0, originalLength: 60, direction: .outbound)
        }
        #expect(block == [
            0x06, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
            0x03, 0x00, 0x00, 0x00, 0x3C, 0x00, 0x00, 0x00,
            0x45, 0xAA, 0xBB, 0x00,
            0x02, 0x00, 0x04, 0x00, 0x02, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x30, 0x00, 0x00, 0x00,
        ])
    }

    @Test("Enhanced Packet Block with opt_comment and without flags; no options means no opt_endofopt")
    func enhancedPacketComment() {
        let plain = [UInt8]([1, 2, 3, 4]).withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 0, packet: $0, originalLength: 4)
        }
        #expect(plain.count == 36)
        #expect(Array(plain[28..<36]) == [1, 2, 3, 4, 0x24, 0, 0, 0])
        let commented = [UInt8]([1, 2, 3, 4]).withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 0, packet: $0, originalLength: 4, comment: "flow 7")
        }
        #expect(commented.count == 52)
        #expect(Array(commented[32..<48]) == [0x01, 0x00, 0x06, 0x00, 0x66, 0x6C, 0x6F, 0x77, 0x20, 0x37, 0x00, 0x00, 0, 0, 0, 0])
    }

    @Test("Decryption Secrets Block: type 0x0000000A, secrets type TLSK, length, data padded")
    func decryptionSecrets() {
        let block = PcapngBlocks.decryptionSecrets(secrets: Array("ab\n".utf8))
        #expect(block == [
            0x0A, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
            0x4B, 0x53, 0x4C, 0x54, 0x03, 0x00, 0x00, 0x00,
            0x61, 0x62, 0x0A, 0x00,
            0x18, 0x00, 0x00, 0x00,
        ])
    }
}

@Suite("What a packet meant")
struct PacketMeaningTests {
    @Test("Each flag combination's meaning; RST outranks SYN, FIN, ACK and data")
    func classify() {
        let f = TCPFlags.self
        #expect(PacketMeaning.classify(tcpFlags: f.syn, payloadLength: 0) == .opened)
        #expect(PacketMeaning.classify(tcpFlags: f.syn | f.ack, payloadLength: 0) == .accepted)
        #expect(PacketMeaning.classify(tcpFlags: f.ack, payloadLength: 0) == .deliveryConfirmed)
        #expect(PacketMeaning.classify(tcpFlags: f.ack | f.psh, payloadLength: 517) == .data)
        #expect(PacketMeaning.classify(tcpFlags: f.fin | f.ack, payloadLength: 0) == .finishedSending)
        #expect(PacketMeaning.classify(tcpFlags: f.fin | f.ack | f.psh, payloadLength: 20) == .finishedSending)
        #expect(PacketMeaning.classify(tcpFlags: f.rst, payloadLength: 0) == .cutOff)
        #expect(PacketMeaning.classify(tcpFlags: f.rst | f.ack, payloadLength: 0) == .cutOff)
        #expect(PacketMeaning.classify(tcpFlags: f.rst | f.syn | f.fin | f.ack | f.psh, payloadLength: 9) == .cutOff)
        #expect(PacketMeaning.classify(tcpFlags: nil, payloadLength: 0) == .data)
        #expect(PacketMeaning.classify(tcpFlags: nil, payloadLength: 40) == .data)
    }

    @Test("Words first, acronyms in Wireshark's order")
    func words() {
        #expect(PacketMeaning.allCases.map(\.words) == ["opened", "accepted", "data", "delivery confirmed", "finished sending", "cut off", "too big for the path"])
        #expect(TCPFlags.acronyms(TCPFlags.syn | TCPFlags.ack) == "SYN, ACK")
        #expect(TCPFlags.acronyms(TCPFlags.rst | TCPFlags.ack) == "RST, ACK")
        #expect(TCPFlags.acronyms(0xFF) == "FIN, SYN, RST, PSH, ACK, URG, ECE, CWR")
        #expect(TCPFlags.acronyms(0) == "")
    }
}
