import FlowTerms
import Testing
@testable import FlowStore

/// Texts bound without a copy (`SQLiteTextRow`, the exchange writer's path) are the texts
/// stored, row after row through one reused buffer; and `LatestExchanges` keeps each exchange's
/// latest state once, in first-appearance order.
@Suite struct SQLiteTextRowTests {
    @Test("texts, empty texts, NULLs and multi-byte UTF-8 read back exactly, across rows that grow the buffer")
    func rowsReadBack() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/texts.sqlite3")
        defer { database.close() }
        try database.execute("CREATE TABLE t (n INTEGER, a TEXT, b TEXT, c TEXT)")
        let insert = try database.prepare("INSERT INTO t (n, a, b, c) VALUES (?, ?, ?, ?)")
        let long = String(repeating: "x", count: 3_000)  // past the buffer's first 1,024 bytes
        let rows: [(String?, String?, String?)] = [
            ("GET", "/a", nil), ("", "ünïcödé ✓", "text/html"), (long, nil, ""), ("HTTP/2", "/b?q", "gzip"),
        ]
        var texts = SQLiteTextRow()
        for (n, row) in rows.enumerated() {
            insert.rewind()
            try insert.bind(integer: Int64(n), at: 1)
            texts.set(row.0, at: 2)
            texts.set(row.1, at: 3)
            texts.set(row.2, at: 4)
            #expect(try texts.step(insert) == false)
        }
        let read = try database.prepare("SELECT a, b, c, typeof(a), typeof(b), typeof(c) FROM t ORDER BY n")
        var found: [[String?]] = []
        try read.forEachRow { row in found.append((0..<6).map { row.string(at: Int32($0)) }) }
        #expect(found == [
            ["GET", "/a", nil, "text", "text", "null"],
            ["", "ünïcödé ✓", "text/html", "text", "text", "text"],
            [long, nil, "", "text", "null", "text"],
            ["HTTP/2", "/b?q", "gzip", "text", "text", "text"],
        ])
    }

    @Test("a failed step unbinds and forgets the texts: the next row binds only its own")
    func failedStepForgets() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/texts.sqlite3")
        defer { database.close() }
        try database.execute("CREATE TABLE t (a TEXT NOT NULL UNIQUE, b TEXT)")
        let insert = try database.prepare("INSERT INTO t (a, b) VALUES (?, ?)")
        var texts = SQLiteTextRow()
        texts.set("one", at: 1)
        texts.set("first", at: 2)
        _ = try texts.step(insert)
        insert.rewind()
        texts.set("one", at: 1)  // the UNIQUE constraint refuses it
        texts.set("second", at: 2)
        #expect(throws: FlowStoreError.self) { try texts.step(insert) }
        insert.rewind()
        texts.set("two", at: 1)
        _ = try texts.step(insert)
        let read = try database.prepare("SELECT a, b FROM t ORDER BY rowid")
        var found: [[String?]] = []
        try read.forEachRow { row in found.append([row.string(at: 0), row.string(at: 1)]) }
        #expect(found == [["one", "first"], ["two", nil]])
    }

    @Test("latest exchanges: a later state replaces an earlier one in its place; trimming gives up the oldest")
    func latestExchanges() {
        func exchange(_ flow: Int64, _ sequence: Int, _ state: ExchangeState) -> ExchangeRecord {
            ExchangeRecord(flowID: flow, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", path: "/", requestTime: 10,
                           state: state)
        }
        var latest = LatestExchanges()
        latest.keep(exchange(1, 1, .open))
        latest.keep(exchange(2, 1, .open))
        latest.keep(exchange(1, 2, .open))
        latest.keep(exchange(1, 1, .complete))
        #expect(latest.inOrder == [exchange(1, 1, .complete), exchange(2, 1, .open), exchange(1, 2, .open)])
        #expect(latest.trim(to: 2) == 1)
        #expect(latest.inOrder == [exchange(2, 1, .open), exchange(1, 2, .open)])
        // After a trim, positions still find each kept exchange.
        latest.keep(exchange(1, 2, .incomplete))
        latest.keep(exchange(1, 1, .answered))
        #expect(latest.inOrder == [exchange(2, 1, .open), exchange(1, 2, .incomplete), exchange(1, 1, .answered)])
        #expect(latest.count == 3)
    }
}
