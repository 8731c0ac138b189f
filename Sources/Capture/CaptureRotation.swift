/// When the file being written is closed and the next one opened (settings `capture.rotateBytes`
/// and `capture.rotateAge`). Pure.
public struct CaptureRotation: Sendable, Equatable {
    /// Close the file once it holds this many bytes or more; nil: no size limit.
    public var maximumBytes: Int64?
    /// Close the file once its first packet is this many µs old; nil: no age limit.
    public var maximumAgeMicros: Int64?

    public init(maximumBytes: Int64? = nil, maximumAgeMicros: Int64? = nil) {
        self.maximumBytes = maximumBytes
        self.maximumAgeMicros = maximumAgeMicros
    }

    /// Whether a file of `bytes` bytes holding `packets` packets, the first written at `startedMicros`, is
    /// due for rotation at `nowMicros`. A file without packets is never rotated (so an idle
    /// session does not make a file per interval), and neither is one with no limit reached.
    public func isDue(bytes: Int64, packets: Int64, startedMicros: Int64, nowMicros: Int64) -> Bool {
        guard packets > 0 else { return false }
        if let maximumBytes, maximumBytes > 0, bytes >= maximumBytes { return true }
        if let maximumAgeMicros, maximumAgeMicros > 0, nowMicros - startedMicros >= maximumAgeMicros { return true }
        return false
    }

    /// When the open file will be due by age (µs since the epoch), nil when no age limit.
    public func ageDeadline(startedMicros: Int64) -> Int64? {
        guard let maximumAgeMicros, maximumAgeMicros > 0 else { return nil }
        return startedMicros + maximumAgeMicros
    }
}
