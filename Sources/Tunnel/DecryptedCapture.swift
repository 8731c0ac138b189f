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

    /// `path` with `-N` before its extension: the name taken when `path` exists (another
    /// session started in the same second). Pure.
    static func numbered(_ path: String, _ n: Int) -> String {
        guard n > 1, path.hasSuffix(".pcapng") else { return path }
        return String(path.dropLast(".pcapng".count)) + "-\(n).pcapng"
    }

    /// Where the file is: the path asked for, or `numbered` when it existed.
    public let path: String
    private let queue: BoundedWriterQueue<DecryptedCaptureThread>
    private let recording: Atomic<Bool>
    private let lastFailure: FailureNote
    private let writeModeNote: WriteModeNote

    /// Creates the file (0600, never over an existing one: `-2`, `-3` … after the name when it
    /// exists; O_DIRECT where the file system allows it, `CaptureFileAppender`), locks it for as
    /// long as it is written (an exclusive flock(2), as the packet capture's files:
    /// `CaptureFolder.isRecording` tells it from any process) and starts the writer thread. A
    /// session that ends without an inspected flow leaves no file.
    /// - Parameter tailInterval: seconds the tail past the file's last whole block may wait in
    ///   the direct buffer before it is written (`CaptureTailSchedule`; `flush` writes it at once).
    /// - Throws: `FileWriteError` when the file cannot be created.
    public init(path: String, lingerMillis: Int = 50, directWrites: Bool = true,
                directBufferBytes: Int = CaptureFileAppender.defaultBufferBytes, tailInterval: Double = 1) throws {
        recording = Atomic(true)
        let failure = FailureNote()
        lastFailure = failure
        let mode = WriteModeNote()
        writeModeNote = mode
        let queue = BoundedWriterQueue<DecryptedCaptureThread>(batch: DecryptedCaptureBatch(), counters: DecryptedCaptureCounters(),
                                                               lingerMillis: lingerMillis, lingerAfterWrite: false)
        self.queue = queue
        // The file is made on the writer's thread, which owns it from then on.
        let chosen = Mutex(path)
        try queue.startThread(named: "tv decrypted capture") {
            var n = 1
            while true {
                let candidate = Self.numbered(path, n)
                do throws(Errno) {
                    let output = try CaptureFileAppender(creating: candidate, direct: directWrites, bufferBytes: directBufferBytes)
                    chosen.withLock { $0 = candidate }
                    return DecryptedCaptureThread(output: output, path: candidate, tailInterval: tailInterval,
                                                  failures: { reason in failure.note(reason) }, mode: { now in mode.note(now) })
                } catch {
                    guard error.code == EEXIST, n < 100 else { throw FileWriteError(path: candidate, reason: error.phrase) }
                    n += 1
                }
            }
        }
        self.path = chosen.withLock { $0 }
    }

    deinit { queue.stop() }

    /// What was queued and dropped so far.
    public var counters: DecryptedCaptureCounters {
        var counters = queue.read { counters, _, _ in counters }
        counters.writeMode = writeMode
        return counters
    }

    /// Why the file could not be written, when it could not (one phrase).
    public var failure: String? { lastFailure.value }

    /// How the file is written (O_DIRECT or buffered), for `tv status`.
    public var writeMode: CaptureWriteMode? { writeModeNote.value }

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

/// The writer's last failure, for any thread to read.
final class FailureNote: Sendable {
    private let text = Mutex<String?>(nil)
    func note(_ reason: String) { text.withLock { $0 = reason } }
    var value: String? { text.withLock { $0 } }
}

/// How the writer last wrote the file, for any thread to read.
final class WriteModeNote: Sendable {
    private let mode = Mutex<CaptureWriteMode?>(nil)
    func note(_ now: CaptureWriteMode) { mode.withLock { $0 = now } }
    var value: CaptureWriteMode? { mode.withLock { $0 } }
}
