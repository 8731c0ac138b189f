/// What the reading commands ask of a flow history, whichever backend holds it: this data
/// folder's SQLite file (`FlowStore`) or the shared store on PostgreSQL (`SharedFlowHistory`).
public protocol FlowHistory: Sendable {
    /// One newest-first page of flows matching `query` and the cursor of the next.
    /// - Throws: `FlowStoreError` (`.badCursor` for a cursor this history did not give out).
    func flows(_ query: FlowQuery) throws -> FlowPage
    /// The flow with `id`, or nil.
    /// - Throws: `FlowStoreError` (the shared store: `.ambiguousSharedFlow` when several
    ///   instances have that id and none was named).
    func flow(id: Int64) throws -> FlowRecord?
    /// How many flows match `query`'s filters.
    func count(_ query: FlowQuery) throws -> Int
    /// Closes the connection.
    func close()
}

extension FlowStore: FlowHistory {}
