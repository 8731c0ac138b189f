/// When a loop hands the heap's free pages back to the kernel (`malloc_trim(0)`) after idle
/// connections released their TLS buffers (`IdleBufferPolicy`).
///
/// A burst of handshakes leaves OpenSSL's freed read buffers (~66 KiB each) and handshake
/// leftovers as holes between the long-lived `SSL` objects: glibc returns only the top of an
/// arena by itself, so those pages stay resident while the connections idle. Measured on the
/// harness's idle row (1,000 idle TLS connections, reverse mode): `malloc_trim(0)` called through
/// gdb 2 s after they were up freed 0.16–0.39 MiB of anonymous memory; with this policy (and the
/// boxed ServerHello parser) the row went 35.8 → 34.4 KiB per connection, and the process's CPU in
/// those 2 s stayed within one 10 ms tick (PERFORMANCE.md, i26-mem). The trim walks every
/// arena's free chunks, so it runs at most once per `minimumInterval` per loop, a short
/// `settleNanos` after the first release since the last trim (releases come in waves: every
/// connection of a burst goes quiet about a second after its last byte).
struct HeapTrimPolicy: Equatable, Sendable {
    /// The wait after the first release before trimming (ns): 250 ms, so one trim covers a wave.
    static let settleNanos: UInt64 = 250_000_000
    /// The shortest time between two trims of one loop (ns): 1 s.
    static let minimumInterval: UInt64 = 1_000_000_000

    /// When the last trim ran (monotonic ns; 0: never).
    private(set) var lastTrim: UInt64 = 0
    /// When the trim now waited for is due (0: none waited for).
    private(set) var dueAt: UInt64 = 0

    /// A connection of this loop released buffers at `now`: the deadline to arm a timer at, or
    /// nil when a trim is already due (its timer armed).
    mutating func released(at now: UInt64) -> UInt64? {
        guard dueAt == 0 else { return nil }
        let earliest = lastTrim == 0 ? 0 : lastTrim &+ Self.minimumInterval
        dueAt = max(now &+ Self.settleNanos, earliest)
        return dueAt
    }

    /// The timer fired at `now`: true when the trim runs now (then it is recorded as done); false
    /// for a stale or early timer.
    mutating func fire(at now: UInt64) -> Bool {
        guard dueAt != 0, now >= dueAt else { return false }
        dueAt = 0
        lastTrim = now
        return true
    }
}
