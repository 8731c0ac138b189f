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

    private let fd: Int32
    private let failures: @Sendable (String) -> Void
    private var streams: [UInt64: (synthesizer: TCPStreamSynthesizer, startMicros: Int64, commented: Bool)] = [:]
    private var encoded: [UInt8] = []
    private var failed = false

    /// Takes `fd` (open for writing, empty) and writes the file's header.
    init(fd: Int32, failures: @escaping @Sendable (String) -> Void) {
        self.fd = fd
        self.failures = failures
        encoded = PcapngBlocks.sectionHeader(comment: DecryptedCapture.fileComment)
            + PcapngBlocks.interfaceDescription(snapLength: 0)
        flushEncoded()
    }

    func tick() {}
    var idleDeadline: DispatchTime? { nil }
    func idleDeadlinePassed() {}

    func write(_ batch: DecryptedCaptureBatch) -> Int {
        for item in batch.items {
            switch item {
            case let .began(flow, client, server, start):
                guard streams[flow] == nil else { continue }
                // Reproducible initial sequence numbers, different per flow and per side.
                let isn = UInt32(truncatingIfNeeded: flow &* 0x9E37_79B1)
                var stream = (synthesizer: TCPStreamSynthesizer(client: client, server: server, clientISN: isn, serverISN: ~isn),
                              startMicros: start, commented: false)
                append(stream.synthesizer.handle(.opened), flow: flow, at: start, commented: &stream.commented)
                streams[flow] = stream
            case let .data(flow, direction, time, range):
                guard var stream = streams[flow] else { continue }
                append(stream.synthesizer.handle(.data(direction, Array(batch.bytes[range]))), flow: flow,
                       at: stream.startMicros + time, commented: &stream.commented)
                streams[flow] = stream
            case let .ended(flow, cutOff, time):
                guard var stream = streams.removeValue(forKey: flow) else { continue }
                append(stream.synthesizer.handle(.ended(reset: cutOff)), flow: flow, at: time, commented: &stream.commented)
            }
        }
        return flushEncoded() ? 0 : batch.count
    }

    func stop() {
        // Flows still open when the session stops end in order.
        let now = EngineClock.wallMicros()
        for (flow, var stream) in streams {
            append(stream.synthesizer.handle(.ended(reset: false)), flow: flow, at: now, commented: &stream.commented)
        }
        streams.removeAll()
        flushEncoded()
        _ = fdatasync(fd)
        close(fd)
    }

    private func append(_ packets: [TCPStreamSynthesizer.Packet], flow: UInt64, at micros: Int64, commented: inout Bool) {
        for packet in packets {
            let comment = commented ? nil : Self.streamComment(flow: flow)
            commented = true
            packet.bytes.withUnsafeBytes { bytes in
                PcapngBlocks.appendEnhancedPacket(to: &encoded, timestampMicros: micros, packet: bytes, originalLength: bytes.count,
                                                  comment: comment)
            }
        }
    }

    /// Writes what is encoded; false (said once) when the file cannot be written.
    @discardableResult
    private func flushEncoded() -> Bool {
        defer { encoded.removeAll(keepingCapacity: true) }
        guard !failed else { return false }
        var written = 0
        while written < encoded.count {
            let n = encoded.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                failed = true
                failures(Errno(errno).phrase)
                return false
            }
            written += n
        }
        return true
    }
}
