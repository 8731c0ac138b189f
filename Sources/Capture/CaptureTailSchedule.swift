/// When a capture writer writes its file's held-back tail (`CaptureFileAppender.writeTail`):
/// `interval` after the tail first held bytes not yet in the file, so every packet appended
/// reaches the file within `interval` (plus the writer's linger) even when the capture goes
/// quiet, while a busy capture writes a tail once per `interval` rather than once per batch.
/// Rotation and stop write it as well (`handOver`). Times are monotonic nanoseconds
/// (`DispatchTime.uptimeNanoseconds`).
public struct CaptureTailSchedule: Sendable, Equatable {
    /// How long appended bytes may wait outside the file, nanoseconds.
    public let intervalNanos: UInt64
    /// When bytes not yet in the file were first appended (nil: the file holds every byte).
    public private(set) var pendingSinceNanos: UInt64?

    /// - Parameter interval: seconds (at least 1 ms).
    public init(interval: Double) {
        intervalNanos = UInt64(max(interval, 0.001) * 1e9)
    }

    /// After an append: `pending` bytes are not yet in the file (`CaptureFileAppender.pending`).
    public mutating func appended(pending: Int, nowNanos: UInt64) {
        if pending == 0 {
            pendingSinceNanos = nil
        } else if pendingSinceNanos == nil {
            pendingSinceNanos = nowNanos
        }
    }

    /// When the tail must be written, nil when nothing waits.
    public var deadlineNanos: UInt64? { pendingSinceNanos.map { $0 &+ intervalNanos } }

    /// Whether the tail is due at `nowNanos`.
    public func isDue(nowNanos: UInt64) -> Bool { deadlineNanos.map { nowNanos >= $0 } ?? false }

    /// The tail was written: nothing waits.
    public mutating func wrote() { pendingSinceNanos = nil }

    /// Writing the tail failed at `nowNanos`: the next try is an interval later (never a busy
    /// loop on a full disk).
    public mutating func retryLater(nowNanos: UInt64) { pendingSinceNanos = nowNanos }
}
