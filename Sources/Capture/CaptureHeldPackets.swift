/// The packets the capture writer holds back (`CaptureHoldPolicy`): per waiting flow, copies of
/// their Enhanced Packet Blocks back to back and the packets (`QueuedPacket.block` counts from
/// the start of the flow's copy), in the order offered. Owned by the writer thread; its memory is
/// bounded by the policy's limits.
struct CaptureHeldPackets {
    /// One flow's held packets.
    struct Flow {
        var blocks: [UInt8] = []
        var packets: [QueuedPacket] = []
    }

    private(set) var flows: [UInt64: Flow] = [:]
    /// Packets held in all.
    private(set) var packets = 0

    /// Copies `packet`, its block `block` (the batch's bytes at `packet.block`), behind `flow`'s.
    mutating func hold(_ packet: QueuedPacket, block: UnsafeRawBufferPointer) {
        var copy = packet
        let start = flows[packet.flow]?.blocks.count ?? 0
        copy.block = start..<start + block.count
        flows[packet.flow, default: Flow()].blocks.append(contentsOf: block)
        flows[packet.flow, default: Flow()].packets.append(copy)
        packets += 1
    }

    /// Takes `flow`'s held packets out (nil: none).
    mutating func take(_ flow: UInt64) -> Flow? {
        guard let flow = flows.removeValue(forKey: flow) else { return nil }
        packets -= flow.packets.count
        return flow
    }

    /// Bytes held in all.
    var bytes: Int { flows.values.reduce(0) { $0 + $1.blocks.count } }
}
