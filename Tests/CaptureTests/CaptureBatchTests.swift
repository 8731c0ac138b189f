import FlowTerms
import Testing
@testable import Capture

/// The order in which a batch reaches the file: secrets first (Wireshark reads a TLS secret only
/// if it comes before the Finished it keys; OpenSSL logs it after that record is on the wire).
@Suite("a capture batch puts its TLS secrets before its packets")
struct CaptureBatchTests {
    private static func packet(_ batch: inout CaptureBatch, _ byte: UInt8, counters: inout CaptureQueueCounters) {
        let bytes: [UInt8] = [byte, byte]
        bytes.withUnsafeBytes { raw in
            _ = batch.add(.packet(flow: 1, direction: .clientToServer, timeMicros: Int64(byte), bytes: raw, snapLength: 0, comment: nil),
                          refusing: false, counters: &counters)
        }
    }

    private static func order(_ batch: CaptureBatch) -> [String] {
        batch.items.map { item in
            switch item {
            case let .packet(_, _, time, _, range, _): return "p\(time)@\(range.lowerBound)"
            case let .secrets(_, range): return "s@\(range.lowerBound)"
            }
        }
    }

    @Test("packet, packet, secret, packet → secret, then the packets in their order (bytes untouched)")
    func secretsMove() {
        var counters = CaptureQueueCounters()
        var batch = CaptureBatch()
        Self.packet(&batch, 1, counters: &counters)
        Self.packet(&batch, 2, counters: &counters)
        _ = batch.add(.secrets(type: PcapngBlocks.tlsKeyLogSecrets, bytes: Array("CLIENT_TRAFFIC_SECRET_0 a b\n".utf8)),
                      refusing: false, counters: &counters)
        Self.packet(&batch, 3, counters: &counters)
        #expect(Self.order(batch) == ["p1@0", "p2@2", "s@4", "p3@32"])
        let moved = batch.moveSecretsFirst()
        #expect(moved)
        #expect(Self.order(batch) == ["s@4", "p1@0", "p2@2", "p3@32"])
        // Already in order: nothing moves.
        let again = batch.moveSecretsFirst()
        #expect(!again)
        var plain = CaptureBatch()
        Self.packet(&plain, 7, counters: &counters)
        let plainMoved = plain.moveSecretsFirst()
        #expect(!plainMoved)
        #expect(Self.order(plain) == ["p7@0"])
    }
}
