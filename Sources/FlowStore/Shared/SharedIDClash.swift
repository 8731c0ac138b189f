import FlowTerms

/// A flow whose id the shared store already holds for another flow of this instance: the
/// store's row is kept, and the flow, its request rows and its program stay in this data folder
/// only. Ids go on past the store's (`SharedIDFloor`), but a session whose store does not answer
/// at start knows only the mark beside the database (`StoreHighestMark`); when the database and
/// that mark are both put back from an older copy, the flows made before the store answers take
/// ids it holds, and their upserts replaced the shared rows of the flows the copy had lost (a
/// trial's note: restored folder, store down at start, waiting flows written over older rows).
///
/// A flow's start never changes, so the upsert updates a row only when the starts agree
/// (`sameFlow`); a batch whose upsert changed fewer rows than it sent asks the store which of
/// its flows it holds with another start (`find`), and the writer keeps those out of this and
/// every later batch (`SharedIDFloor.noteClashes`). Nothing is asked while every row changes,
/// the rule.
enum SharedIDClash {
    /// The condition of `ON CONFLICT (instance_id, id) DO UPDATE`: the same flow, by its start.
    static let sameFlow = " WHERE flows.start_time = EXCLUDED.start_time"

    /// The ids among `sent` whose row in the store (`stored`: id → start, µs) has another start.
    /// Pure. An id the store has no row of is not a clash (the upsert inserted it).
    static func clashing(_ sent: [FlowRecord], stored: [Int64: Int64]) -> Set<Int64> {
        Set(sent.filter { flow in stored[flow.id].map { $0 != flow.startTime } ?? false }.map(\.id))
    }

    /// The ids among `sent` the store holds for `instance` with another start.
    /// - Throws: `FlowStoreError` from the shared store.
    static func find(among sent: [FlowRecord], on connection: PGConnection, instance: InstanceIdentity) throws -> Set<Int64> {
        guard !sent.isEmpty else { return [] }
        let list = "{" + sent.map { String($0.id) }.joined(separator: ",") + "}"
        let rows = try connection.query("SELECT id, start_time FROM flows WHERE instance_id = ? AND id = ANY(?::bigint[])",
                                        [.text(instance.id), .text(list)])
        var stored: [Int64: Int64] = [:]
        for row in rows {
            if case let .integer(id) = row[0], case let .integer(start) = row[1] { stored[id] = start }
        }
        return clashing(sent, stored: stored)
    }
}
