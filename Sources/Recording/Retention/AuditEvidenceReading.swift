import FlowStore

extension AuditEvidence {
    /// What audit sessions hold now (issue 23), read over `database` (the flow database): their
    /// flows and the capture files holding those flows' packets; `.unknown` when the history
    /// cannot say (then retention deletes nothing that could be evidence); `.none` when no
    /// session holds anything.
    /// - Parameter includingCarried: also the flows carried into sessions (`AuditStore.evidence`).
    public static func read(from database: SQLiteDatabase, includingCarried: Bool = false) -> AuditEvidence {
        let ids: AuditEvidenceIDs
        do { ids = try AuditStore.evidence(in: database, includingCarried: includingCarried) } catch { return .unknown }
        return ids.flows.isEmpty && ids.captures.isEmpty ? .none : .known(captures: ids.captures, flows: ids.flows)
    }
}
