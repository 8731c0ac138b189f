import Capture
import FlowStore
import FlowTerms

/// One thing waiting for the decrypted capture's writer, in the order the loops reported it,
/// with where its blocks go in the batch's store (`DecryptedCaptureBatch.storeBase`).
public enum DecryptedCaptureItem: Sendable, Equatable {
    /// An inspected flow's decrypted relay began between these ends; its handshake's blocks go
    /// at `block` (`DecryptedCaptureLayout.openingBytes`).
    case began(flow: UInt64, client: PacketEndpoint, server: PacketEndpoint, startMicros: Int64, block: Int)
    /// `count` bytes of a flow's plaintext, laid out from `block` as its segments' blocks
    /// (`DecryptedCaptureLayout.dataBytes`): each payload is in place, the headers are the
    /// writer's to fill. `sums` are where in `DecryptedCaptureBatch.segmentSums` each segment's
    /// payload sum is (`InternetChecksum.sum`, one per segment of at most the MSS, in order).
    case data(flow: UInt64, direction: Direction, timeMicros: Int64, block: Int, count: Int, sums: Range<Int>)
    /// The flow is over: closed in order, or cut off; its blocks go at `block`.
    case ended(flow: UInt64, end: StreamEnd, timeMicros: Int64, block: Int)
}

/// What a loop hands the decrypted capture's queue (bytes valid during the call only).
public enum DecryptedCaptureOffer {
    /// `layout` is the flow's (`DecryptedCaptureLayout(flow:client:server:)`, made by the loop
    /// before the queue's lock).
    case began(flow: UInt64, client: PacketEndpoint, server: PacketEndpoint, startMicros: Int64, layout: DecryptedCaptureLayout)
    case data(flow: UInt64, direction: Direction, timeMicros: Int64, bytes: UnsafeRawBufferPointer)
    case ended(flow: UInt64, end: StreamEnd, timeMicros: Int64)
}

/// The decrypted capture's batch, already in the file's format: the loop copies each chunk of
/// plaintext once, straight into its place in the store (after room for its block's and
/// packet's headers, which the writer fills: `DecryptedCaptureLayout`) and sums it there while
/// it is in its cache; it reserves the room of each flow's handshake and end blocks too. The
/// writer then only writes headers and hands the store's runs to the file as they are
/// (`CaptureFileAppender.append(inPlace:)`), never copying or reading the plaintext.
/// Measured before (i26-dcap, perf): the plaintext's round trip through memory (the loop's copy
/// into the batch, the writer's sum and its copy into the O_DIRECT buffer) was the capture's
/// cost, on ÷ off 1.25–1.39 in tv's CPU per byte. The copy and the sum fused in one SSE2 pass
/// measured the same as the two (i28-dcap: bench after ÷ before 0.96–1.02 over 90 rounds, perf
/// pairs equal): the stores into the cold store are the cost, whichever loop makes them.
///
/// The flows begun and not ended, with their layouts (`flows`), follow from batch to batch
/// (`follow`): the loop lays out only a flow the writer will synthesize, so the two agree on
/// every block's place. Small chunks of one flow and direction that follow one another become
/// one segment (as a receiver's GRO joins them, keeping the first's time), up to the MSS.
/// Bounded in items and bytes (full: dropped and counted; the data path never waits).
public struct DecryptedCaptureBatch: WriterBatch {
    public typealias Offer = DecryptedCaptureOffer
    public typealias Outcome = Bool
    public typealias Counters = DecryptedCaptureCounters

    public private(set) var items: [DecryptedCaptureItem] = []
    /// The data segments' payload sums, taken by the loop as it copies each (measured: chunks
    /// over the MSS summed by the writer instead were its largest user-space cost, perf).
    public private(set) var segmentSums: [UInt32] = []
    /// Inspected flows begun and not ended (as of this batch's last item), with their layouts.
    public private(set) var flows: [UInt64: DecryptedCaptureLayout] = [:]
    public let maximumItems: Int
    /// Bytes of blocks (plaintext and the room for headers) in one batch.
    public let maximumBytes: Int
    /// Where the first item's blocks start in the store (`CaptureBatch.firstBlockOffset`'s
    /// idea): the writer sets it on the empty batch to the file's end modulo its direct write
    /// unit as it expects it when this batch is written (`follow`), so the store's runs are
    /// written with O_DIRECT from the store itself.
    public private(set) var firstBlockOffset = 0
    /// The room kept in front of the blocks for `firstBlockOffset`.
    public static let maximumFirstBlockOffset = 64 << 10

    private var store: CaptureBlockStore?
    /// The last item when it is data that a next chunk of its flow and direction may join.
    private var open: (index: Int, flow: UInt64, direction: Direction, timeMicros: Int64, block: Int, count: Int)?

    public init(maximumItems: Int = 8_192, maximumBytes: Int = 16 << 20) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    public var count: Int { items.count }
    public var isWorthWritingNow: Bool { items.count * 2 >= maximumItems || blockBytes * 2 >= maximumBytes }

    /// Bytes of blocks laid out (from `firstBlockOffset`).
    public var blockBytes: Int {
        guard let store, store.count > 0 else { return 0 }
        return store.count - firstBlockOffset
    }

    /// The store's memory for the writer that owns the batch (swapped out of the queue): items'
    /// `block`s count from `base` (2 MiB-aligned when mapped); nil when nothing was laid out.
    public var storeBase: UnsafeMutableRawPointer? {
        guard let store, store.count > 0 else { return nil }
        return store.base
    }

    /// Sets up the next batch, empty, after `taken`: its flows, and where its first block goes
    /// (0 when `offset` is outside 0..<`maximumFirstBlockOffset`).
    public mutating func follow(_ taken: DecryptedCaptureBatch, firstBlockOffset offset: Int) {
        flows = taken.flows
        guard items.isEmpty, blockBytes == 0 else { return }
        firstBlockOffset = (0..<Self.maximumFirstBlockOffset).contains(offset) ? offset : 0
    }

    public mutating func add(_ offer: DecryptedCaptureOffer, refusing: Bool,
                             counters: inout DecryptedCaptureCounters) -> (added: Int, outcome: Bool) {
        switch offer {
        case let .data(flow, direction, time, chunk):
            return add(flow: flow, direction: direction, timeMicros: time, chunk: chunk, refusing: refusing, counters: &counters)
        case let .began(flow, client, server, start, layout):
            // A flow begun twice is synthesized once (the writer would skip it).
            guard flows[flow] == nil else {
                open = nil
                return (0, true)
            }
            guard let block = reserve(layout.openingBytes, refusing: refusing) else { counters.eventsDropped &+= 1; return (0, false) }
            items.append(.began(flow: flow, client: client, server: server, startMicros: start, block: block))
            flows[flow] = layout
            open = nil
        case let .ended(flow, end, time):
            guard let layout = flows[flow] else {
                open = nil
                return (0, true)
            }
            guard let block = reserve(layout.endingBytes(end), refusing: refusing) else {
                counters.eventsDropped &+= 1
                return (0, false)
            }
            items.append(.ended(flow: flow, end: end, timeMicros: time, block: block))
            flows[flow] = nil
            open = nil
        }
        return (1, true)
    }

    private mutating func add(flow: UInt64, direction: Direction, timeMicros: Int64, chunk: UnsafeRawBufferPointer, refusing: Bool,
                              counters: inout DecryptedCaptureCounters) -> (added: Int, outcome: Bool) {
        let n = chunk.count
        let joinsOpen = open.map { $0.flow == flow && $0.direction == direction } ?? false
        // A flow never begun is not written (a plain relay, or its beginning was dropped); an
        // empty chunk writes nothing and joins across (another flow's breaks a join).
        guard let layout = flows[flow], n > 0, let source = chunk.baseAddress else {
            if !joinsOpen || flows[flow] == nil { open = nil }
            return (0, true)
        }
        if let last = open, joinsOpen, last.count + n <= layout.maximumSegmentSize {
            let grown = layout.dataBytes(last.count + n) - layout.dataBytes(last.count)
            guard !refusing, blockBytes + grown <= maximumBytes, let store else {
                counters.bytesDropped &+= UInt64(n)
                return (0, false)
            }
            (store.base + last.block + layout.dataOffset(ofByte: last.count)).copyMemory(from: source, byteCount: n)
            // An open item carries one segment, its sum the last one taken.
            let sumIndex = segmentSums.count - 1
            segmentSums[sumIndex] = InternetChecksum.joined(segmentSums[sumIndex], InternetChecksum.sum(chunk), firstCount: last.count)
            store.count = last.block + layout.dataBytes(last.count + n)
            items[last.index] = .data(flow: flow, direction: direction, timeMicros: last.timeMicros, block: last.block, count: last.count + n,
                                      sums: sumIndex..<sumIndex + 1)
            open = (last.index, flow, direction, last.timeMicros, last.block, last.count + n)
            counters.bytesQueued &+= UInt64(n)
            return (0, true)
        }
        guard let block = reserve(layout.dataBytes(n), refusing: refusing), let store else {
            counters.bytesDropped &+= UInt64(n)
            return (0, false)
        }
        let firstSum = segmentSums.count
        var start = 0
        while start < n {
            let piece = min(layout.maximumSegmentSize, n - start)
            (store.base + block + layout.dataOffset(ofByte: start)).copyMemory(from: source + start, byteCount: piece)
            segmentSums.append(InternetChecksum.sum(UnsafeRawBufferPointer(start: source + start, count: piece)))
            start += piece
        }
        items.append(.data(flow: flow, direction: direction, timeMicros: timeMicros, block: block, count: n,
                           sums: firstSum..<segmentSums.count))
        open = n <= layout.maximumSegmentSize ? (items.count - 1, flow, direction, timeMicros, block, n) : nil
        counters.bytesQueued &+= UInt64(n)
        return (1, true)
    }

    /// Room for `length` bytes of blocks after the last item's: where they start, or nil when
    /// the batch is full (in items or bytes) or refusing.
    private mutating func reserve(_ length: Int, refusing: Bool) -> Int? {
        guard !refusing, items.count < maximumItems, blockBytes + length <= maximumBytes else { return nil }
        let store = uniqueStore()
        let start = store.count == 0 ? firstBlockOffset : store.count
        store.count = start + length
        return start
    }

    /// The store, made at the first item and copied first if another batch shares it (the
    /// queue's empty batch is copied as a value before any item: the two batches it swaps each
    /// make their own).
    private mutating func uniqueStore() -> CaptureBlockStore {
        if isKnownUniquelyReferenced(&store), let store { return store }
        let fresh = CaptureBlockStore(capacity: maximumBytes + Self.maximumFirstBlockOffset, alignment: 4096)
        if let store {
            fresh.base.copyMemory(from: store.base, byteCount: store.count)
            fresh.count = store.count
        }
        store = fresh
        return fresh
    }

    public mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        segmentSums.removeAll(keepingCapacity: true)
        if isKnownUniquelyReferenced(&store) { store?.count = 0 } else { store = nil }
        // The next batch takes the flows from the one written after this (`follow`).
        flows = [:]
        open = nil
        firstBlockOffset = 0
    }
}
