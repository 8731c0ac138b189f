import Capture
import Dispatch
import FlowStore
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// How the decrypted capture writes its files, fixed for a session.
public struct DecryptedCaptureConfiguration: Sendable {
    /// The first file's path (`DecryptedCapture.fileName` of the session's start, in the captures
    /// folder); the files after it are named by the time each opens, in the same folder.
    public var firstPath: String
    /// When the file being written is closed (`capture.rotateBytes`, `capture.rotateAge`); the
    /// next opens with the next packet.
    public var rotation = CaptureRotation()
    /// O_DIRECT where the file system allows it (`CaptureFileAppender`).
    public var directWrites = true
    public var directBufferBytes = CaptureFileAppender.defaultBufferBytes
    /// Seconds the tail past the file's last whole disk block may wait before it is written.
    public var tailInterval: Double = 1
    /// After a failed write, no new file is tried for `RetryBackoff.delay(failures:base:cap:)`
    /// milliseconds (1 s doubling to 8 s): packets meanwhile are counted, not tried one by one.
    public var retryBaseMillis = 1_000
    public var retryCapMillis = 8_000
    /// The flow writer's standing on the same disk: while it holds the capture (`HistoryFirst`),
    /// no file is open and packets are counted as not saved. Nil: never held.
    public var historyFirst: HistoryFirstSignal?

    public init(firstPath: String) { self.firstPath = firstPath }

    /// The captures folder.
    var folder: String {
        guard let slash = firstPath.lastIndex(of: "/") else { return "." }
        return String(firstPath[..<slash])
    }
}

/// What the writer thread tells the rest of the session (each closure runs on its thread).
struct DecryptedCaptureHooks: Sendable {
    /// Changes the queue's counters (under its mutex): the writer's figures.
    var update: @Sendable ((inout DecryptedCaptureCounters) -> Void) -> Void
    /// Writes started failing, or resumed; with the counters then.
    var health: @Sendable (WriteHealth.Change, DecryptedCaptureCounters) -> Void = { _, _ in }
    /// A file was closed before the session's end (a rotation, a failed write): a retention
    /// pass may now delete it.
    var closed: @Sendable () -> Void = {}
}

/// The decrypted capture's writer thread: one `TCPStreamSynthesizer` per inspected flow, its
/// packets appended to the decrypted capture's file as pcapng Enhanced Packet Blocks (the first
/// packet of each stream carries the comment `tv flow ID`). Runs on its `BoundedWriterQueue`'s
/// thread only.
///
/// The batch comes laid out in the file's format (`DecryptedCaptureBatch`): the writer fills in
/// each block's header and each packet's headers around the plaintext already in place, builds
/// the handshakes and ends into the room kept for them, and appends the store's runs of blocks
/// with O_DIRECT from the store itself where they start at the file's end modulo a block
/// (`prepare` places each batch so), by copying otherwise.
///
/// Files (`+Files`): the first opens with the first inspected flow, never before (a start that
/// failed left 256-byte empty files listed as closed captures: a trial). One is closed whole when
/// it reaches the rotation limits, when `tv captures rotate` asks, or when a write fails; the
/// next opens with the next packet, starting with a handshake for every stream still open
/// (`TCPStreamSynthesizer.reopening`), so each file reads whole on its own. After a failed write
/// (a full disk) packets are counted as not saved, and a new file is tried with backoff; the
/// first one that takes its head resumes recording.
final class DecryptedCaptureThread: QueueWriter {
    typealias Batch = DecryptedCaptureBatch

    /// The comment on a stream's first packet: which flow it is.
    static func streamComment(flow: UInt64) -> String { "tv flow \(flow)" }

    let configuration: DecryptedCaptureConfiguration
    let hooks: DecryptedCaptureHooks

    /// One inspected flow's stream.
    struct Stream {
        var synthesizer: TCPStreamSynthesizer
        /// When the flow began (µs since the epoch): its data's times count from it.
        let startMicros: Int64
    }
    var streams: [UInt64: Stream] = [:]

    /// The file being written.
    struct OpenFile {
        let output: CaptureFileAppender
        let path: String
        /// Enhanced Packet Blocks appended.
        var packets: Int64 = 0
        /// When its first packet was written (wall µs): the age rotation counts from it.
        var firstPacketMicros: Int64?
        var ledger = DecryptedCaptureLedger()
        /// When the appender's held-back tail is due in the file.
        var tail: CaptureTailSchedule
        var name: String { String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...]) }
    }
    var file: OpenFile?
    /// The first file's path, until it is made.
    var firstPath: String?
    /// Whether writes fail now, and the change to say.
    var health = WriteHealth()
    /// Failed attempts in a row, and when the next may be made (monotonic ns).
    var failuresInARow = 0
    var retryAtNanos: UInt64?
    /// Why no room may be taken now (`HistoryFirst`), as the last batch's check found; nil when
    /// it may. No file is opened meanwhile.
    var heldFor: HistoryFirst.Hold?
    /// The writer's own counters (`publish` copies them into the queue's).
    var figures = DecryptedCaptureCounters()
    /// Flows whose losses are counted (each once); those no longer open are let go after a write.
    var lostFlows: Set<UInt64> = []
    /// Blocks the writer builds apart (the head, handshakes, ends) before they go to their place.
    var heads: [UInt8] = []

    init(configuration: DecryptedCaptureConfiguration, hooks: DecryptedCaptureHooks) {
        self.configuration = configuration
        self.hooks = hooks
        firstPath = configuration.firstPath
    }

    /// Places the next batch's first block where the file's end will be, from a block boundary,
    /// once `taken` is written (all its blocks), and hands it the flows. A guess only: a batch
    /// whose blocks go to another file, or that the writer skips some of, is written by copying
    /// from there on.
    func prepare(_ next: inout DecryptedCaptureBatch, following taken: DecryptedCaptureBatch) {
        var offset = 0
        if let open = file, open.output.inPlaceOffset != nil {
            offset = Int((open.output.end + Int64(taken.blockBytes)) % Int64(open.output.blockBytes))
        }
        next.follow(taken, firstBlockOffset: offset)
    }

    /// Items of a batch going into the open file, as runs of contiguous blocks.
    struct PendingRuns {
        struct Item {
            var region: Range<Int>
            var packets: Int
            var bytes: Int
            var flow: UInt64?
        }
        var items: [Item] = []
        var blockBytes = 0
        var packets = 0

        mutating func add(_ item: Item) {
            items.append(item)
            blockBytes += item.region.count
            packets += item.packets
        }

        /// The items as runs (index ranges whose regions follow one another).
        var runs: [Range<Int>] {
            var out: [Range<Int>] = []
            for index in items.indices {
                if let last = out.last, items[last.upperBound - 1].region.upperBound == items[index].region.lowerBound {
                    out[out.count - 1] = last.lowerBound..<index + 1
                } else {
                    assert(out.last.map { items[$0.upperBound - 1].region.upperBound <= items[index].region.lowerBound } ?? true,
                           "the loop's layout and the writer's blocks agree")
                    out.append(index..<index + 1)
                }
            }
            return out
        }
    }

    func write(_ batch: DecryptedCaptureBatch) -> Int {
        guard let base = batch.storeBase else { return 0 }
        askHistoryFirst(bytes: Int64(batch.blockBytes))
        var pending = PendingRuns()
        var notWritten = 0
        for item in batch.items {
            // What the item writes, and when: a flow begun twice, or data and ends of a flow
            // never begun, write nothing.
            let time: Int64
            switch item {
            case let .began(flow, _, _, start, _):
                guard streams[flow] == nil else { continue }
                time = start
            case let .data(flow, _, offset, _, _, _):
                guard let stream = streams[flow] else { continue }
                time = stream.startMicros + offset
            case let .ended(flow, _, at, _):
                guard streams[flow] != nil else { continue }
                time = at
            }
            // Rotation by size is checked between items, so a file ends near its limit.
            if let open = file, let limit = configuration.rotation.maximumBytes, limit > 0, open.packets + Int64(pending.packets) > 0,
               open.output.end + Int64(pending.blockBytes) >= limit {
                notWritten += append(&pending, base)
                closeFile(rotated: true)
            }
            if file == nil { openFile(at: time) }
            let made = synthesize(item, in: batch, base: base)
            if file != nil {
                pending.add(made)
            } else {
                noteLost(packets: made.packets, bytes: made.bytes, flow: made.flow)
                notWritten += 1
            }
        }
        notWritten += append(&pending, base)
        lostFlows = lostFlows.filter { streams[$0] != nil }
        publish()
        return notWritten
    }

    /// Fills in `item`'s blocks in the batch's store (and the stream's state).
    private func synthesize(_ item: DecryptedCaptureItem, in batch: DecryptedCaptureBatch,
                            base: UnsafeMutableRawPointer) -> PendingRuns.Item {
        switch item {
        case let .began(flow, client, server, start, block):
            // Reproducible initial sequence numbers, different per flow and per side.
            let isn = UInt32(truncatingIfNeeded: flow &* 0x9E37_79B1)
            var synthesizer = TCPStreamSynthesizer(client: client, server: server, clientISN: isn, serverISN: ~isn)
            let planned = synthesizer.opening()
            let region = place(planned, comment: flow, at: start, in: base, block: block)
            streams[flow] = Stream(synthesizer: synthesizer, startMicros: start)
            return .init(region: region, packets: planned.count, bytes: 0, flow: flow)
        case let .data(flow, direction, time, block, count, sums):
            var stream = streams[flow]!
            var at = block
            var nextSum = sums.lowerBound
            let segments = stream.synthesizer.carrying(direction, count: count)
            for segment in segments {
                let payload = segment.payload.count
                let captured = TCPSegmentBuilder.length(segment.fields, payloadCount: payload)
                let packet = base + at + PcapngBlocks.enhancedPacketHeaderSize
                var payloadSum: UInt32 = 0
                if payload > 0 {
                    payloadSum = batch.segmentSums[nextSum]
                    nextSum += 1
                }
                PcapngBlocks.writeEnhancedPacketFrame(at: base + at, timestampMicros: stream.startMicros + time, capturedLength: captured,
                                                     originalLength: captured)
                TCPSegmentBuilder.writeHeaders(segment.fields, payloadCount: payload, payloadSum: payloadSum, at: packet)
                at += PcapngBlocks.enhancedPacketLength(capturedLength: captured, direction: nil, commentLength: nil)
            }
            streams[flow] = stream
            return .init(region: block..<at, packets: segments.count, bytes: count, flow: flow)
        case let .ended(flow, end, time, block):
            var stream = streams.removeValue(forKey: flow)!
            let planned = stream.synthesizer.ending(end)
            return .init(region: place(planned, comment: nil, at: time, in: base, block: block), packets: planned.count, bytes: 0, flow: flow)
        }
    }

    /// Appends `pending`'s runs to the open file and empties it. A run that fails closes the file
    /// (`fail`): it and the runs after it are not saved.
    /// - Returns: how many items were not written.
    private func append(_ pending: inout PendingRuns, _ base: UnsafeMutableRawPointer) -> Int {
        defer { pending = PendingRuns() }
        guard !pending.items.isEmpty else { return 0 }
        let runs = pending.runs
        for (number, run) in runs.enumerated() {
            guard var open = file else { return lose(pending, runs[number...]) }
            let region = pending.items[run.lowerBound].region.lowerBound..<pending.items[run.upperBound - 1].region.upperBound
            let start = open.output.end
            let failure: Errno?
            if let lead = open.output.inPlaceOffset, region.lowerBound >= lead, (region.lowerBound - lead) % open.output.blockBytes == 0 {
                // The bytes in front of the run are blocks already appended (or the batch's free
                // room): the appender puts its held tail there and writes from the store.
                failure = open.output.append(inPlace: base + region.lowerBound - lead, leading: lead, count: region.count)
            } else {
                failure = open.output.append(UnsafeRawBufferPointer(start: base + region.lowerBound, count: region.count))
            }
            if let failure {
                fail(DecryptedCaptureFailure(path: open.path, error: failure))
                return lose(pending, runs[number...])
            }
            for item in pending.items[run] {
                open.ledger.appended(.init(end: start + Int64(item.region.upperBound - region.lowerBound), packets: item.packets,
                                           bytes: item.bytes, flow: item.flow))
                open.packets += Int64(item.packets)
                figures.packetsWritten &+= UInt64(item.packets)
            }
            if open.firstPacketMicros == nil { open.firstPacketMicros = EngineClock.wallMicros() }
            open.ledger.settle(written: open.output.written)
            open.tail.appended(pending: open.output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
            figures.writeMode = open.output.mode
            file = open
            succeeded()
        }
        return 0
    }

    /// Counts the items of `runs` as not saved.
    /// - Returns: how many there were.
    private func lose(_ pending: PendingRuns, _ runs: ArraySlice<Range<Int>>) -> Int {
        var count = 0
        for run in runs {
            for item in pending.items[run] { noteLost(packets: item.packets, bytes: item.bytes, flow: item.flow) }
            count += run.count
        }
        return count
    }

    /// Counts packets that never reached a file, and their flow (once).
    func noteLost(packets: Int, bytes: Int, flow: UInt64?) {
        figures.packetsNotSaved &+= UInt64(packets)
        figures.bytesNotSaved &+= UInt64(bytes)
        if let flow, lostFlows.insert(flow).inserted { figures.flowsNotSaved &+= 1 }
    }

    /// Copies the writer's figures into the queue's counters.
    /// - Returns: the counters then (the queue's with the writer's).
    @discardableResult
    func publish() -> DecryptedCaptureCounters {
        let mine = figures
        var merged = DecryptedCaptureCounters()
        hooks.update { counters in
            counters.writeMode = mine.writeMode ?? counters.writeMode
            counters.recording = mine.recording
            counters.filesOpened = mine.filesOpened
            counters.packetsWritten = mine.packetsWritten
            counters.packetsNotSaved = mine.packetsNotSaved
            counters.bytesNotSaved = mine.bytesNotSaved
            counters.flowsNotSaved = mine.flowsNotSaved
            counters.failedWrites = mine.failedWrites
            counters.failing = mine.failing
            counters.lastFailure = mine.lastFailure
            merged = counters
        }
        return merged
    }

    /// Builds the blocks of `planned` segments without payload (handshakes and ends) in
    /// `heads`, the first with flow `comment`'s when given.
    func build(_ planned: [TCPStreamSynthesizer.PlannedSegment], comment flow: UInt64?, at micros: Int64) {
        for (index, segment) in planned.enumerated() {
            let comment = index == 0 ? flow.map { PcapngBlocks.commentBytes(Self.streamComment(flow: $0)) } : nil
            let length = TCPSegmentBuilder.length(segment.fields, payloadCount: 0)
            PcapngBlocks.appendEnhancedPacket(to: &heads, timestampMicros: micros, capturedLength: length, originalLength: length,
                                              direction: nil, comment: comment) {
                TCPSegmentBuilder.appendHeaders(segment.fields, payload: UnsafeRawBufferPointer(start: nil, count: 0), to: &$0)
            }
        }
    }

    /// `build` into the room the loop kept at `block` (`DecryptedCaptureLayout`): the region.
    private func place(_ planned: [TCPStreamSynthesizer.PlannedSegment], comment flow: UInt64?, at micros: Int64,
                       in base: UnsafeMutableRawPointer, block: Int) -> Range<Int> {
        heads.removeAll(keepingCapacity: true)
        defer { heads.removeAll(keepingCapacity: true) }
        build(planned, comment: flow, at: micros)
        heads.withUnsafeBytes { (base + block).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return block..<block + heads.count
    }
}
