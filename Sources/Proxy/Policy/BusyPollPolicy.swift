/// Whether an event loop keeps polling instead of sleeping in `epoll_wait` (`tv run
/// --busy-poll MICROS`; off by default), as HAProxy's `busy-polling` option does, with a window
/// that adapts to the gaps between events as Linux's `haltpoll` cpuidle governor and KVM's
/// `halt_poll_ns` adapt theirs (Documentation/virt/guest-halt-polling.rst).
///
/// On a virtual machine, waking a thread that sleeps on another vCPU costs an inter-processor
/// interrupt and a VM exit on the CPU that wakes it. A loop that has just found work polls with a
/// zero timeout for up to `windowNanos` before it sleeps, so the next event usually finds it
/// running. A fixed 200 µs window lifted h2 through tv from ~0.79× to ~0.92× of direct at +53 %
/// proxy CPU per request (PERFORMANCE.md, the h2 row): most of that CPU was spins that ran their
/// whole window and slept anyway. So the window follows what the waits see:
/// - a wait that slept and found an event within `maximumNanos` of when the loop began to wait
///   (a longer spin would have caught it) doubles the window (from `growStartNanos`), up to the
///   maximum;
/// - a wait that found nothing within `maximumNanos` (spinning cannot help) halves it; below
///   `growStartNanos` it becomes 0 and the loop sleeps at once until a short gap is seen again;
/// - a spin that found work keeps it.
/// A loop with no work does not spin: an idle proxy still sleeps. Pure: the loop reports each
/// wait (`record`) and asks before the next (`spinUntil`).
public struct BusyPollPolicy: Sendable, Equatable {
    /// The largest window, in ns (`--busy-poll MICROS`; 0: never poll).
    public let maximumNanos: UInt64
    /// The window now, in ns: 0 … `maximumNanos`.
    public private(set) var windowNanos: UInt64
    /// Spins that ended without finding work (the loop then slept): the CPU spent for nothing.
    public private(set) var pollsFoundNothing: UInt64 = 0
    /// Spins that found work before their window ran out.
    public private(set) var pollsFoundWork: UInt64 = 0

    /// The window a grow starts from when it was 0: 10 µs (haltpoll's is 50 µs; a wake on this
    /// proxy's path is a few µs to tens of µs apart).
    public static let growStartNanos: UInt64 = 10_000

    /// The largest window accepted: 1,000 µs.
    public static let maximumMicros = 1_000

    /// - Parameter micros: the largest window, 0 (off) to `maximumMicros`; the window starts there.
    public init(micros: Int) {
        maximumNanos = UInt64(max(0, min(micros, Self.maximumMicros))) * 1_000
        windowNanos = maximumNanos
    }

    /// Whether the loop reads the clock around its waits for `record` (busy polling is on).
    public var isOn: Bool { maximumNanos > 0 }

    /// Until when (monotonic ns) the loop polls with a zero timeout before it blocks; nil when it
    /// blocks at once: polling is off, the window is 0, the previous wait found nothing (idle),
    /// or the loop would not block anyway (`timeoutMillis` 0).
    /// - Parameter now: when the loop begins to wait.
    public func spinUntil(now: UInt64, previousWaitFoundEvents: Bool, timeoutMillis: Int32) -> UInt64? {
        guard windowNanos > 0, previousWaitFoundEvents, timeoutMillis != 0 else { return nil }
        return now &+ windowNanos
    }

    /// What one wait that `spinUntil` was asked about saw.
    public enum Wait: Sendable, Equatable {
        /// The loop did not spin, or the spin ended empty, and it then slept: `foundEvents` after
        /// `nanos` from when the loop began to wait (a timer may end a sleep with none).
        case slept(spun: Bool, foundEvents: Bool, nanos: UInt64)
        /// The spin found events before its window ran out.
        case spinFound
    }

    /// Adapts the window to one wait that began after work was found (the waits `spinUntil`
    /// could have answered with a spin: previous wait found events, a timeout other than 0) and
    /// counts its spin. Other waits (idle, or not blocking) must not be recorded.
    public mutating func record(_ wait: Wait) {
        guard isOn else { return }
        switch wait {
        case .spinFound:
            pollsFoundWork &+= 1
        case let .slept(spun, foundEvents, nanos):
            if spun { pollsFoundNothing &+= 1 }
            if foundEvents && nanos <= maximumNanos {
                windowNanos = min(maximumNanos, windowNanos == 0 ? Self.growStartNanos : windowNanos * 2)
            } else if nanos > maximumNanos {
                let half = windowNanos / 2
                windowNanos = half < Self.growStartNanos ? 0 : half
            }
        }
    }
}
