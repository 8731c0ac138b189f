import FlowStore
import FlowTerms

/// One packet waiting for the capture writer. Its Enhanced Packet Block is already built, whole,
/// in the batch's blocks (`CaptureBatch.withBlocks`) at `block`; the captured bytes (cut to the snap length) start
/// `PcapngBlocks.enhancedPacketHeaderSize` bytes into it.
public struct QueuedPacket: Sendable, Equatable {
    public var flow: UInt64
    public var direction: Direction
    public var timeMicros: Int64
    /// The packet's length on the wire.
    public var originalLength: Int
    /// Bytes kept (at most the snap length).
    public var includedLength: Int
    /// Where its block is in the batch's store (`CaptureBatch.withBlocks`, from the store's start).
    public var block: Range<Int>
    /// The packet's row facts read from the whole packet before the snap length cut it, when
    /// the cut may have taken its headers (`CaptureBatch.headerReach`); nil: read them from the
    /// kept bytes. (With `capture.snaplen 10` every SYN was listed as data: a new-user trial.)
    public var summary: PacketSummary? = nil

    /// Where the captured bytes are in the batch's store.
    public var bytes: Range<Int> {
        block.lowerBound + PcapngBlocks.enhancedPacketHeaderSize..<block.lowerBound + PcapngBlocks.enhancedPacketHeaderSize + includedLength
    }
}

/// What a producer hands the capture queue.
public enum CaptureOffer {
    /// A packet (`bytes` valid during the call only), the snap length to cut it to, and an
    /// optional comment for its block (opt_comment).
    case packet(flow: UInt64, direction: Direction, timeMicros: Int64, bytes: UnsafeRawBufferPointer, snapLength: Int, comment: String?)
    /// Secrets of `type` (`PcapngBlocks.tlsKeyLogSecrets`: SSLKEYLOGFILE lines), with the client
    /// randoms of the client-Finished secrets among them (`TLSClientRandom.clientFinishedSecrets`),
    /// read by the producer so the writer never parses its blocks back.
    case secrets(type: UInt32, bytes: [UInt8], clientRandoms: [TLSClientRandom])
    /// The connection with this client random logs no client secret (passed through): no block,
    /// only the end of its wait, as a written secret ends it.
    case noSecretWillCome(TLSClientRandom)
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

    /// The packets, in the order offered; their blocks follow one another in the block store.
    public private(set) var packets: [QueuedPacket] = []
    /// The packets' Enhanced Packet Blocks, back to back (`withBlocks`): made at the first
    /// packet, `maximumBytes` of `CaptureMemory`, and kept from batch to batch.
    private var store: CaptureBlockStore?
    /// Decryption Secrets Blocks, back to back, in the order offered.
    public private(set) var secrets: [UInt8] = []
    /// How many blocks `secrets` holds.
    public private(set) var secretsCount = 0
    /// The client randoms of the client-Finished secrets in `secrets` (`CaptureOffer.secrets`),
    /// in order: the flows whose wait for their secret this batch ends (`CaptureHoldPolicy`).
    public private(set) var clientRandoms: [TLSClientRandom] = []
    /// Bounds: items (packets and secrets) and bytes (both stores) in one batch.
    public let maximumItems: Int
    public let maximumBytes: Int
    /// Where the first packet's block starts in the store (`withBlocks`; 0 ≤ it <
    /// `maximumFirstBlockOffset`): the capture writer sets it on the empty batch to the file's
    /// end modulo its direct write unit as it expects it when this batch is written
    /// (`CaptureWriterThread.prepare`), so that the store's start is a block boundary of the file
    /// and the blocks are written with O_DIRECT from the store itself, the held tail put in front
    /// of them (`CaptureFileAppender.append(inPlace:)`), not copied into the appender's buffer.
    /// The bytes before it are not blocks.
    public private(set) var firstBlockOffset = 0
    /// The room kept in front of the blocks for `firstBlockOffset` (a direct write unit larger
    /// than this is written by copying, as before).
    public static let maximumFirstBlockOffset = 64 << 10

    public init(maximumItems: Int = 16_384, maximumBytes: Int = 16 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    public var count: Int { packets.count + secretsCount }
    public var isWorthWritingNow: Bool { count * 2 >= maximumItems || (blockBytes + secrets.count) * 2 >= maximumBytes }

    /// Bytes of packet blocks held.
    public var blockBytes: Int {
        guard let store, store.count > 0 else { return 0 }
        return store.count - firstBlockOffset
    }

    /// Calls `body` with the store from its start: the packets' blocks back to back from
    /// `firstBlockOffset` (`QueuedPacket.block` counts from the store's start); valid during the
    /// call only; empty when no packet was taken.
    public func withBlocks<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let store, store.count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: store.base, count: store.count))
    }

    /// The store's memory, for the writer that owns the batch (`BoundedWriterQueue.run` swapped
    /// it out): `base` (2 MiB-aligned when mapped; the first `firstBlockOffset` bytes are free
    /// for it to fill) and the bytes used from it; nil when no packet was taken.
    public var storeMemory: (base: UnsafeMutableRawPointer, count: Int)? {
        guard let store, store.count > 0 else { return nil }
        return (store.base, store.count)
    }

    /// A copy of the packets' blocks (tests).
    public var blocks: [UInt8] { withBlocks { Array($0.dropFirst(firstBlockOffset)) } }

    /// Sets `firstBlockOffset` on a batch that holds no packet (0 when `offset` is outside
    /// 0..<`maximumFirstBlockOffset`); a batch holding packets keeps its own.
    public mutating func placeFirstBlock(at offset: Int) {
        guard packets.isEmpty, blockBytes == 0 else { return }
        firstBlockOffset = (0..<Self.maximumFirstBlockOffset).contains(offset) ? offset : 0
    }

    /// Kept bytes below which a cut may have taken a packet's IP and transport headers (an IPv6
    /// header with extension headers, then TCP's 14 bytes to its flags): such a packet's row
    /// facts are read before the cut, on the producer's thread.
    static let headerReach = 256

    public mutating func add(_ offer: CaptureOffer, refusing: Bool, counters: inout CaptureQueueCounters) -> (added: Int, outcome: Bool) {
        switch offer {
        case let .packet(flow, direction, time, packet, snapLength, comment):
            let kept = snapLength > 0 ? min(packet.count, snapLength) : packet.count
            let commentBytes = comment.map(PcapngBlocks.commentBytes)
            let flag: PcapngBlocks.FlagDirection = direction == .clientToServer ? .outbound : .inbound
            let length = PcapngBlocks.enhancedPacketLength(capturedLength: kept, direction: flag, commentLength: commentBytes?.count)
            guard !refusing, count < maximumItems, blockBytes + secrets.count + length <= maximumBytes else {
                counters.packetsDropped &+= 1
                return (0, false)
            }
            let blocks = uniqueStore()
            let start = blocks.count == 0 ? firstBlockOffset : blocks.count
            PcapngBlocks.writeEnhancedPacket(at: blocks.base + start, length: length, timestampMicros: time,
                                             packet: UnsafeRawBufferPointer(rebasing: packet[0..<kept]), originalLength: packet.count,
                                             direction: flag, comment: commentBytes)
            blocks.count = start + length
            packets.append(QueuedPacket(flow: flow, direction: direction, timeMicros: time, originalLength: packet.count,
                                          includedLength: kept, block: start..<start + length,
                                          summary: kept < packet.count && kept < Self.headerReach
                                              ? PacketSummary.read(packet, originalLength: packet.count) : nil))
            counters.packetsQueued &+= 1
            return (1, true)
        case let .secrets(type, keyLog, randoms):
            let block = PcapngBlocks.decryptionSecrets(secretsType: type, secrets: keyLog)
            guard !refusing, count < maximumItems, blockBytes + secrets.count + block.count <= maximumBytes else {
                counters.secretsDropped &+= 1
                return (0, false)
            }
            secrets.append(contentsOf: block)
            secretsCount += 1
            clientRandoms += randoms
            return (1, true)
        case let .noSecretWillCome(random):
            guard !refusing, clientRandoms.count < maximumItems else { return (0, false) }
            clientRandoms.append(random)
            return (0, true)
        }
    }

    /// The block store, made at the first packet and copied first if another batch shares it (a
    /// batch copied as a value: the queue's empty batch is copied before any packet, so the two
    /// batches it swaps each make their own).
    private mutating func uniqueStore() -> CaptureBlockStore {
        // Checked before any binding (a binding is a second reference).
        if isKnownUniquelyReferenced(&store), let store { return store }
        let fresh = CaptureBlockStore(capacity: maximumBytes + Self.maximumFirstBlockOffset)
        if let store {
            fresh.base.copyMemory(from: store.base, byteCount: store.count)
            fresh.count = store.count
        }
        store = fresh
        return fresh
    }

    public mutating func removeAll() {
        packets.removeAll(keepingCapacity: true)
        if isKnownUniquelyReferenced(&store) { store?.count = 0 } else { store = nil }
        secrets.removeAll(keepingCapacity: true)
        secretsCount = 0
        clientRandoms.removeAll(keepingCapacity: true)
    }
}

/// The memory a capture batch builds its blocks in (`CaptureBatch`'s packets, the decrypted
/// capture's `DecryptedCaptureBatch` laid out in the file's format): `capacity` bytes (the batch's
/// `maximumBytes` and the room for its `firstBlockOffset`) of `CaptureMemory` (huge pages past the
/// first 2 MiB where the kernel gives them), reserved once and kept from batch to batch, so that
/// the thread filling it neither reallocates nor faults in fresh 4 KiB pages as a batch grows;
/// heap memory aligned to `alignment` if the mapping fails.
///
/// `@unchecked Sendable`: a store belongs to one batch (copied first when shared, the batch's
/// `uniqueStore`), and a batch is touched by one thread at a time: the engine or loop thread
/// appends under the capture queue's lock; the writer reads it (and fills headers in) only after
/// `BoundedWriterQueue.run` swapped it out of the queue (under that lock), and empties it
/// before handing it back the same way. Nothing keeps a pointer into it past `write(_:)`.
public final class CaptureBlockStore: @unchecked Sendable {
    /// Bytes of blocks held, from `base`.
    public var count = 0
    public let base: UnsafeMutableRawPointer
    private let memory: CaptureMemory?

    /// - Parameter alignment: of the heap fallback (4096 where the store is written with O_DIRECT).
    public init(capacity: Int, alignment: Int = 16) {
        memory = CaptureMemory(capacity: capacity)
        base = memory?.base ?? .allocate(byteCount: max(capacity, 1), alignment: alignment)
    }

    deinit { if memory == nil { base.deallocate() } }
}
