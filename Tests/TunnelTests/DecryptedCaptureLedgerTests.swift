import Testing
@testable import Tunnel

/// Where a decrypted capture file ends whole on disk, and what a close without its tail loses
/// (`DecryptedCaptureLedger`), with exact offsets and counts.
@Suite("DecryptedCaptureLedger: the last whole block on disk, and what lies past it")
struct DecryptedCaptureLedgerTests {
    @Test("runs settle as the disk takes them; a close cuts back to the last whole one and counts the rest, each flow once")
    func settleAndUnwritten() {
        var ledger = DecryptedCaptureLedger()
        ledger.appended(.init(end: 256, packets: 0, bytes: 0, flow: nil))        // the head
        ledger.appended(.init(end: 484, packets: 3, bytes: 0, flow: 7))          // a handshake
        ledger.appended(.init(end: 4_200, packets: 2, bytes: 3_600, flow: 7))    // data and its ACK
        ledger.appended(.init(end: 4_400, packets: 2, bytes: 100, flow: 8))
        ledger.appended(.init(end: 9_000, packets: 4, bytes: 4_000, flow: 7))
        #expect(ledger.wholeOnDisk == 0 && ledger.pending.count == 5)
        // O_DIRECT wrote two disk blocks: 8192 bytes, mid-way through the last run.
        ledger.settle(written: 8_192)
        #expect(ledger.wholeOnDisk == 4_400)
        #expect(ledger.pending == [.init(end: 9_000, packets: 4, bytes: 4_000, flow: 7)])
        #expect(ledger.unwritten.packets == 4 && ledger.unwritten.bytes == 4_000 && ledger.unwritten.flows == [7])
        // Less than before changes nothing.
        ledger.settle(written: 100)
        #expect(ledger.wholeOnDisk == 4_400)
        ledger.appended(.init(end: 9_500, packets: 1, bytes: 20, flow: 9))
        ledger.appended(.init(end: 9_800, packets: 1, bytes: 20, flow: 7))
        #expect(ledger.unwritten.packets == 6 && ledger.unwritten.bytes == 4_040 && ledger.unwritten.flows == [7, 9])
        // The tail written: everything is whole.
        ledger.settle(written: 9_800)
        #expect(ledger.wholeOnDisk == 9_800 && ledger.pending.isEmpty)
        #expect(ledger.unwritten.packets == 0 && ledger.unwritten.flows.isEmpty)
    }
}
