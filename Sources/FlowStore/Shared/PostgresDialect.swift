import CPostgres
import Foundation
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// Everything in which the shared store's SQL differs from SQLite's, in one place: parameter
/// numbering, the host text search, the flows upsert and the instance columns, and how values
/// travel (libpq's text format, PostgreSQL documentation §55.2 "Message Data Types").
enum PostgresDialect {
    /// The columns every shared row carries before the flow's own: which instance saw it (its
    /// content, packets and captures stay in that instance's data folder) and on which machine.
    static let instanceColumns = ["instance_id", "machine"]

    /// Rows per multi-row INSERT: at most 47 parameters a row stay far below libpq's 65,535.
    static let rowsPerInsert = 500

    /// `sql` with each `?` (outside quotes) numbered `$1`, `$2` … as PostgreSQL takes them.
    static func numbered(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var n = 0
        var quoted = false
        for character in sql {
            if character == "'" { quoted.toggle() }
            if character == "?", !quoted {
                n += 1
                out += "$\(n)"
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// `--host TEXT` on the shared store: a case-insensitive substring of the host name, the
    /// other names, or either address (`ILIKE` with LIKE's wildcards escaped), read on the flows
    /// themselves: what `SharedHostSearch` falls back to past `listedLookups` names.
    static func textCondition(_ text: String) -> (String, [SQLiteValue]) {
        let pattern = SQLiteValue.text("%" + FlowQuery.escapeLike(text) + "%")
        return ("(host ILIKE ? ESCAPE '\\' OR other_hosts ILIKE ? ESCAPE '\\' OR server_address ILIKE ? ESCAPE '\\' OR client_address ILIKE ? ESCAPE '\\')",
                [pattern, pattern, pattern, pattern])
    }

    /// The written columns of a shared flow row, in binding order: the instance's, the record's,
    /// `audit_session_id`, and with `program` the program's (`FlowProgramColumns.names`), so a
    /// flow whose program came in the same batch is written once (as SQLite's
    /// `upsertWithProgramSQL`).
    static func upsertColumns(program: Bool) -> [String] {
        instanceColumns + FlowRecordColumns.names + ["audit_session_id"] + (program ? FlowProgramColumns.names : [])
    }

    /// `INSERT INTO flows (…) VALUES (…), (…) ON CONFLICT (instance_id, id) DO UPDATE SET …` for
    /// `rows` rows: one statement opens or updates every flow of a batch.
    static func upsertSQL(rows: Int, program: Bool = false) -> String {
        let columns = upsertColumns(program: program)
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        return "INSERT INTO flows (\(columns.joined(separator: ", "))) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ") + conflictUpdate(columns)
    }

    /// `ON CONFLICT (instance_id, id) DO UPDATE SET` every column of `columns` but the key and
    /// `audit_session_id`, for the same flow only (`SharedIDClash.sameFlow`): as SQLite's
    /// upsert, a flow belongs to the audit session that was recording when it was first
    /// written, and later updates never move it.
    static func conflictUpdate(_ columns: [String]) -> String {
        let kept: Set<String> = ["instance_id", "id", "audit_session_id"]
        return " ON CONFLICT (instance_id, id) DO UPDATE SET "
            + columns.filter { !kept.contains($0) }.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
            + SharedIDClash.sameFlow
    }

    /// A flow's values in `upsertColumns(program: program != nil)` order (the local writer's id
    /// is not shared): `auditSession`, the local audit session recording when the batch was
    /// written (`LocalTableSync.liveAuditSession`), nil for none.
    static func upsertBindings(_ flow: FlowRecord, instance: InstanceIdentity, auditSession: Int64? = nil,
                               program: FlowProgram? = nil) -> [SQLiteValue] {
        var values: [SQLiteValue] = [.text(instance.id), .text(instance.machine)]
        values += FlowRecordColumns.bindings(flow, writer: 0).dropLast()
        values.append(auditSession.map { .integer($0) } ?? .null)
        if let program { values += FlowProgramColumns.bindings(program) }
        return values
    }

    /// The program's update on the shared row of `id`.
    static let programUpdateSQL = "UPDATE flows SET " + FlowProgramColumns.names.map { "\($0) = ?" }.joined(separator: ", ")
        + " WHERE instance_id = ? AND id = ?"

    /// The SELECT list of a shared flow: the local one, then the instance columns.
    static let selectList = FlowRecordColumns.selectList + ", " + instanceColumns.joined(separator: ", ")

    /// A parameter in libpq's text format, `malloc`ed (the caller frees it); nil for NULL. Text
    /// cannot hold NUL in PostgreSQL: a NUL becomes U+FFFD rather than failing the whole batch.
    static func parameterText(_ value: SQLiteValue) -> UnsafeMutablePointer<CChar>? {
        switch value {
        case .null: return nil
        case let .integer(n): return strdup(String(n))
        case let .real(d): return strdup(String(d))
        case let .text(s): return strdup(s.contains("\u{0}") ? s.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : s)
        case let .blob(bytes):
            let hex = "0123456789abcdef".utf8.map { $0 }
            var text = "\\x"
            for byte in bytes { text.append(Character(Unicode.Scalar(hex[Int(byte >> 4)]))); text.append(Character(Unicode.Scalar(hex[Int(byte & 15)]))) }
            return strdup(text)
        }
    }

    /// A column value read in text format, typed by its column's type OID (`pg_type.dat`:
    /// int2 21, int4 23, int8 20, float4 700, float8 701, bool 16; everything else is text).
    static func value(_ text: String, type: Oid) -> SQLiteValue {
        switch type {
        case 20, 21, 23: return Int64(text).map { .integer($0) } ?? .text(text)
        case 700, 701: return Double(text).map { .real($0) } ?? .text(text)
        case 16: return .integer(text == "t" ? 1 : 0)
        default: return .text(text)
        }
    }
}
