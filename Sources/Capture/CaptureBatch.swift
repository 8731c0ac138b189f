import FlowStore
import FlowTerms

/// One thing waiting for the capture writer: a packet of a flow, or TLS secrets for the file.
public enum CaptureItem: Sendable, Equatable {
    /// A packet: its bytes are `CaptureBatch.bytes[range]`, already cut to the snap length;
    /// `comment` becomes its opt_comment.
    case packet(flow: UInt64, direction: Direction, timeMicros: Int64, originalLength: Int, range: Range<Int>, comment: String?)
    /// A Decryption Secrets Block's payload (`PcapngBlocks.decryptionSecrets`), written before
    /// every packet queued after it.
    case secrets(type: UInt32, range: Range<Int>)
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

/// The capture queue's batch: items in order and one byte store they point into, both bounded
/// (a full batch drops and counts; the data path never waits). No allocation per packet once
/// the store has grown to its working size.
public struct CaptureBatch: WriterBatch {
    public typealias Offer = CaptureOffer
    public typealias Outcome = Bool
    public typealias Counters = CaptureQueueCounters

    public private(set) var items: [CaptureItem] = []
    public private(set) var bytes: [UInt8] = []
    /// Bounds: items and bytes in one batch.
    public let maximumItems: Int
    public let maximumBytes: Int

    public init(maximumItems: Int = 16_384, maximumBytes: Int = 16 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    public var count: Int { items.count }
    public var isWorthWritingNow: Bool { items.count * 2 >= maximumItems || bytes.count * 2 >= maximumBytes }

    public mutating func add(_ offer: CaptureOffer, refusing: Bool, counters: inout CaptureQueueCounters) -> (added: Int, outcome: Bool) {
        switch offer {
        case let .packet(flow, direction, time, packet, snapLength, comment):
            let kept = snapLength > 0 ? min(packet.count, snapLength) : packet.count
            guard !refusing, items.count < maximumItems, bytes.count + kept <= maximumBytes else {
                counters.packetsDropped &+= 1
                return (0, false)
            }
            let start = bytes.count
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: packet[0..<kept]))
            items.append(.packet(flow: flow, direction: direction, timeMicros: time, originalLength: packet.count, range: start..<bytes.count,
                                 comment: comment))
            counters.packetsQueued &+= 1
            return (1, true)
        case let .secrets(type, secrets):
            guard !refusing, items.count < maximumItems, bytes.count + secrets.count <= maximumBytes else {
                counters.secretsDropped &+= 1
                return (0, false)
            }
            let start = bytes.count
            bytes.append(contentsOf: secrets)
            items.append(.secrets(type: type, range: start..<bytes.count))
            return (1, true)
        }
    }

    /// Puts the batch's Decryption Secrets Blocks before its packets, each kind in its order.
    ///
    /// OpenSSL logs a TLS 1.3 leg's traffic secrets only after the record they follow is already
    /// on the socket (the server's Finished is written, then the application secrets are
    /// derived), so the TUN engine often queues that packet, and the client's next one, a few µs
    /// before the secret that decrypts what follows. Wireshark derives a connection's keys when it
    /// reads the Finished and never looks back; a secret in the file after it is ignored. Both
    /// arrive within one batch (the writer lingers 50 ms after a wake-up), and a secret earlier
    /// in the file than needed costs nothing, so the writer moves them to the front.
    /// - Returns: whether anything moved (a batch with no secret after a packet is left as is).
    @discardableResult
    public mutating func moveSecretsFirst() -> Bool {
        guard let firstPacket = items.firstIndex(where: \.isPacket),
              items[firstPacket...].contains(where: { !$0.isPacket }) else { return false }
        items = items.filter { !$0.isPacket } + items.filter(\.isPacket)
        return true
    }

    public mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}
