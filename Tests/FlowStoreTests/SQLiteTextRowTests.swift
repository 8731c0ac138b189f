import FlowTerms
import Testing
@testable import FlowStore

/// Texts bound without a copy (`SQLiteTextRow`, the exchange writer's path) are the texts
/// stored, row after row through one reused buffer; and `LatestExchanges` keeps each exchange's
/// latest state once, in first-appearance order.
@Suite struct SQLiteTextRowTests {
    /// Rewinds `insert`, binds `n` to its first parameter and sets `values` as the next ones.
    static func set(_ n: Int, _ values: [String?], of insert: SQLiteStatement, in texts: inout SQLiteTextRow) throws {
        insert.rewind()
        try insert.bind(integer: Int64(n), at: 1)
        for (offset, value) in values.enumerated() { texts.set(value, at: Int32(offset + 2)) }
    }

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
            try SQLiteTextRowTests.set(n, [row.0, row.1, row.2], of: insert, in: &texts)
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

    @Test("lists and words gathered into the buffer store what TextList.encode and a space join make")
    func listsAndWords() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/texts.sqlite3")
        defer { database.close() }
        try database.execute("CREATE TABLE t (n INTEGER, a TEXT, b TEXT)")
        let insert = try database.prepare("INSERT INTO t (n, a, b) VALUES (?, ?, ?)")
        let lists: [[String]] = [[], ["h2", "http/1.1"], ["a,b", "50%", "ünï,%"], [""], ["", ""]]
        var texts = SQLiteTextRow()
        for (n, list) in lists.enumerated() {
            insert.rewind()
            try insert.bind(integer: Int64(n), at: 1)
            texts.set(list: list, at: 2)
            texts.set(words: list, at: 3)
            #expect(try texts.step(insert) == false)
        }
        let read = try database.prepare("SELECT a, b FROM t ORDER BY n")
        var found: [[String?]] = []
        try read.forEachRow { row in found.append([row.string(at: 0), row.string(at: 1)]) }
        #expect(found == [["", ""], ["h2,http/1.1", "h2 http/1.1"], ["a%2Cb,50%25,ünï%2C%25", "a,b 50% ünï,%"], ["", ""], [",", " "]])
        #expect(found.map { $0[0] } == lists.map { TextList.encode($0) })
        #expect(found.map { $0[1] } == lists.map { $0.joined(separator: " ") })
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

    @Test("stepped without unbinding (every text set before each step): each row stores its own texts and NULLs, across a failed step and a buffer that grows")
    func rebindingEveryText() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let database = try SQLiteDatabase(path: folder + "/texts.sqlite3", oneThread: true)
        defer { database.close() }
        try database.execute("CREATE TABLE t (n INTEGER, a TEXT NOT NULL UNIQUE, b TEXT)")
        let insert = try database.prepare("INSERT INTO t (n, a, b) VALUES (?, ?, ?)")
        let long = String(repeating: "y", count: 5_000)  // moves the buffer: the earlier pointers dangle
        let rows: [(String, String?, Bool)] = [
            ("GET", "/first", true), ("GET", "refused: a is not unique", false), (long, nil, true), ("PUT", "ünï ✓", true), ("", nil, true),
        ]
        var texts = SQLiteTextRow()
        for (n, row) in rows.enumerated() {
            try SQLiteTextRowTests.set(n, [row.0, row.1], of: insert, in: &texts)
            if row.2 {
                #expect(try texts.stepRebindingEveryText(insert) == false)
            } else {
                #expect(throws: FlowStoreError.self) { try texts.stepRebindingEveryText(insert) }
            }
        }
        let read = try database.prepare("SELECT n, a, b, typeof(b) FROM t ORDER BY n")
        var found: [[String?]] = []
        try read.forEachRow { row in found.append((0..<4).map { row.string(at: Int32($0)) }) }
        #expect(found == [
            ["0", "GET", "/first", "text"],
            ["2", long, nil, "null"],
            ["3", "PUT", "ünï ✓", "text"],
            ["4", "", nil, "null"],
        ])
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
