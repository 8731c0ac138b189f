import CPostgres
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A thin wrapper over one libpq connection (`PGconn*`) to the shared store.
///
/// Threading rule (as `SQLiteDatabase`'s): one thread at a time; an owner shared between threads
/// keeps it inside a `Mutex` (`SharedFlowHistory`), the shared writer keeps its own on its thread.
/// Every value travels as a parameter (`PQexecParams`, text format); SQL text never holds a value.
final class PGConnection {
    /// `host:port/database`, for errors and the banner.
    let server: String
    private var handle: OpaquePointer?

    /// Connects with libpq's keyword/value parameters (`SharedStoreTarget.parameters`).
    /// - Throws: `FlowStoreError.sharedStoreNeedsPassword` (asked for one, none found),
    ///   `.sharedStoreLoginRefused` (a password was sent and the connection still failed),
    ///   `.sharedStoreUnreachable` otherwise, each with libpq's reason.
    init(_ target: SharedStoreTarget) throws {
        server = target.server
        let keys = target.parameters.map { strdup($0.0) }
        let values = target.parameters.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keyList: [UnsafePointer<CChar>?] = keys.map { UnsafePointer($0) } + [nil]
        let valueList: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        let conn = PQconnectdbParams(keyList, valueList, 0)
        guard let conn, PQstatus(conn) == CONNECTION_OK else {
            let reason = conn.map { PGConnection.words(PQerrorMessage($0)) } ?? "out of memory"
            let needsPassword = conn.map { PQconnectionNeedsPassword($0) != 0 } ?? false
            let usedPassword = conn.map { PQconnectionUsedPassword($0) != 0 } ?? false
            PQfinish(conn)
            if needsPassword {
                let file = PasswordFileCheck.trouble(parameters: target.parameters)
                throw FlowStoreError.sharedStoreNeedsPassword(server: target.server, reason: file.map { "\($0); \(reason)" } ?? reason)
            }
            if usedPassword { throw FlowStoreError.sharedStoreLoginRefused(server: target.server, reason: reason) }
            throw FlowStoreError.sharedStoreUnreachable(server: target.server, reason: reason)
        }
        handle = conn
        // Notices (e.g. "relation already exists, skipping") are not for the terminal.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { close() }

    /// Closes the connection. Idempotent.
    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// True when the connection is gone (the server stopped, the network broke): a new one must
    /// be made.
    var isLost: Bool {
        guard let handle else { return true }
        return PQstatus(handle) != CONNECTION_OK
    }

    /// Runs SQL that takes no parameters (DDL, BEGIN/COMMIT; several statements allowed).
    /// - Throws: `FlowStoreError.sharedStoreUnreachable` when the connection is lost,
    ///   `.sharedStoreFailed` with the server's words otherwise.
    func execute(_ sql: String) throws {
        let result = PQexec(try connection(), sql)
        defer { PQclear(result) }
        try check(result)
        changedRows = PGConnection.changed(result)
    }

    /// The rows the last `execute` or `query` inserted, updated, deleted or copied
    /// (`PQcmdTuples`; 0 for a statement that changes none, such as BEGIN). An
    /// `INSERT … ON CONFLICT DO UPDATE … WHERE` counts the rows it inserted or updated, not those
    /// its condition left alone (PostgreSQL's `INSERT` documentation, "Outputs").
    private(set) var changedRows = 0

    private static func changed(_ result: OpaquePointer?) -> Int {
        guard let result, let text = PQcmdTuples(result) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// Runs one statement with `?` parameters (renumbered `$1…`, `PostgresDialect.numbered`) and
    /// returns its rows, each value typed by its column's type. `prepared`: from its second run
    /// on this connection the statement is prepared (`PQprepare`, by its text) and executed by
    /// name, so a page read again is not parsed again, and from its sixth run the server may
    /// keep one generic plan rather than planning each run (PostgreSQL's
    /// `plan_cache_mode = auto`). Measured on a 10 M-flow store (`EXPLAIN ANALYZE`, warm
    /// session, load 3-5): the `--host` page's UNION ALL planned in 0.4-0.75 ms per run against
    /// 0.14-0.34 ms of execution; prepared, from the sixth run 0.003-0.007 ms of planning. Not
    /// at the first run: preparing is a round trip more, and a one-shot reader (`tv flows
    /// --store`, a new session each) never runs a text twice.
    /// - Throws: as `execute`.
    @discardableResult
    func query(_ sql: String, _ parameters: [SQLiteValue] = [], prepared: Bool = false) throws -> [[SQLiteValue]] {
        let conn = try connection()
        let texts: [UnsafeMutablePointer<CChar>?] = parameters.map(PostgresDialect.parameterText)
        defer { texts.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = texts.map { $0.map { UnsafePointer($0) } }
        let numbered = PostgresDialect.numbered(sql)
        let result = prepared && seenOnce(numbered)
            ? PQexecPrepared(conn, try statement(numbered, parameters: Int32(parameters.count)), Int32(parameters.count), pointers, nil, nil, 0)
            : PQexecParams(conn, numbered, Int32(parameters.count), nil, pointers, nil, nil, 0)
        defer { PQclear(result) }
        try check(result)
        changedRows = PGConnection.changed(result)
        guard let result else { return [] }
        let rows = PQntuples(result), columns = PQnfields(result)
        var out: [[SQLiteValue]] = []
        out.reserveCapacity(Int(rows))
        for row in 0..<rows {
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(.null)
                } else {
                    let text = String(cString: PQgetvalue(result, row, column))
                    values.append(PostgresDialect.value(text, type: PQftype(result, column)))
                }
            }
            out.append(values)
        }
        return out
    }

    /// Runs `sql`, a `COPY … FROM STDIN` statement, and sends it `rows` (`CopyText`'s text
    /// format) in pieces of at most 1 MiB (`PQputCopyData`, `PQputCopyEnd`); nothing to send
    /// runs nothing.
    /// - Throws: as `execute` (a value the table refuses fails the whole COPY, as a statement).
    func copy(_ sql: String, _ rows: [UInt8]) throws {
        guard !rows.isEmpty else { return }
        let conn = try connection()
        let start = PQexec(conn, sql)
        guard let start, PQresultStatus(start) == PGRES_COPY_IN else {
            defer { PQclear(start) }
            try check(start)
            throw FlowStoreError.sharedStoreFailed(server: server, reason: "the server did not start the COPY")
        }
        PQclear(start)
        var sent = true
        rows.withUnsafeBytes { bytes in
            var offset = 0
            while sent, offset < bytes.count {
                let length = min(1 << 20, bytes.count - offset)
                sent = PQputCopyData(conn, bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self), Int32(length)) == 1
                offset += length
            }
        }
        let ended = PQputCopyEnd(conn, sent ? nil : "tv could not send every row") == 1
        var failure: Error?
        while let result = PQgetResult(conn) {
            if failure == nil {
                do { try check(result) } catch { failure = error }
            }
            PQclear(result)
        }
        if let failure { throw failure }
        guard sent, ended else {
            throw FlowStoreError.sharedStoreUnreachable(server: server, reason: handle.map { PGConnection.words(PQerrorMessage($0)) } ?? "no answer")
        }
    }

    /// Runs `body` inside BEGIN … COMMIT; rolls back (when the connection still stands) and
    /// rethrows when `body` throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if !isLost { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// The statements prepared on this connection: each one's name by its numbered text.
    private var preparedNames: [String: String] = [:]
    /// The texts run once with `prepared` and not prepared yet.
    private var runOnce: Set<String> = []
    private var preparedCount = 0
    /// The most statements kept prepared; past it every one is deallocated and prepared again as
    /// it comes (a `--host` page's text varies with its names' count and its filters).
    static let preparedLimit = 128

    /// Whether `numbered` ran before on this connection (then it is, or is now to be, prepared);
    /// notes it when not.
    private func seenOnce(_ numbered: String) -> Bool {
        if preparedNames[numbered] != nil || runOnce.remove(numbered) != nil { return true }
        if runOnce.count >= PGConnection.preparedLimit { runOnce.removeAll() }
        runOnce.insert(numbered)
        return false
    }

    /// The name `numbered` is prepared under on this connection, preparing it the first time.
    /// - Throws: as `execute` (the statement's error, e.g. an unknown column, comes here).
    private func statement(_ numbered: String, parameters: Int32) throws -> String {
        if let name = preparedNames[numbered] { return name }
        if preparedNames.count >= PGConnection.preparedLimit {
            try execute("DEALLOCATE ALL")
            preparedNames.removeAll()
        }
        preparedCount += 1
        let name = "tv_\(preparedCount)"
        let result = PQprepare(try connection(), name, numbered, parameters, nil)
        defer { PQclear(result) }
        try check(result)
        preparedNames[numbered] = name
        return name
    }

    private func connection() throws -> OpaquePointer {
        guard let handle else { throw FlowStoreError.sharedStoreUnreachable(server: server, reason: "the connection is closed") }
        return handle
    }

    private func check(_ result: OpaquePointer?) throws {
        let status = result.map { PQresultStatus($0) } ?? PGRES_FATAL_ERROR
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let reason = result.map { PGConnection.words(PQresultErrorMessage($0)) } ?? ""
        let why = reason.isEmpty ? handle.map { PGConnection.words(PQerrorMessage($0)) } ?? "no answer" : reason
        if isLost { throw FlowStoreError.sharedStoreUnreachable(server: server, reason: why) }
        throw FlowStoreError.sharedStoreFailed(server: server, reason: why)
    }

    /// libpq's message on one line, without its trailing newline.
    /// libpq's message on one line: its lines joined with "; ", each without the final full
    /// stop a sentence ends with ("Connection refused; Is the server running …").
    static func words(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        return String(cString: message).split(whereSeparator: \.isNewline)
            .map { line -> String in
                var text = line.trimmingCharacters(in: .whitespaces)
                if text.hasSuffix(".") { text.removeLast() }
                return text
            }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }
}
