/// Whether a writer's writes reach the disk, and when that changes (pure): the flow writer and
/// the content writer each keep one, feed it every attempt's outcome, and say one line at each
/// change (failing at once, then "recording resumed" when a write succeeds again).
public struct WriteHealth: Sendable, Equatable {
    /// A change worth saying.
    public enum Change: Sendable, Equatable {
        /// The first failure after success (or after start).
        case startedFailing
        /// The first success after failures.
        case resumed
    }

    /// True from a failed attempt until the next successful one.
    public private(set) var failing = false
    /// Attempts (transactions, segment writes) that failed since start.
    public private(set) var failedAttempts = 0

    public init() {}

    /// Records one attempt's outcome.
    /// - Returns: the change to say, or nil when the state stays (success after success, failure
    ///   after failure).
    public mutating func record(succeeded: Bool) -> Change? {
        if !succeeded { failedAttempts += 1 }
        return change(succeeded: succeeded)
    }

    /// Records a write not attempted: the writer held what it had, leaving the room to the flow
    /// history (`HistoryFirst`). Nothing is saved, so it is failing as after a failed attempt,
    /// but no attempt is counted (`failedAttempts` says writes the disk refused).
    /// - Returns: `.startedFailing` after success, else nil.
    public mutating func recordHeld() -> Change? {
        change(succeeded: false)
    }

    private mutating func change(succeeded: Bool) -> Change? {
        defer { failing = !succeeded }
        switch (failing, succeeded) {
        case (false, false): return .startedFailing
        case (true, true): return .resumed
        default: return nil
        }
    }
}
