/// When a filtered read stops looking: tv web's lists (a filter can arrive in a link, and a
/// regex such as `(a+)+$` backtracks over a long body for longer than anyone waits) and
/// `tv flows|requests --time-limit`. Monotonic (`ContinuousClock`), so a wall-clock step does
/// not end or stretch a search.
public struct FilterDeadline: Sendable, Equatable {
    /// The time allowed, counted from `init`.
    public let limit: Duration
    /// When the time is up.
    public let instant: ContinuousClock.Instant

    /// A deadline `limit` from `start` (now unless given).
    public init(_ limit: Duration, from start: ContinuousClock.Instant = .now) {
        self.limit = limit
        instant = start + limit
    }

    /// Whether the time is up.
    public var hasPassed: Bool { ContinuousClock.now >= instant }
}

/// One row's answer from a `FilterMatcher` given a deadline.
public enum FilterDecision: Sendable, Equatable {
    /// The row matches.
    case match
    /// The row does not match.
    case noMatch
    /// The deadline passed: before the row was looked at (`cut` false: the row is as good as
    /// unread), or while one of its searches ran (`cut` true: its answer is unknown).
    case outOfTime(cut: Bool)
}
