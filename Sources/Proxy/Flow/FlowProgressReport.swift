/// When an open flow's moving bytes are told to the sink again (pure; one per flow, held by its
/// machine): at most once per `intervalMicros` while bytes move, so a long download or a
/// websocket shows its totals and last activity in `tv flows` and `tv top` while it lasts, and
/// a session killed mid-transfer leaves the flow's row within that interval of what moved (the
/// next start closes it as interrupted at its last recorded activity). Bytes that moved after
/// the last report and then stopped (a burst that filled the sockets' buffers, then a slow
/// reader) are told once the relay has been quiet for the interval (`trailing`, the driver's
/// timer): a trial saw 5.7 MiB read and 112 KiB recorded for as long as the download lasted.
/// Nothing is said while nothing moves. Each report is one flow upsert on the writer's batch: a
/// thousand busy flows cost 500 upserts a second, against a writer that takes tens of thousands.
struct FlowProgressReport: Sendable, Equatable {
    /// The shortest time between two reports of one flow (µs).
    static let intervalMicros: Int64 = 2_000_000
    /// The same, for the driver's monotonic timer (ns).
    static let intervalNanos = UInt64(intervalMicros) * 1_000

    /// When the flow was last told (µs since the epoch): its start, then each report.
    private(set) var lastMicros: Int64
    /// Bytes moved since the last report.
    private(set) var unreported = false

    init(startMicros: Int64) { lastMicros = startMicros }

    /// Whether bytes moving at `now` (µs) are due to be told; true sets the next due time.
    @inline(__always)
    mutating func isDue(atMicros now: Int64) -> Bool {
        guard now - lastMicros >= Self.intervalMicros else {
            unreported = true
            return false
        }
        lastMicros = now
        unreported = false
        return true
    }

    /// Whether bytes that moved since the last report are still to be told, now that the relay
    /// has been quiet for the interval (at `now`, µs); true counts as a report.
    mutating func trailing(atMicros now: Int64) -> Bool {
        guard unreported else { return false }
        lastMicros = now
        unreported = false
        return true
    }
}
