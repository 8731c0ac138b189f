/// Says a repeated event at most once per interval, with how many times it happened since it was
/// last said: tv's notices about refused connections are one line per address (or per cause) per
/// interval, never one per connection. A pure value; the time is monotonic ns, as each loop read
/// it (so not always in order).
struct NoticeThrottle: Sendable, Equatable {
    /// The shortest time between two notices, in ns.
    let intervalNanos: UInt64
    /// When the last notice was said (nil: never).
    private(set) var lastSaid: UInt64?
    /// Events since the last notice that were not said.
    private(set) var unsaid: UInt64 = 0

    init(intervalNanos: UInt64 = NoticeThrottle.defaultIntervalNanos) {
        self.intervalNanos = intervalNanos
    }

    /// One minute.
    static let defaultIntervalNanos: UInt64 = 60_000_000_000

    /// The event happened at `now`. Returns how many events the notice to say now covers (this
    /// one and those not said before it), or nil when the last notice is too recent.
    mutating func note(at now: UInt64) -> UInt64? {
        unsaid &+= 1
        // Loops read the clock at different moments: a `now` a little before `lastSaid` is
        // within the interval too.
        if let lastSaid, now < lastSaid &+ intervalNanos { return nil }
        lastSaid = now
        defer { unsaid = 0 }
        return unsaid
    }

    /// Whether the last notice is older than the interval at `now` (its memory can go).
    func isStale(at now: UInt64) -> Bool {
        guard let lastSaid else { return true }
        return now >= lastSaid &+ intervalNanos
    }
}
