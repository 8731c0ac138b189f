import Synchronization

/// What the capture writer did, for `tv status` (read under a mutex from any thread).
public struct CaptureWriterCounters: Sendable, Equatable {
    /// Packets written to a file (and counted for their flow).
    public var packetsWritten: UInt64 = 0
    /// Packets that reached the writer but could not be written (the file or the database failed).
    public var packetsFailed: UInt64 = 0
    /// Packets held back now until their connection's client secret is in the file
    /// (`CaptureHoldPolicy`).
    public var packetsHeld: UInt64 = 0
    /// Files opened by this writer.
    public var filesOpened: UInt64 = 0
    /// The file being written now, nil when none is open.
    public var recordingSequence: Int64?
    /// Packets in the file being written now (`packetsWritten` is the writer's, across its files:
    /// after a rotation `tv status` read "capture 12 recording, 5,651 packets written" of a file
    /// holding none: a trial).
    public var recordingPackets: Int64 = 0
    /// The files this writer opened and kept, in order (`tv exec`'s closing lines): not always
    /// a range, since two sessions writing at once take numbers in turn. A last file removed
    /// at the stop for holding no packet is not among them.
    public var sequencesOpened: [Int64] = []
    /// Last files removed at the stop because no packet went into them (0 or 1).
    public var emptyFilesRemoved: UInt64 = 0
    /// The last failure, one sentence; nil when the last write succeeded.
    public var lastFailure: String?
    /// The first failure of the writer's life, one sentence, kept after writes succeed again:
    /// the session's closing line says why packets were not saved (a full disk's sentence was
    /// gone by then: a trial).
    public var firstFailure: String?
    /// How the file being written (else the last one) is written: O_DIRECT or buffered.
    public var writeMode: CaptureWriteMode?

    public init() {}
}

/// The writer's counters, shared by the writer thread (which writes them) and `CaptureWriter`
/// (which reads them for `tv status`).
final class CaptureCountersBox: Sendable {
    let state = Mutex(CaptureWriterCounters())
}
