/// One page of flows, newest first, and the cursor for the page after it.
public struct FlowPage: Sendable, Equatable {
    /// At most `FlowQuery.limit` flows, ordered by start time then id, both descending.
    public var flows: [FlowRecord]
    /// The text to pass as `FlowQuery.after` for the next page; nil when this page is the last.
    public var nextCursor: String?
    /// Rows of this page left out because they hold values no writer writes (they count
    /// towards the page's limit, so paging goes on past them).
    public var damaged: [DamagedRow] = []

    /// A page of `flows` and the cursor of the next one (nil when none follows).
    public init(flows: [FlowRecord], nextCursor: String?) {
        self.flows = flows
        self.nextCursor = nextCursor
    }
}
