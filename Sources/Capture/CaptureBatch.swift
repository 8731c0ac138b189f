import FlowStore
import FlowTerms

/// One packet waiting for the capture writer. Its Enhanced Packet Block is already built, whole,
/// in `CaptureBatch.blocks[block]`; the captured bytes (cut to the snap length) start
/// `PcapngBlocks.enhancedPacketHeaderSize` bytes into it.
public struct QueuedPacket: Sendable, Equatable {
    public var flow: UInt64
    public var direction: Direction
    public var timeMicros: Int64
    /// The packet's length on the wire.
    public var originalLength: Int
    /// Bytes kept (at most the snap length).
    public var includedLength: Int
    /// Where its block is in `CaptureBatch.blocks`.
    public var block: Range<Int>

    /// Where the captured bytes are in `CaptureBatch.blocks`.
    public var bytes: Range<Int> {
        block.lowerBound + PcapngBlocks.enhancedPacketHeaderSize..<block.lowerBound + PcapngBlocks.enhancedPacketHeaderSize + includedLength
    }
}

/// What a producer hands the capture queue.
public enum CaptureOffer {
    /// A packet (`bytes` valid during the call only), the snap length to cut it to, and an
    /// optional comment for its block (opt_comment).
    case packet(flow: UInt64, direction: Direction, timeMicros: Int64, bytes: UnsafeRawBufferPointer, snapLength: Int, comment: String?)
    /// Secrets of `type` (`PcapngBlocks.tlsKeyLogSecrets`: SSLKEYLOGFILE lines).
    case secrets(type: UInt32, bytes: [UInt8])
}

/// The capture queue's counters (under its mutex).
public struct CaptureQueueCounters: Sendable, Equatable {
    /// Packets taken into a batch.
    public var packetsQueued: UInt64 = 0
    /// Packets dropped because the batch was full or the queue was stopping (never waited for).
    public var packetsDropped: UInt64 = 0
    /// Secrets dropped the same way.
    public var secretsDropped: UInt64 = 0

    public init() {}
}

/// The capture queue's batch, already in the file's format: each packet's Enhanced Packet Block
/// is built as it is offered, straight from the producer's buffer (the one copy of its bytes),
/// so the writer writes `secrets` and then a run of `blocks` as they are (one writev(2), no
/// encoding pass). Bounded in items and bytes (a full batch drops and counts; the data path
/// never waits); no allocation per packet once the stores have grown to their working size.
///
/// TLS secrets go to their own store, `secrets` (whole Decryption Secrets Blocks), which the
/// writer puts before the batch's packets. OpenSSL logs a TLS 1.3 leg's traffic secrets only
/// after the record they follow is already on the socket (the server's Finished is written,
/// then the application secrets are derived), so the TUN engine often queues that packet, and
/// the client's next one, a few µs before the secret that decrypts what follows. Wireshark
/// derives a connection's keys when it reads the Finished and never looks back; a secret in the
/// file after it is ignored. Both arrive within one batch (the writer lingers 50 ms after a
/// wake-up), and a secret earlier in the file than needed costs nothing.
public struct CaptureBatch: WriterBatch {
    public typealias Offer = CaptureOffer
    public typealias Outcome = Bool
    public typealias Counters = CaptureQueueCounters

    /// The packets, in the order offered; their blocks follow one another in `blocks`.
    public private(set) var packets: [QueuedPacket] = []
    /// The packets' Enhanced Packet Blocks, back to back.
    public private(set) var blocks: [UInt8] = []
    /// Decryption Secrets Blocks, back to back, in the order offered.
    public private(set) var secrets: [UInt8] = []
    /// How many blocks `secrets` holds.
    public private(set) var secretsCount = 0
    /// Bounds: items (packets and secrets) and bytes (both stores) in one batch.
    public let maximumItems: Int
    public let maximumBytes: Int

    public init(maximumItems: Int = 16_384, maximumBytes: Int = 16 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    public var count: Int { packets.count + secretsCount }
    public var isWorthWritingNow: Bool { count * 2 >= maximumItems || (blocks.count + secrets.count) * 2 >= maximumBytes }

    public mutating func add(_ offer: CaptureOffer, refusing: Bool, counters: inout CaptureQueueCounters) -> (added: Int, outcome: Bool) {
        switch offer {
        case let .packet(flow, direction, time, packet, snapLength, comment):
            let kept = snapLength > 0 ? min(packet.count, snapLength) : packet.count
            let commentBytes = comment.map(PcapngBlocks.commentBytes)
            let flag: PcapngBlocks.FlagDirection = direction == .clientToServer ? .outbound : .inbound
            let length = PcapngBlocks.enhancedPacketLength(capturedLength: kept, direction: flag, commentLength: commentBytes?.count)
            guard !refusing, count < maximumItems, blocks.count + secrets.count + length <= maximumBytes else {
                counters.packetsDropped &+= 1
                return (0, false)
            }
            let start = blocks.count
            PcapngBlocks.appendEnhancedPacket(to: &blocks, timestampMicros: time, capturedLength: kept, originalLength: packet.count,
                                              direction: flag, comment: commentBytes) {
                $0.append(contentsOf: UnsafeRawBufferPointer(rebasing: packet[0..<kept]))
            }
            packets.append(QueuedPacket(flow: flow, direction: direction, timeMicros: time, originalLength: packet.count,
                                          includedLength: kept, block: start..<blocks.count))
            counters.packetsQueued &+= 1
            return (1, true)
        case let .secrets(type, keyLog):
            let block = PcapngBlocks.decryptionSecrets(secretsType: type, secrets: keyLog)
            guard !refusing, count < maximumItems, blocks.count + secrets.count + block.count <= maximumBytes else {
                counters.secretsDropped &+= 1
                return (0, false)
            }
            secrets.append(contentsOf: block)
            secretsCount += 1
            return (1, true)
        }
    }

    public mutating func removeAll() {
        packets.removeAll(keepingCapacity: true)
        blocks.removeAll(keepingCapacity: true)
        secrets.removeAll(keepingCapacity: true)
        secretsCount = 0
    }
}
