import FlowTerms
import Testing
@testable import Capture

/// The capture batch builds each packet's Enhanced Packet Block as it is offered (the writer
/// writes them as they are) and keeps TLS secrets apart, for the writer to put first (Wireshark
/// reads a TLS secret only if it comes before the Finished it keys; OpenSSL logs it after that
/// record is on the wire).
@Suite("a capture batch: blocks built as packets arrive, secrets apart, bounds counted")
struct CaptureBatchTests {
    private static func offer(_ batch: inout CaptureBatch, _ bytes: [UInt8], time: Int64, direction: Direction = .clientToServer,
                              snapLength: Int = 0, comment: String? = nil, counters: inout CaptureQueueCounters) -> Bool {
        bytes.withUnsafeBytes { raw in
            batch.add(.packet(flow: 1, direction: direction, timeMicros: time, bytes: raw, snapLength: snapLength, comment: comment),
                      refusing: false, counters: &counters).outcome
        }
    }

    @Test("a snap length that cuts the headers: the row facts come from the whole packet (a SYN stays opened, a RST cut off); a long cut reads them from the kept bytes")
    func rowFactsBeforeTheCut() {
        var batch = CaptureBatch(maximumItems: 8, maximumBytes: 1 << 16)
        var counters = CaptureQueueCounters()
        let (_, syn) = Conversation.packets[0], (_, reset) = Conversation.packets[6], (_, request) = Conversation.packets[3]
        #expect(Self.offer(&batch, syn, time: 1, snapLength: 10, counters: &counters))
        #expect(Self.offer(&batch, reset, time: 2, snapLength: 10, counters: &counters))
        #expect(Self.offer(&batch, request, time: 3, counters: &counters))
        #expect(batch.packets.map(\.summary?.meaning) == [.opened, .cutOff, nil])
        #expect(batch.packets[0].includedLength == 10)
        // Without the summary the kept 10 bytes read as data: what the trial saw.
        #expect(syn.withUnsafeBytes { PacketSummary.read(UnsafeRawBufferPointer(rebasing: $0[0..<10]), originalLength: syn.count) }.meaning == .data)
    }

    @Test("packet, packet, secret, packet: three blocks back to back, byte for byte PcapngBlocks.enhancedPacket; the secret in its own store")
    func blocksAndSecrets() {
        var counters = CaptureQueueCounters()
        var batch = CaptureBatch()
        let first: [UInt8] = [0x45, 1, 2]
        let second: [UInt8] = Array(0..<40)
        let third: [UInt8] = [9, 9, 9, 9, 9, 9]
        #expect(Self.offer(&batch, first, time: 7, counters: &counters))
        #expect(Self.offer(&batch, second, time: 8, direction: .serverToClient, snapLength: 10, counters: &counters))
        let keyLog = Array("CLIENT_TRAFFIC_SECRET_0 a b\n".utf8)
        let random = TLSClientRandom(words: (1, 2, 3, 0xffff_ffff_ffff_fffe))
        _ = batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: keyLog, clientRandoms: [random]), refusing: false, counters: &counters)
        #expect(Self.offer(&batch, third, time: 9, comment: "tv flow 1", counters: &counters))

        let expected = first.withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 7, packet: $0, originalLength: 3, direction: .outbound)
        } + second.withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 8, packet: UnsafeRawBufferPointer(rebasing: $0[0..<10]), originalLength: 40,
                                        direction: .inbound)
        } + third.withUnsafeBytes {
            PcapngBlocks.enhancedPacket(timestampMicros: 9, packet: $0, originalLength: 6, direction: .outbound, comment: "tv flow 1")
        }
        #expect(batch.blocks == expected)
        // 28 header + 3 + 1 padding + 8 flags + 4 end + 4 trailer = 48; 28 + 10 + 2 + 16 = 56.
        #expect(batch.packets.map(\.block) == [0..<48, 48..<104, 104..<expected.count])
        #expect(batch.packets.map(\.includedLength) == [3, 10, 6])
        #expect(batch.packets.map(\.originalLength) == [3, 40, 6])
        #expect(Array(batch.blocks[batch.packets[1].bytes]) == Array(0..<10))
        #expect(batch.secrets == PcapngBlocks.decryptionSecrets(secrets: keyLog))
        #expect(batch.count == 4 && batch.secretsCount == 1)
        #expect(batch.clientRandoms == [random])
        #expect(counters.packetsQueued == 3 && counters.packetsDropped == 0)

        batch.removeAll()
        #expect(batch.count == 0 && batch.blocks.isEmpty && batch.secrets.isEmpty && batch.packets.isEmpty && batch.clientRandoms.isEmpty)
    }

    @Test("the client randoms travel with their secrets: in order across blocks, none for a block without; a dropped block's stay out")
    func clientRandomsWithSecrets() {
        var counters = CaptureQueueCounters()
        var batch = CaptureBatch(maximumItems: 3, maximumBytes: 1 << 20)
        let a = TLSClientRandom(words: (0xa, 0, 0, 1)), b = TLSClientRandom(words: (0xb, 0, 0, 2)), c = TLSClientRandom(words: (0xc, 0, 0, 3))
        let line = Array("CLIENT_RANDOM x y\n".utf8)
        #expect(batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: line, clientRandoms: [a, b]), refusing: false, counters: &counters).outcome)
        #expect(batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: line, clientRandoms: []), refusing: false, counters: &counters).outcome)
        #expect(batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: line, clientRandoms: [c]), refusing: false, counters: &counters).outcome)
        #expect(batch.clientRandoms == [a, b, c])
        // A fourth item is over `maximumItems`: dropped, its random with it.
        #expect(!batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: line, clientRandoms: [a]), refusing: false, counters: &counters).outcome)
        #expect(batch.clientRandoms == [a, b, c] && batch.secretsCount == 3 && counters.secretsDropped == 1)
    }

    @Test("a batch copied as a value keeps its own blocks: adding to or emptying the copy leaves the original as it was")
    func copiedBatch() {
        var counters = CaptureQueueCounters()
        var batch = CaptureBatch()
        #expect(Self.offer(&batch, [0x45, 1, 2], time: 1, counters: &counters))
        let before = batch.blocks
        #expect(before.count == 48)
        var copy = batch
        // 28 header + 2 + 2 padding + 8 flags + 4 end + 4 trailer = 48.
        #expect(Self.offer(&copy, [0x45, 3], time: 2, counters: &counters))
        #expect(batch.blocks == before && batch.packets.count == 1 && batch.blockBytes == 48)
        #expect(copy.blockBytes == 96 && Array(copy.blocks.prefix(48)) == before && copy.packets.map(\.block) == [0..<48, 48..<96])
        copy.removeAll()
        #expect(batch.blocks == before && copy.blockBytes == 0)
    }

    @Test("a first block placed past the store's start: blocks from there, the room before it not counted; kept while packets are held")
    func placedFirstBlock() {
        var counters = CaptureQueueCounters()
        var batch = CaptureBatch(maximumItems: 10, maximumBytes: 300)
        batch.placeFirstBlock(at: 100)
        #expect(batch.firstBlockOffset == 100 && batch.blockBytes == 0 && batch.storeMemory == nil)
        let packet = [UInt8](repeating: 0x45, count: 100)
        #expect(Self.offer(&batch, packet, time: 1, counters: &counters))
        #expect(Self.offer(&batch, packet, time: 2, counters: &counters))
        // The room in front counts against nothing: still two 144-byte blocks in 300 bytes.
        #expect(!Self.offer(&batch, packet, time: 3, counters: &counters))
        #expect(batch.packets.map(\.block) == [100..<244, 244..<388])
        #expect(batch.blockBytes == 288 && batch.storeMemory?.count == 388)
        let one = packet.withUnsafeBytes { PcapngBlocks.enhancedPacket(timestampMicros: 1, packet: $0, originalLength: 100, direction: .outbound) }
        #expect(Array(batch.blocks.prefix(144)) == one && batch.blocks.count == 288)
        #expect(batch.withBlocks { Array($0[batch.packets[0].bytes]) } == packet)
        batch.placeFirstBlock(at: 7)
        #expect(batch.firstBlockOffset == 100, "a batch holding packets keeps its offset")
        batch.removeAll()
        batch.placeFirstBlock(at: 7)
        #expect(Self.offer(&batch, packet, time: 4, counters: &counters))
        #expect(batch.packets.map(\.block) == [7..<151])
        batch.removeAll()
        batch.placeFirstBlock(at: CaptureBatch.maximumFirstBlockOffset)
        #expect(batch.firstBlockOffset == 0, "past the room kept: from the start")
    }

    @Test("full (items or bytes) or stopping: the packet is dropped and counted, nothing of it kept")
    func bounds() {
        var counters = CaptureQueueCounters()
        // One 100-byte packet's block is 28 + 100 + 12 + 4 = 144 bytes.
        var batch = CaptureBatch(maximumItems: 10, maximumBytes: 300)
        let packet = [UInt8](repeating: 0x45, count: 100)
        #expect(Self.offer(&batch, packet, time: 1, counters: &counters))
        #expect(Self.offer(&batch, packet, time: 2, counters: &counters))
        #expect(!Self.offer(&batch, packet, time: 3, counters: &counters))
        #expect(batch.blocks.count == 288 && batch.packets.count == 2)
        let refused = packet.withUnsafeBytes {
            batch.add(.packet(flow: 1, direction: .clientToServer, timeMicros: 4, bytes: $0, snapLength: 0, comment: nil),
                      refusing: true, counters: &counters)
        }
        #expect(refused.added == 0 && !refused.outcome)
        var few = CaptureBatch(maximumItems: 1, maximumBytes: 1 << 20)
        #expect(Self.offer(&few, [1], time: 1, counters: &counters))
        #expect(!Self.offer(&few, [1], time: 2, counters: &counters))
        #expect(counters.packetsQueued == 3 && counters.packetsDropped == 3)
    }
}
