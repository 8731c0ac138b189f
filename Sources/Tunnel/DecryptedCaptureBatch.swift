import Capture
import FlowStore
import FlowTerms

/// One thing waiting for the decrypted capture's writer, in the order the loops reported it.
public enum DecryptedCaptureItem: Sendable, Equatable {
    /// An inspected flow's decrypted relay began between these ends.
    case began(flow: UInt64, client: PacketEndpoint, server: PacketEndpoint, startMicros: Int64)
    /// Plaintext of a flow: its bytes are `DecryptedCaptureBatch.bytes[range]`.
    case data(flow: UInt64, direction: Direction, timeMicros: Int64, range: Range<Int>)
    /// The flow is over: closed in order, or cut off.
    case ended(flow: UInt64, cutOff: Bool, timeMicros: Int64)
}

/// What a loop hands the decrypted capture's queue (bytes valid during the call only).
public enum DecryptedCaptureOffer {
    case began(flow: UInt64, client: PacketEndpoint, server: PacketEndpoint, startMicros: Int64)
    case data(flow: UInt64, direction: Direction, timeMicros: Int64, bytes: UnsafeRawBufferPointer)
    case ended(flow: UInt64, cutOff: Bool, timeMicros: Int64)
}

/// The decrypted capture queue's counters (under its mutex).
public struct DecryptedCaptureCounters: Sendable, Equatable {
    /// Plaintext bytes taken into a batch.
    public var bytesQueued: UInt64 = 0
    /// Plaintext bytes dropped because the batch was full or the queue was stopping (never
    /// waited for). A flow that lost bytes is written with a gap its sequence numbers show.
    public var bytesDropped: UInt64 = 0
    /// Begin and end events dropped the same way.
    public var eventsDropped: UInt64 = 0
    /// How the file is written (O_DIRECT or buffered); nil before its first write.
    public var writeMode: CaptureWriteMode?

    public init() {}
}

/// The decrypted capture's batch: events in order and one byte store the data events point
/// into, both bounded (full: dropped and counted; the data path never waits).
public struct DecryptedCaptureBatch: WriterBatch {
    public typealias Offer = DecryptedCaptureOffer
    public typealias Outcome = Bool
    public typealias Counters = DecryptedCaptureCounters

    public private(set) var items: [DecryptedCaptureItem] = []
    public private(set) var bytes: [UInt8] = []
    public let maximumItems: Int
    public let maximumBytes: Int

    public init(maximumItems: Int = 8_192, maximumBytes: Int = 16 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    public var count: Int { items.count }
    public var isWorthWritingNow: Bool { items.count * 2 >= maximumItems || bytes.count * 2 >= maximumBytes }

    public mutating func add(_ offer: DecryptedCaptureOffer, refusing: Bool,
                             counters: inout DecryptedCaptureCounters) -> (added: Int, outcome: Bool) {
        switch offer {
        case let .data(flow, direction, time, chunk):
            guard !refusing, items.count < maximumItems, bytes.count + chunk.count <= maximumBytes else {
                counters.bytesDropped &+= UInt64(chunk.count)
                return (0, false)
            }
            let start = bytes.count
            bytes.append(contentsOf: chunk)
            items.append(.data(flow: flow, direction: direction, timeMicros: time, range: start..<bytes.count))
            counters.bytesQueued &+= UInt64(chunk.count)
        case let .began(flow, client, server, start):
            guard !refusing, items.count < maximumItems else { counters.eventsDropped &+= 1; return (0, false) }
            items.append(.began(flow: flow, client: client, server: server, startMicros: start))
        case let .ended(flow, cutOff, time):
            guard !refusing, items.count < maximumItems else { counters.eventsDropped &+= 1; return (0, false) }
            items.append(.ended(flow: flow, cutOff: cutOff, timeMicros: time))
        }
        return (1, true)
    }

    public mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }
}
