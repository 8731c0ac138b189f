/// The limits retention enforces: the user's three (`history.maxAge`, `captures.maxBytes`,
/// `captures.maxAge`; nil is "no limit") and content's own (its expiry and the fixed ceiling).
public struct StorageLimits: Sendable, Equatable {
    /// Flows that started longer ago than this (µs) are deleted with their packets, names,
    /// exchanges and content; nil keeps the history for ever.
    public var historyMaxAge: Int64?
    /// The capture files together may occupy at most this many bytes; nil: no size limit.
    public var capturesMaxBytes: Int64?
    /// A capture file last written longer ago than this (µs) is deleted; nil: no expiry.
    public var capturesMaxAge: Int64?
    /// How long decrypted content lives (`content.expiry`).
    public var contentExpiry: ContentExpiry
    /// The fixed ceiling on decrypted content (tests pass a small one).
    public var contentCeiling: Int64

    /// The factory values: history 30 days, captures 2 GiB (`2GB` as settings read it) and 30 days,
    /// content as ContentExpiry's.
    public static let factory = StorageLimits(historyMaxAge: 30 * 86_400_000_000, capturesMaxBytes: 2 << 30,
                                              capturesMaxAge: 30 * 86_400_000_000)

    public init(historyMaxAge: Int64?, capturesMaxBytes: Int64?, capturesMaxAge: Int64?,
                contentExpiry: ContentExpiry = .default, contentCeiling: Int64 = ContentRetentionPlanner.ceilingBytes) {
        self.historyMaxAge = historyMaxAge
        self.capturesMaxBytes = capturesMaxBytes
        self.capturesMaxAge = capturesMaxAge
        self.contentExpiry = contentExpiry
        self.contentCeiling = contentCeiling
    }
}

/// What the planner is told exists.
public struct StorageInventory: Sendable, Equatable {
    /// The start time (µs) of the oldest flow row, nil when the history is empty.
    public var oldestFlowStart: Int64?
    /// Every capture file (and every `captures` row whose file is missing is not listed: its
    /// packet rows already say the bytes are gone).
    public var captures: [CaptureFileFacts]
    /// The decrypted content's segments, as `ContentRetentionPlanner` reads them.
    public var contentSegments: [SegmentFacts]

    public init(oldestFlowStart: Int64?, captures: [CaptureFileFacts] = [], contentSegments: [SegmentFacts] = []) {
        self.oldestFlowStart = oldestFlowStart
        self.captures = captures
        self.contentSegments = contentSegments
    }
}
