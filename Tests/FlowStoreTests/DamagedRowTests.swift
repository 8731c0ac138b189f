import Testing
@testable import FlowStore

/// Issue 12 §9: index values no writer writes are not printed as they are; the row is named as
/// damaged and left out, and the rest reads as usual.
@Suite struct DamagedRowTests {
    /// The values of a well-formed flows row, in `FlowRecordColumns.names` order.
    private func goodValues() -> [SQLiteValue] {
        [.integer(3), .integer(1_000), .integer(2_000), .text("127.0.0.1"), .integer(50_000), .text("192.0.2.1"), .integer(443),
         .text("tcp"), .text("a.test"), .text("sni"), .text("h2"), .text("TLSv1.3"), .text("inspected"), .null,
         .integer(10), .integer(20), .integer(1_000), .null, .text(""), .text(""), .null,
         .null, .null, .text(""), .null, .null, .null, .null, .null, .null, .text(""), .integer(0)]
    }

    private func with(_ column: String, _ value: SQLiteValue) -> [SQLiteValue] {
        var values = goodValues()
        values[FlowRecordColumns.names.firstIndex(of: column)!] = value
        return values
    }

    @Test("a well-formed row reads")
    func goodRow() throws {
        let flow = try FlowRecordColumns.record(goodValues())
        #expect(flow.id == 3 && flow.bytesUp == 10 && flow.status == .inspected && flow.serverPort == 443)
    }

    @Test("each value no writer writes names its row and column", arguments: [
        ("bytes_up", SQLiteValue.integer(-5), "flow 3: bytes_up is -5"),
        ("server_port", .integer(70_000), "flow 3: server_port is 70000"),
        ("client_port", .text("80"), "flow 3: client_port is '80'"),
        ("duration", .integer(-1), "flow 3: duration is -1"),
        ("status", .text("open\u{1B}]0;pwned\u{07}"), #"flow 3: status is 'open\x1b]0;pwned\x07'"#),
        ("transport", .text("sctp"), "flow 3: transport is 'sctp'"),
        ("host_origin", .null, "flow 3: host_origin is NULL"),
        ("host", .integer(7), "flow 3: host is 7"),
        ("packets_up", .integer(-2), "flow 3: packets_up is -2"),
        ("start_time", .real(1.5), "flow 3: start_time is 1.5"),
        ("bytes_down", .blob([1, 2]), "flow 3: bytes_down is a blob of 2 bytes"),
    ])
    func damagedFlowValues(column: String, value: SQLiteValue, summary: String) {
        #expect(throws: DamagedRow(row: "flow 3", column: column, value: value)) { try FlowRecordColumns.record(with(column, value)) }
        #expect(DamagedRow(row: "flow 3", column: column, value: value).summary == summary)
    }

    @Test("the reader's sentence; quotes and bidi controls in text are escaped")
    func sentences() {
        let damage = DamagedRow(row: "turn 3 of flow 7", column: "kept_bytes", value: .integer(-5))
        #expect(damage.sentence == "The row of turn 3 of flow 7 is damaged (kept_bytes is -5); it is left out.")
        #expect(DamagedRow.words(.text("a\u{202E}b\nc")) == #"'a\u{202E}b\nc'"#)
        #expect(DamagedRow.words(.text(String(repeating: "x", count: 80))) == "'" + String(repeating: "x", count: 64) + "…'")
        let error = FlowStoreError.damagedRow(path: "/d/tv.sqlite3", DamagedRow(row: "flow 12", column: "bytes_up", value: .integer(-5)))
        #expect(error.message == "The row of flow 12 in the flow database at /d/tv.sqlite3 is damaged (bytes_up is -5), so tv cannot show it; the other rows are unaffected.")
    }

    @Test("a page leaves a damaged row out, says so, and pages on past it; tv flow ID names it")
    func pageWithADamagedRow() throws {
        try withStore { store, folder in
            let written = try writeFlows((1...5).map { sampleFlow(start: Int64($0) * 100) }, to: store)
            let database = try SQLiteDatabase(path: folder + "/tunnelvision.sqlite3")
            defer { database.close() }
            try database.execute("UPDATE flows SET bytes_up = -5 WHERE id = \(written[3].id)")
            let first = try store.flows(FlowQuery(limit: 2))
            #expect(first.flows.map(\.id) == [written[4].id])
            #expect(first.damaged == [DamagedRow(row: "flow \(written[3].id)", column: "bytes_up", value: .integer(-5))])
            let second = try store.flows(FlowQuery(limit: 2, after: first.nextCursor))
            #expect(second.flows.map(\.id) == [written[2].id, written[1].id])
            #expect(second.damaged == [])
            #expect(throws: FlowStoreError.damagedRow(path: store.path, first.damaged[0])) { try store.flow(id: written[3].id) }
            #expect(try store.flow(id: written[2].id) != nil)
        }
    }
}
