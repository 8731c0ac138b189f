import Capture
import Dispatch
import FlowStore
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture's writer thread: one `TCPStreamSynthesizer` per inspected flow, its
/// packets appended to the session's decrypted capture file as pcapng Enhanced Packet Blocks
/// (the first packet of each stream carries the comment `tv flow ID`). Runs on its
/// `BoundedWriterQueue`'s thread only.
///
/// The batch comes laid out in the file's format (`DecryptedCaptureBatch`): the writer fills in
/// each block's header and each packet's headers around the plaintext already in place, builds
/// the handshakes and ends into the room kept for them, and appends the store's runs of blocks
/// with O_DIRECT from the store itself where they start at the file's end modulo a block
/// (`prepare` places each batch so), by copying otherwise.
final class DecryptedCaptureThread: QueueWriter {
    typealias Batch = DecryptedCaptureBatch

    /// The comment on a stream's first packet: which flow it is.
    static func streamComment(flow: UInt64) -> String { "tv flow \(flow)" }

    private let output: CaptureFileAppender
    /// The file, removed at `stop` when no inspected flow began in it.
    private let path: String
    /// Whether a stream began in the file.
    private var holdsStreams = false
    private let failures: @Sendable (String) -> Void
    private let mode: @Sendable (CaptureWriteMode) -> Void
    private var streams: [UInt64: (synthesizer: TCPStreamSynthesizer, startMicros: Int64)] = [:]
    /// Blocks the writer builds apart (handshakes and ends) before they go to their place.
    private var heads: [UInt8] = []
    /// The batch's runs of blocks to append, in file order (store offsets).
    private var runs: [Range<Int>] = []
    private var failed = false

    /// Takes `output` (an empty file) and writes the file's header; `mode` hears how the file is
    /// written, after each write; the held tail reaches the file within `tailInterval` seconds.
    init(output: CaptureFileAppender, path: String, tailInterval: Double, failures: @escaping @Sendable (String) -> Void,
         mode: @escaping @Sendable (CaptureWriteMode) -> Void) {
        self.output = output
        self.path = path
        // `output` holds the file's lock from its creation until the descriptor is closed at
        // `stop`: the file is being recorded.
        tail = CaptureTailSchedule(interval: tailInterval)
        self.failures = failures
        self.mode = mode
        heads = DecryptedCapture.heads
        // The head goes into the file at once (a capture with no flow yet is a readable file).
        if appendHeads(), output.writeTail() == nil { tail.wrote() }
    }

    /// When the held-back tail (`CaptureFileAppender`) is due in the file.
    private var tail: CaptureTailSchedule

    func tick() {
        guard tail.isDue(nowNanos: DispatchTime.now().uptimeNanoseconds) else { return }
        writeTail()
    }

    /// Writes the held-back tail now (`DecryptedCapture.flush`, and when it is due): every packet
    /// built so far is then in the file. A failure is tried again an interval later.
    func writeTail() {
        guard !failed else { return }
        if output.writeTail() == nil { tail.wrote() } else { tail.retryLater(nowNanos: DispatchTime.now().uptimeNanoseconds) }
    }
    var idleDeadline: DispatchTime? { tail.deadlineNanos.map { DispatchTime(uptimeNanoseconds: $0) } }
    func idleDeadlinePassed() {}

    /// Places the next batch's first block where the file's end will be, from a block boundary,
    /// once `taken` is written (all its blocks), and hands it the flows. A guess only: a batch
    /// whose blocks the writer skips some of is written by copying from there on.
    func prepare(_ next: inout DecryptedCaptureBatch, following taken: DecryptedCaptureBatch) {
        var offset = 0
        if !failed, output.inPlaceOffset != nil {
            offset = Int((output.end + Int64(taken.blockBytes)) % Int64(output.blockBytes))
        }
        next.follow(taken, firstBlockOffset: offset)
    }

    func write(_ batch: DecryptedCaptureBatch) -> Int {
        guard let base = batch.storeBase else { return 0 }
        runs.removeAll(keepingCapacity: true)
        for item in batch.items {
            let region: Range<Int>
            switch item {
            case let .began(flow, client, server, start, block):
                guard streams[flow] == nil else { continue }
                // Reproducible initial sequence numbers, different per flow and per side.
                let isn = UInt32(truncatingIfNeeded: flow &* 0x9E37_79B1)
                var synthesizer = TCPStreamSynthesizer(client: client, server: server, clientISN: isn, serverISN: ~isn)
                region = place(synthesizer.opening(), comment: flow, at: start, in: base, block: block)
                streams[flow] = (synthesizer, start)
                holdsStreams = true
            case let .data(flow, direction, time, block, count, sums):
                guard var stream = streams[flow] else { continue }
                var at = block
                var nextSum = sums.lowerBound
                for segment in stream.synthesizer.carrying(direction, count: count) {
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
                region = block..<at
                streams[flow] = stream
            case let .ended(flow, end, time, block):
                guard var stream = streams.removeValue(forKey: flow) else { continue }
                region = place(stream.synthesizer.ending(end), comment: nil, at: time, in: base, block: block)
            }
            if let last = runs.last, last.upperBound == region.lowerBound {
                runs[runs.count - 1] = last.lowerBound..<region.upperBound
            } else {
                assert(runs.last.map { $0.upperBound <= region.lowerBound } ?? true, "the loop's layout and the writer's blocks agree")
                runs.append(region)
            }
        }
        guard !failed else { return batch.count }
        for run in runs {
            let failure: Errno?
            if let lead = output.inPlaceOffset, run.lowerBound >= lead, (run.lowerBound - lead) % output.blockBytes == 0 {
                // The bytes in front of the run are blocks already appended (or the batch's free
                // room): the appender puts its held tail there and writes from the store.
                failure = output.append(inPlace: base + run.lowerBound - lead, leading: lead, count: run.count)
            } else {
                failure = output.append(UnsafeRawBufferPointer(start: base + run.lowerBound, count: run.count))
            }
            if let failure {
                failed = true
                failures(failure.phrase)
                return batch.count
            }
        }
        tail.appended(pending: output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        mode(output.mode)
        return 0
    }

    func stop() {
        // Flows still open when the session stops end in order.
        let now = EngineClock.wallMicros()
        for (_, var stream) in streams {
            build(stream.synthesizer.ending(.closedByClient), comment: nil, at: now)
        }
        streams.removeAll()
        appendHeads()
        let (fd, tailFailure) = output.handOver()
        if let tailFailure, !failed { failures(tailFailure.phrase) }
        // A session that inspected nothing (or whose start was refused) leaves no file behind.
        if !holdsStreams { unlink(path) }
        _ = fdatasync(fd)
        close(fd)
    }

    /// Builds the blocks of `planned` segments without payload (handshakes and ends) in
    /// `heads`, the first with flow `comment`'s when given.
    private func build(_ planned: [TCPStreamSynthesizer.PlannedSegment], comment flow: UInt64?, at micros: Int64) {
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

    /// Appends `heads` (the file's head, the ends at stop) by copying; false (said once) when
    /// the file cannot be written.
    @discardableResult
    private func appendHeads() -> Bool {
        defer { heads.removeAll(keepingCapacity: true) }
        guard !failed else { return false }
        if !heads.isEmpty, let failure = heads.withUnsafeBytes({ output.append($0) }) {
            failed = true
            failures(failure.phrase)
            return false
        }
        tail.appended(pending: output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        mode(output.mode)
        return true
    }
}
