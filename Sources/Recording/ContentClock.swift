import Foundation
import Synchronization

/// Where the content store reads the time: µs since the Unix epoch. Injected so tests can move
/// time (expiry, segment age) without waiting.
public protocol ContentClock: Sendable {
    /// Now, in µs since the Unix epoch.
    func now() -> Int64
}

/// The system's wall clock.
public struct SystemContentClock: ContentClock {
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }
}

/// A clock that only moves when told (tests).
public final class ManualContentClock: ContentClock {
    private let time: Mutex<Int64>

    /// - Parameter start: the first reading, µs since the epoch.
    public init(start: Int64) { time = Mutex(start) }

    public func now() -> Int64 { time.withLock { $0 } }

    /// Moves the clock forward by `microseconds`.
    public func advance(by microseconds: Int64) { time.withLock { $0 += microseconds } }

    /// Sets the clock to `microseconds` since the epoch.
    public func set(_ microseconds: Int64) { time.withLock { $0 = microseconds } }
}
