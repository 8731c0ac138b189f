import Recording

/// What one retention pass (or delete-everything) removed, across the three stores.
public struct StorageReport: Sendable, Equatable {
    /// Flow rows deleted (with everything that hangs off them, counted below).
    public var flowsDeleted = 0
    /// Packet rows of those flows deleted.
    public var packetsDeleted = 0
    /// Exchange rows (issue 16's `exchanges`) of those flows deleted.
    public var exchangesDeleted = 0
    /// Content index rows of those flows deleted.
    public var flowContentRowsDeleted = 0
    /// Server certificates (`certificates` rows) no remaining flow's chain names, deleted.
    public var certificatesDeleted = 0
    /// Names (`host_names` rows) last seen before the history's cutoff, deleted.
    public var namesDeleted = 0
    /// Capture files deleted and the bytes they held.
    public var captureFilesDeleted = 0
    public var captureBytesFreed: Int64 = 0
    /// Decrypted captures (`captures/decrypted-*.pcapng`) deleted and the bytes they held.
    public var decryptedCapturesDeleted = 0
    public var decryptedCaptureBytesFreed: Int64 = 0
    /// delete-everything: the decrypted capture a running session writes, spared (its name).
    public var sparedDecryptedCapture: String?
    /// Packet rows pointing into deleted capture files, now marked: their bytes are gone.
    public var packetsMarkedGone = 0
    /// The content sweep's own report (expiry, ceiling, unreferenced segments).
    public var content = ContentSweepReport()
    /// The capture file being recorded, spared.
    public var sparedRecording: Int?
    /// Set when the captures are still over their size limit, and why.
    public var capturesStillOver: RetentionPlan.CapturesStillOver?

    /// delete-everything: flows and capture files kept because audit sessions hold them as
    /// evidence (deleted with their session, `tv audit delete`, then by retention).
    public var evidenceFlowsKept = 0
    public var evidenceCapturesKept = 0
    /// delete-everything: decrypted captures kept because they meet an audit session's span.
    public var evidenceDecryptedCapturesKept = 0
    /// delete-everything: flows still open (a running session's), which it leaves to their writer.
    public var openFlowsKept = 0
    /// A limits pass that deleted flows by age: flows older than the cutoff it kept, as audit
    /// evidence (closed ones `RetentionPlan.exemptFlows` named) and still open (a session's).
    public var evidenceFlowsPastAge = 0
    public var openFlowsPastAge = 0
    /// delete-everything: remembered pinning clients and pinned hosts forgotten (`tv pinned`).
    public var pinsForgotten = 0
    /// delete-everything: bytes the database's write-ahead log still holds after it tried to
    /// empty it (0: emptied); they may include copies of deleted rows.
    public var walBytesLeft: Int64 = 0
    /// Packet capture files whose TLS secrets were blanked for being older than content.expiry.
    public var captureSecretsBlanked = 0

    public init() {}

    /// True when the pass deleted nothing: an automatic pass then says nothing.
    public var deletedNothing: Bool {
        flowsDeleted == 0 && packetsDeleted == 0 && exchangesDeleted == 0 && flowContentRowsDeleted == 0 && namesDeleted == 0
            && certificatesDeleted == 0 && pinsForgotten == 0
            && captureFilesDeleted == 0 && decryptedCapturesDeleted == 0 && packetsMarkedGone == 0 && content.rowsDeleted == 0 && content.filesDeleted == 0
            && captureSecretsBlanked == 0
    }
}
