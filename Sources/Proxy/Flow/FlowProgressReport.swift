/// When an open flow's moving bytes are told to the sink again (pure; one per flow, held by its
/// machine): at most once per `intervalMicros` while bytes move, so a long download or a
/// websocket shows its totals and last activity in `tv flows` and `tv top` while it lasts, and
/// a session killed mid-transfer leaves the flow's row within that interval of what moved (the
/// next start closes it as interrupted at its last recorded activity). Nothing is said while
/// nothing moves. Each report is one flow upsert on the writer's batch: a thousand busy flows
/// cost 500 upserts a second, against a writer that takes tens of thousands.
struct FlowProgressReport: Sendable, Equatable {
    /// The shortest time between two reports of one flow (µs).
    static let intervalMicros: Int64 = 2_000_000

    /// When the flow was last told (µs since the epoch): its start, then each report.
    private(set) var lastMicros: Int64

    init(startMicros: Int64) { lastMicros = startMicros }

    /// Whether bytes moving at `now` (µs) are due to be told; true sets the next due time.
    @inline(__always)
    mutating func isDue(atMicros now: Int64) -> Bool {
        guard now - lastMicros >= Self.intervalMicros else { return false }
        lastMicros = now
        return true
    }
}
