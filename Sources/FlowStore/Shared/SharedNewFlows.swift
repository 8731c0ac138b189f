/// Which flows of a batch the shared store has no row of yet, as one writer connection knows it
/// (pure): the flows it wrote while they were open have rows; every other flow is new, since
/// tv's events give each flow its records from `.opened` (or `.closed` at once) to `.closed`
/// and none after, and flow ids are never reused by an instance. New flows are copied straight
/// into `flows` (`SharedStaging.copyNewFlowsSQL`), the others upserted.
///
/// A flow taken for new that has a row after all (written by an earlier connection of this
/// instance, or a batch retried after a COMMIT whose answer was lost) fails that COPY, which
/// is rolled back to its savepoint and upserted instead: a wrong answer costs time, never a row.
/// Bounded by the flows open at once.
struct SharedNewFlows {
    /// Flows written while open, whose close has not been written yet.
    private(set) var writtenOpen: Set<Int64> = []

    /// Whether the store has no row of flow `id` as far as this connection knows.
    func isNew(_ id: Int64) -> Bool { !writtenOpen.contains(id) }

    /// After a batch committed: its open flows now have rows; its closed ones are done.
    mutating func committed(_ flows: [FlowRecord]) {
        for flow in flows {
            if flow.duration == nil { writtenOpen.insert(flow.id) } else { writtenOpen.remove(flow.id) }
        }
    }
}
