/// Whether an event loop keeps polling instead of sleeping in `epoll_wait` (`tv run
/// --busy-poll MICROS`; off by default), as HAProxy's `busy-polling` option does.
///
/// On a virtual machine, waking a thread that sleeps on another vCPU costs an inter-processor
/// interrupt and a VM exit on the CPU that wakes it. A loop that has just found work polls with a
/// zero timeout for up to `spinNanos` before it sleeps, so the next event usually finds it
/// running. Measured here (PERFORMANCE.md, the h2 row): 200 µs lifted h2 through tv from ~0.79×
/// to ~0.9× of direct at ~40 % more proxy CPU per request. A loop with no work does not spin:
/// an idle proxy still sleeps.
public struct BusyPollPolicy: Sendable, Equatable {
    /// How long to keep polling after a wait that found events, in ns (0: never).
    public let spinNanos: UInt64

    /// - Parameter micros: 0 (off) to `maximumMicros`.
    public init(micros: Int) {
        spinNanos = UInt64(max(0, min(micros, Self.maximumMicros))) * 1_000
    }

    /// The largest spin accepted: 1,000 µs.
    public static let maximumMicros = 1_000

    /// Until when (monotonic ns) the loop polls with a zero timeout before it blocks; nil when it
    /// blocks at once: spinning is off, the previous wait found nothing (idle), or the loop would
    /// not block anyway (`timeoutMillis` 0).
    /// - Parameter now: when the previous wait returned, so the spin counts from when the work
    ///   was found (the time spent handling it comes out of the spin).
    public func spinUntil(now: UInt64, previousWaitFoundEvents: Bool, timeoutMillis: Int32) -> UInt64? {
        guard spinNanos > 0, previousWaitFoundEvents, timeoutMillis != 0 else { return nil }
        return now &+ spinNanos
    }
}
