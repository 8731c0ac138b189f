/// The flow events waiting for the flow writer: at most `capacity`; one more is dropped and
/// counted (`FlowWriterCounters.dropped`), as is every event offered once the writer stops.
struct PendingFlowEvents: WriterBatch {
    /// Events held at most (at least 1).
    let capacity: Int
    private(set) var events: [FlowEvent] = []

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    var count: Int { events.count }

    /// Flow events are written when the writer has gathered them (its linger), never earlier.
    var isWorthWritingNow: Bool { false }

    /// - Returns: whether `event` was queued.
    mutating func add(_ event: consuming FlowEvent, refusing: Bool, counters: inout FlowWriterCounters) -> (added: Int, outcome: Bool) {
        guard !refusing, events.count < capacity else {
            counters.dropped += 1
            return (0, false)
        }
        events.append(event)
        return (1, true)
    }

    /// Keeps up to 16,384 events' room (128 KiB: an event is one reference, `FlowEvent` is
    /// `indirect`), so a busy writer's batches reuse their storage (the queue swaps two) instead
    /// of growing it by doubling and faulting in fresh pages each time, and one larger burst does
    /// not pin its high-water mark. Decided by the batch's count, not the array's capacity: the
    /// capacity Swift reports is the allocation's usable size, which glibc rounds up to whole
    /// pages when it maps a 128 KiB array (16,767 events) and not when its heap serves it (whether
    /// it maps depends on the process's earlier frees), so a capacity bound kept the storage in one
    /// process and dropped it in another.
    mutating func removeAll() {
        events.removeAll(keepingCapacity: events.count <= 16_384)
    }
}
