import Synchronization

/// `--busy-poll`'s counts of one event loop, published for `tv status`/`tv diag` readers:
/// written only by its loop after each spin (relaxed atomics, no contention), read by anyone.
public final class BusyPollCounts: Sendable {
    /// Spins that ended without finding work (the loop then slept).
    public let foundNothing = Atomic<UInt64>(0)
    /// Spins that found work before their window ran out.
    public let foundWork = Atomic<UInt64>(0)
    /// The loop's window after its last wait, in ns.
    public let windowNanos = Atomic<UInt64>(0)

    public init() {}

    /// Stores `policy`'s counts and window (the loop's thread only).
    func publish(_ policy: BusyPollPolicy) {
        foundNothing.store(policy.pollsFoundNothing, ordering: .relaxed)
        foundWork.store(policy.pollsFoundWork, ordering: .relaxed)
        windowNanos.store(policy.windowNanos, ordering: .relaxed)
    }
}
