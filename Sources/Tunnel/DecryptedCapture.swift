import FlowStore
import FlowTerms
import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture (`capture.decrypted`): the plaintext of inspected flows, in every mode,
/// rebuilt as TCP connections between each flow's real ends (`TCPStreamSynthesizer`) in one
/// pcapng file per session, so Wireshark dissects HTTP/1 and HTTP/2 without keys. The file
/// holds content (plaintext: headers, bodies), so it is created 0600 in the 0700 captures
/// folder; the first packet of each stream says which flow it is (`tv flow ID`).
///
/// A `ChunkRecorder`: the loops hand it plaintext through a bounded queue to its own writer
/// thread and never wait (a full queue drops and counts: `counters`).
public final class DecryptedCapture: ChunkRecorder {
    /// The Section Header's comment: what the file is.
    public static let fileComment = "tv decrypted capture: synthesized TCP carrying the plaintext of inspected flows"

    /// The file's name for a session that started at `startMicros` (UTC):
    /// `decrypted-20261201-203000.pcapng`.
    public static func fileName(startMicros: Int64) -> String {
        var seconds = time_t(startMicros / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "decrypted-%04d%02d%02d-%02d%02d%02d.pcapng", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// Where the file is.
    public let path: String
    private let queue: BoundedWriterQueue<DecryptedCaptureThread>
    private let recording: Atomic<Bool>
    private let lastFailure: FailureNote

    /// Creates the file (0600, never over an existing one) and starts the writer thread.
    /// - Throws: `FileWriteError` when the file cannot be created.
    public init(path: String, lingerMillis: Int = 50) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileWriteError(path: path, reason: Errno(errno).phrase) }
        recording = Atomic(true)
        let failure = FailureNote()
        lastFailure = failure
        let queue = BoundedWriterQueue<DecryptedCaptureThread>(batch: DecryptedCaptureBatch(), counters: DecryptedCaptureCounters(),
                                                               lingerMillis: lingerMillis, lingerAfterWrite: false)
        self.queue = queue
        let thread = Thread { queue.run(DecryptedCaptureThread(fd: fd) { reason in failure.note(reason) }) }
        thread.name = "tv decrypted capture"
        thread.start()
    }

    deinit { queue.stop() }

    /// What was queued and dropped so far.
    public var counters: DecryptedCaptureCounters { queue.read { counters, _, _ in counters } }

    /// Why the file could not be written, when it could not (one phrase).
    public var failure: String? { lastFailure.value }

    /// Writes what is queued and waits for it (tests; the end of a session).
    public func flush() { queue.flush() }

    /// Writes what is queued, closes the file and ends the thread.
    public func stop() {
        recording.store(false, ordering: .relaxed)
        queue.stop()
    }

    // MARK: ChunkRecorder

    public var isRecording: Bool { recording.load(ordering: .relaxed) }

    public func inspectedFlowBegan(flow: UInt64, client: FlowEnds.End, server: FlowEnds.End, startMicros: Int64) {
        guard let c = PacketAddress(client.address), let s = PacketAddress(server.address) else { return }
        _ = queue.enqueue(.began(flow: flow, client: PacketEndpoint(c, client.port), server: PacketEndpoint(s, server.port),
                                 startMicros: startMicros))
    }

    public func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) {
        _ = queue.enqueue(.data(flow: flow, direction: direction, timeMicros: offsetMicros, bytes: bytes))
    }

    public func flowEnded(flow: UInt64, cutOff: Bool) {
        _ = queue.enqueue(.ended(flow: flow, cutOff: cutOff, timeMicros: EngineClock.wallMicros()))
    }

    public func flowEnded(flow: UInt64) { flowEnded(flow: flow, cutOff: false) }
}

/// The writer's last failure, for any thread to read.
final class FailureNote: Sendable {
    private let text = Mutex<String?>(nil)
    func note(_ reason: String) { text.withLock { $0 = reason } }
    var value: String? { text.withLock { $0 } }
}
