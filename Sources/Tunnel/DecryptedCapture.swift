import Capture
import FlowStore
import FlowTerms
import Foundation
import Synchronization
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture (`capture.decrypted`): the plaintext of inspected flows, in every mode,
/// rebuilt as TCP connections between each flow's real ends (`TCPStreamSynthesizer`) in pcapng
/// files, so Wireshark dissects HTTP/1 and HTTP/2 without keys. The files hold content
/// (plaintext: headers, bodies), so each is created 0600 in the 0700 captures folder; the first
/// packet of each stream says which flow it is (`tv flow ID`).
///
/// Files: the first is made with the session's first inspected flow (a session that inspects
/// nothing, or whose start failed, leaves none), named by the session's start; it is closed
/// whole when it reaches the capture rotation settings (`DecryptedCaptureConfiguration.rotation`),
/// when `rotate` asks, or when a write fails (a full disk), and the next, named by its own time,
/// opens with the next packet (`DecryptedCaptureThread`). A file being written is locked (an
/// exclusive flock(2), as the packet capture's: `CaptureFolder.isRecording` tells it from any
/// process), so retention and `tv captures delete` never take it.
///
/// A `ChunkRecorder`: the loops hand it plaintext through a bounded queue to its own writer
/// thread and never wait (a full queue drops and counts: `counters`).
public final class DecryptedCapture: ChunkRecorder {
    /// The Section Header's comment: what the file is.
    public static let fileComment = "tv decrypted capture: synthesized TCP carrying the plaintext of inspected flows"

    /// The file's first blocks: its Section Header (the comment, the application) and its one
    /// Interface Description, named so Wireshark does not show "unknown".
    public static let heads = PcapngBlocks.sectionHeader(comment: fileComment, application: PcapngBlocks.application)
        + PcapngBlocks.interfaceDescription(snapLength: 0, name: "tv-decrypted",
                                            description: "tv's decrypted capture: inspected connections' plaintext as TCP")

    /// The file's name for a session that started at `startMicros` (UTC):
    /// `decrypted-20261201-203000.pcapng`.
    public static func fileName(startMicros: Int64) -> String {
        var seconds = time_t(startMicros / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "decrypted-%04d%02d%02d-%02d%02d%02d.pcapng", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// Whether `name` is a decrypted capture's file name (`fileName`, or one with `-N` after the
    /// time when a session started in the same second): what retention and delete-everything
    /// look for in the captures folder.
    public static func isFileName(_ name: String) -> Bool {
        name.hasPrefix("decrypted-") && name.hasSuffix(".pcapng")
    }

    /// The session start a decrypted capture's file name says (µs since the epoch, UTC, to the
    /// second; `fileName`'s inverse, `-N` ignored); nil for a name not of that form.
    public static func startMicros(fileName name: String) -> Int64? {
        guard isFileName(name) else { return nil }
        let digits = Array(name.utf8.dropFirst("decrypted-".count).prefix(15))
        guard digits.count == 15, digits[8] == UInt8(ascii: "-"),
              digits.enumerated().allSatisfy({ $0.offset == 8 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0.element) }) else { return nil }
        func number(_ range: Range<Int>) -> Int32 { digits[range].reduce(0) { $0 * 10 + Int32($1 - UInt8(ascii: "0")) } }
        var parts = tm()
        parts.tm_year = number(0..<4) - 1900
        parts.tm_mon = number(4..<6) - 1
        parts.tm_mday = number(6..<8)
        parts.tm_hour = number(9..<11)
        parts.tm_min = number(11..<13)
        parts.tm_sec = number(13..<15)
        let seconds = timegm(&parts)
        return seconds < 0 ? nil : Int64(seconds) * 1_000_000
    }

    /// The highest `-N` tried after a name that is taken: rotated files named by the same
    /// second (`capture.rotateBytes` 1MB at tens of MB/s) number on from `-2`.
    static let mostNumbered = 10_000

    /// `path` with `-N` before its extension: the name taken when `path` exists (another
    /// session started in the same second, or a file rotated within it). Pure.
    static func numbered(_ path: String, _ n: Int) -> String {
        guard n > 1, path.hasSuffix(".pcapng") else { return path }
        return String(path.dropLast(".pcapng".count)) + "-\(n).pcapng"
    }

    /// The first file's path, as the banner says it: the path asked for, or `numbered` when a
    /// file had that name as the capture was made. The file itself is made with the first
    /// inspected flow (then under the first name free, should one have been taken since).
    public let path: String
    /// The queue to the writer thread (internal: tests flush it without the tail).
    let queue: BoundedWriterQueue<DecryptedCaptureThread>
    private let recording: Atomic<Bool>
    /// Run when a file closes before the session's end (`setClosedHandler`).
    private let closedHandler = ClosedHandler()

    /// Starts the writer thread; no file is made until the first inspected flow begins.
    /// - Parameters:
    ///   - path: the first file's path (`fileName` of the session's start, in the captures folder).
    ///   - rotation: when a file is closed and the next opened (the capture rotation settings).
    ///   - tailInterval: seconds the tail past the file's last whole block may wait in the direct
    ///     buffer before it is written (`CaptureTailSchedule`; `flush` writes it at once).
    ///   - retryMillis: the backoff after a failed write (`DecryptedCaptureConfiguration`).
    ///   - historyFirst: the flow writer's standing on the same disk (`FlowWriter.historyFirst`):
    ///     no room is taken while it holds the capture (`HistoryFirst`); nil, never held.
    ///   - onHealthChange: told when writes start failing and when they resume (the session says
    ///     one line each time, as for flows and content).
    public init(path: String, rotation: CaptureRotation = CaptureRotation(), lingerMillis: Int = 50, directWrites: Bool = true,
                directBufferBytes: Int = CaptureFileAppender.defaultBufferBytes, tailInterval: Double = 1,
                retryMillis: (base: Int, cap: Int) = (1_000, 8_000), historyFirst: HistoryFirstSignal? = nil,
                onHealthChange: (@Sendable (WriteHealth.Change, DecryptedCaptureCounters) -> Void)? = nil) {
        recording = Atomic(true)
        var n = 1
        while n < Self.mostNumbered, access(Self.numbered(path, n), F_OK) == 0 { n += 1 }
        self.path = Self.numbered(path, n)
        let closedHandler = closedHandler
        let queue = BoundedWriterQueue<DecryptedCaptureThread>(batch: DecryptedCaptureBatch(), counters: DecryptedCaptureCounters(),
                                                               lingerMillis: lingerMillis, lingerAfterWrite: false)
        self.queue = queue
        var configuration = DecryptedCaptureConfiguration(firstPath: path)
        configuration.rotation = rotation
        configuration.directWrites = directWrites
        configuration.directBufferBytes = directBufferBytes
        configuration.tailInterval = tailInterval
        (configuration.retryBaseMillis, configuration.retryCapMillis) = retryMillis
        configuration.historyFirst = historyFirst
        let hooks = DecryptedCaptureHooks(update: { queue.updateCounters($0) },
                                          health: { change, counters in onHealthChange?(change, counters) },
                                          closed: { closedHandler.handler.withLock { $0 }?() })
        // The writer is made on its thread, which owns the files from then on; making it opens
        // none and cannot throw, so neither can this `try!`.
        let settled = configuration
        try! queue.startThread(named: "tv decrypted capture") { DecryptedCaptureThread(configuration: settled, hooks: hooks) }
    }

    deinit { queue.stop() }

    /// Runs `handler` (on the writer's thread) whenever a file is closed before the session
    /// ends: a rotation or a failed write (the session's retention pass, which may delete it).
    public func setClosedHandler(_ handler: (@Sendable () -> Void)?) {
        closedHandler.handler.withLock { $0 = handler }
    }

    /// What was queued, dropped, written and not saved so far.
    public var counters: DecryptedCaptureCounters { queue.read { counters, _, _ in counters } }

    /// Why the last write failed, when one did (one sentence).
    public var failure: String? { counters.lastFailure?.message }

    /// How the file is written (O_DIRECT or buffered), for `tv status`.
    public var writeMode: CaptureWriteMode? { counters.writeMode }

    /// Writes what is queued and the held-back tail past the file's last whole block, and waits
    /// for both: every byte queued before the call is then in the file (tests, a reading command).
    public func flush() { _ = flush(waitingUntil: .distantFuture) }

    /// `flush` that waits no later than `deadline` (`LiveSessionFlush`): true when everything
    /// queued before the call, the held tail too, is in the file; false when the deadline passed
    /// first (the writer goes on) or the capture stopped (its file was closed whole).
    public func flush(waitingUntil deadline: DispatchTime) -> Bool {
        guard queue.flush(waitingUntil: deadline) else { return false }
        return queue.perform({ $0.writeTail() }, waitingUntil: deadline)
    }

    /// `tv captures rotate`: writes what is queued into the file being written and closes it
    /// whole; the next opens with the next packet.
    /// - Returns: the name of the file closed (nil: none was open: no inspected packet since the
    ///   start or the last rotation, or writes fail), and whether the capture still runs.
    public func rotate() -> (closed: String?, running: Bool) {
        guard isRecording else { return (nil, false) }
        _ = queue.flush(waitingUntil: .now() + 10)
        let closed = Mutex<String?>(nil)
        let ran = queue.perform({ writer in
            let name = writer.rotate()
            closed.withLock { $0 = name }
        }, waitingUntil: .now() + 10)
        return (closed.withLock { $0 }, ran)
    }

    /// Writes what is queued, closes the file and ends the thread.
    public func stop() {
        recording.store(false, ordering: .relaxed)
        queue.stop()
    }

    // MARK: ChunkRecorder

    public var isRecording: Bool { recording.load(ordering: .relaxed) }

    public func inspectedFlowBegan(flow: UInt64, client: FlowEnds.End, server: FlowEnds.End, startMicros: Int64) {
        guard let c = PacketAddress(client.address), let s = PacketAddress(server.address) else { return }
        let clientEnd = PacketEndpoint(c, client.port), serverEnd = PacketEndpoint(s, server.port)
        _ = queue.enqueue(.began(flow: flow, client: clientEnd, server: serverEnd, startMicros: startMicros,
                                 layout: DecryptedCaptureLayout(flow: flow, client: clientEnd, server: serverEnd)))
    }

    /// Always true: the capture has no per-flow budget.
    @discardableResult
    public func record(flow: UInt64, direction: Direction, offsetMicros: Int64, bytes: UnsafeRawBufferPointer) -> Bool {
        _ = queue.enqueue(.data(flow: flow, direction: direction, timeMicros: offsetMicros, bytes: bytes))
        return true
    }

    public func flowEnded(flow: UInt64, end: StreamEnd) {
        _ = queue.enqueue(.ended(flow: flow, end: end, timeMicros: EngineClock.wallMicros()))
    }

    public func flowEnded(flow: UInt64) { flowEnded(flow: flow, end: .closedByClient) }
}

/// What a decrypted capture runs when a file closes, set after the capture is made (the session's
/// retention comes later), for the writer's thread to read.
final class ClosedHandler: Sendable {
    let handler = Mutex<(@Sendable () -> Void)?>(nil)
}
