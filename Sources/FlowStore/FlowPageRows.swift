/// The rows read for one `tv flows` page, in page order: a damaged one keeps its place (and its
/// key, for the cursor). Filled by one statement or several (`FlowStore.hostPage`'s windows).
struct FlowPageRows {
    private var rows: [(key: FlowCursor, flow: Result<FlowRecord, DamagedRow>)] = []

    /// Rows read so far.
    var count: Int { rows.count }

    /// Appends every row of `statement` (which selected `FlowRecordColumns.selectList`).
    /// - Throws: `FlowStoreError` from stepping.
    mutating func read(_ statement: SQLiteStatement) throws {
        try statement.forEachRow { row in
            let key = FlowCursor(startTime: row.int64(at: 1), id: row.int64(at: 0))
            do throws(DamagedRow) {
                rows.append((key, .success(try FlowRecordColumns.record(from: row))))
            } catch {
                rows.append((key, .failure(error)))
            }
        }
    }

    /// The first `limit` rows as a page, with the cursor of the next when a row more was read.
    func page(limit: Int) -> FlowPage {
        let more = rows.count > limit
        let shown = rows.prefix(limit)
        var page = FlowPage(flows: [], nextCursor: more ? shown.last.map { $0.key.string } : nil)
        for row in shown {
            switch row.flow {
            case let .success(flow): page.flows.append(flow)
            case let .failure(damage): page.damaged.append(damage)
            }
        }
        return page
    }
}
