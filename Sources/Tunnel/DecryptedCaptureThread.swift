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
final class DecryptedCaptureThread: QueueWriter {
    typealias Batch = DecryptedCaptureBatch

    /// The comment on a stream's first packet: which flow it is.
    static func streamComment(flow: UInt64) -> String { "tv flow \(flow)" }

    private let output: CaptureFileAppender
    private let failures: @Sendable (String) -> Void
    private let mode: @Sendable (CaptureWriteMode) -> Void
    private var streams: [UInt64: (synthesizer: TCPStreamSynthesizer, startMicros: Int64, commented: Bool)] = [:]
    /// The bytes the writer builds itself (block and packet headers, padding, options, trailers);
    /// the plaintext stays in the batch, and `gather` says how the two interleave in the file.
    private var heads: [UInt8] = []
    private var gather = DecryptedCaptureGather()
    private var failed = false

    /// Takes `output` (an empty file) and writes the file's header; `mode` hears how the file is
    /// written, after each write; the held tail reaches the file within `tailInterval` seconds.
    init(output: CaptureFileAppender, tailInterval: Double, failures: @escaping @Sendable (String) -> Void,
         mode: @escaping @Sendable (CaptureWriteMode) -> Void) {
        self.output = output
        tail = CaptureTailSchedule(interval: tailInterval)
        self.failures = failures
        self.mode = mode
        heads = PcapngBlocks.sectionHeader(comment: DecryptedCapture.fileComment)
            + PcapngBlocks.interfaceDescription(snapLength: 0)
        gather.heads(upTo: heads.count)
        // The head goes into the file at once (a capture with no flow yet is a readable file).
        if flush(plaintext: UnsafeRawBufferPointer(start: nil, count: 0)), output.writeTail() == nil { tail.wrote() }
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

    func write(_ batch: DecryptedCaptureBatch) -> Int {
        let written = batch.bytes.withUnsafeBytes { plaintext -> Bool in
            var index = 0
            while index < batch.items.count {
                let item = batch.items[index]
                index += 1
                switch item {
                case let .began(flow, client, server, start):
                    guard streams[flow] == nil else { continue }
                    // Reproducible initial sequence numbers, different per flow and per side.
                    let isn = UInt32(truncatingIfNeeded: flow &* 0x9E37_79B1)
                    var stream = (synthesizer: TCPStreamSynthesizer(client: client, server: server, clientISN: isn, serverISN: ~isn),
                                  startMicros: start, commented: false)
                    append(stream.synthesizer.opening(), plaintext: plaintext, from: 0, flow: flow, at: start,
                           commented: &stream.commented)
                    streams[flow] = stream
                case let .data(flow, direction, time, first):
                    guard var stream = streams[flow] else { continue }
                    // Small chunks of one flow and direction that follow one another in the batch
                    // (their bytes do too) become one segment, as a receiver's GRO joins them; it
                    // keeps the first chunk's time.
                    var range = first
                    while index < batch.items.count, case let .data(nextFlow, nextDirection, _, next) = batch.items[index],
                          nextFlow == flow, nextDirection == direction, next.lowerBound == range.upperBound,
                          next.upperBound - range.lowerBound <= stream.synthesizer.maximumSegmentSize {
                        range = range.lowerBound..<next.upperBound
                        index += 1
                    }
                    append(stream.synthesizer.carrying(direction, count: range.count), plaintext: plaintext, from: range.lowerBound,
                           flow: flow, at: stream.startMicros + time, commented: &stream.commented)
                    streams[flow] = stream
                case let .ended(flow, cutOff, time):
                    guard var stream = streams.removeValue(forKey: flow) else { continue }
                    append(stream.synthesizer.ending(reset: cutOff), plaintext: plaintext, from: 0, flow: flow, at: time,
                           commented: &stream.commented)
                }
            }
            return flush(plaintext: plaintext)
        }
        return written ? 0 : batch.count
    }

    func stop() {
        // Flows still open when the session stops end in order.
        let now = EngineClock.wallMicros()
        for (flow, var stream) in streams {
            append(stream.synthesizer.ending(reset: false), plaintext: UnsafeRawBufferPointer(start: nil, count: 0), from: 0, flow: flow, at: now,
                   commented: &stream.commented)
        }
        streams.removeAll()
        flush(plaintext: UnsafeRawBufferPointer(start: nil, count: 0))
        let (fd, tailFailure) = output.handOver()
        if let tailFailure, !failed { failures(tailFailure.phrase) }
        _ = fdatasync(fd)
        close(fd)
    }

    /// Builds each planned segment's Enhanced Packet Block in `heads` around a hole for its
    /// payload, `plaintext[start + segment.payload]`, which the gather list takes from the batch
    /// where it is: the plaintext is copied once, from the batch into the file's buffer.
    private func append(_ planned: [TCPStreamSynthesizer.PlannedSegment], plaintext: UnsafeRawBufferPointer, from start: Int,
                        flow: UInt64, at micros: Int64, commented: inout Bool) {
        for segment in planned {
            let comment = commented ? nil : PcapngBlocks.commentBytes(Self.streamComment(flow: flow))
            commented = true
            let range = start + segment.payload.lowerBound..<start + segment.payload.upperBound
            let payload = range.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: plaintext[range])
            let length = TCPSegmentBuilder.length(segment.fields, payloadCount: payload.count)
            var hole = 0
            PcapngBlocks.appendEnhancedPacket(to: &heads, timestampMicros: micros, capturedLength: length, originalLength: length,
                                              direction: nil, comment: comment) {
                TCPSegmentBuilder.appendHeaders(segment.fields, payload: payload, to: &$0)
                hole = $0.count
            }
            gather.heads(upTo: hole)
            gather.plaintext(range)
            gather.heads(upTo: heads.count)
        }
    }

    /// Writes what is gathered (one append: `heads` and `plaintext` interleaved); false (said
    /// once) when the file cannot be written.
    @discardableResult
    private func flush(plaintext: UnsafeRawBufferPointer) -> Bool {
        defer {
            heads.removeAll(keepingCapacity: true)
            gather.removeAll()
        }
        guard !failed else { return false }
        let failure = heads.withUnsafeBytes { built in
            gather.withParts(heads: built, plaintext: plaintext) { output.append($0) }
        }
        if let failure {
            failed = true
            failures(failure.phrase)
            return false
        }
        tail.appended(pending: output.pending, nowNanos: DispatchTime.now().uptimeNanoseconds)
        mode(output.mode)
        return true
    }
}
