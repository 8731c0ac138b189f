import Foundation
import Synchronization

/// The shared store read by the reading commands (`tv flows --store URL`, `tv flow ID --store`,
/// `tv store instances`): one libpq connection behind a mutex, every value a parameter.
/// `instance` narrows every read to one instance (its id or its machine's name). A page's
/// statements (the page, `--host`'s names) are prepared at their second run on the connection
/// (`PGConnection.query(prepared:)`): a history held open stops planning them anew, a one-shot
/// reader pays no round trip more.
public final class SharedFlowHistory: FlowHistory {
    /// The server, as the URL named it.
    public let target: SharedStoreTarget
    /// The instance id or machine name every read is narrowed to; nil for all.
    public let instance: String?
    let connection: Mutex<PGConnection>

    /// Connects and applies missing migrations (an empty database becomes an empty history).
    /// - Throws: `FlowStoreError.sharedStoreUnreachable`, `.sharedStoreFailed`, `.sharedStoreNewerSchema`,
    ///   `.noSuchInstance` when `instance` names no instance.
    public init(_ target: SharedStoreTarget, instance: String? = nil) throws {
        self.target = target
        self.instance = instance
        let connection = try PGConnection(target)
        try PostgresSchema.migrate(connection)
        // The name becomes the ids it names once, so each read is `instance_id IN (…)`, which
        // `flows_by_instance_time` serves (an OR with the machine column would read every row).
        var byMachine: [(id: String, machine: String)] = []
        var byPrefix: [(id: String, machine: String)] = []
        narrowedIDs = try instance.map { given in
            // `MACHINE/PREFIX` (the list's label when one machine name has several instances)
            // names the instance whose id begins with PREFIX; an id prefix of 8 or more alone too.
            // The id part is read in any case (ids are lowercase UUIDs: `vm/AA64F442` named none,
            // a re-check). The machine part is the one the rows carry, which may be older than the
            // instance's name now (a renamed host), so it is not checked.
            // After `MACHINE/`, any prefix of the id (a short one named none: a re-check); alone,
            // 8 characters or more, so a short machine name is not read as a prefix.
            let name = given.split(separator: "/").last.map(String.init) ?? given
            let qualified = given.contains("/")
            let prefix = name.count >= (qualified ? 1 : 8) && name.allSatisfy({ $0.isHexDigit || $0 == "-" }) ? name.lowercased() + "%" : ""
            let rows = try connection.query("SELECT instance_id, machine FROM instances WHERE instance_id = ? OR machine = ? OR instance_id LIKE ? ORDER BY instance_id",
                                            [.text(name.lowercased()), .text(name), .text(prefix)])
            var ids: [String] = []
            for row in rows {
                guard row.count == 2, case let .text(id) = row[0], case let .text(machine) = row[1] else { continue }
                ids.append(id)
                if machine == name { byMachine.append((id, machine)) }
                if id != name.lowercased(), !prefix.isEmpty, id.hasPrefix(name.lowercased()) { byPrefix.append((id, machine)) }
            }
            return ids
        }
        // A name that names nothing is said, not read as an empty history (a trial's typo
        // printed "No flows are recorded yet" with exit 0).
        if let instance, narrowedIDs?.isEmpty == true {
            connection.close()
            throw FlowStoreError.noSuchInstance(name: instance, server: target.server)
        }
        // A machine name several instances carry names none of them: each is said by the label
        // that names it (it read them all as one, where the README says one: a trial).
        // So is an id prefix several instances' ids begin with.
        if let instance, (narrowedIDs?.count ?? 0) > 1, byMachine.count > 1 || byPrefix.count > 1 {
            connection.close()
            let named = byMachine.count > 1 ? byMachine : byPrefix
            throw FlowStoreError.ambiguousInstance(name: instance, labels: named.map { "\($0.machine)/\($0.id.prefix(8))" })
        }
        self.connection = Mutex(connection)
    }

    /// The ids of the instances `instance` names (by id or machine name); nil when not narrowed.
    let narrowedIDs: [String]?

    /// Whether reads are narrowed to exactly one instance (what a per-instance number, such as
    /// an audit session's, needs to mean one thing).
    public var narrowsToOneInstance: Bool { narrowedIDs?.count == 1 }

    /// The instance condition, when narrowed.
    var instanceCondition: ([String], [SQLiteValue]) {
        guard let ids = narrowedIDs else { return ([], []) }
        guard !ids.isEmpty else { return (["FALSE"], []) }
        return (["instance_id IN (" + Array(repeating: "?", count: ids.count).joined(separator: ", ") + ")"], ids.map { .text($0) })
    }

    public func flows(_ query: FlowQuery) throws -> FlowPage {
        let (sql, bindings, limit) = try pageSQL(query)
        let rows = try connection.withLock { try $0.query(sql, bindings, prepared: true) }
        let more = rows.count > limit
        var page = FlowPage(flows: [], nextCursor: nil)
        var last: SharedFlowCursor?
        for values in rows.prefix(limit) {
            let identity = SharedFlowHistory.identity(values)
            if case let .integer(start) = values[1], case let .integer(id) = values[0] {
                last = SharedFlowCursor(startTime: start, id: id, instance: identity.id)
            }
            do throws(DamagedRow) {
                page.flows.append(try SharedFlowHistory.flowRecord(values))
            } catch {
                page.damaged.append(error)
            }
        }
        if more { page.nextCursor = last?.string }
        return page
    }

    /// The SELECT of one page of `query` (one row more than the page), its bindings and the
    /// page's size. With `--host`, the names holding the text are looked up first
    /// (`SharedHostSearch`).
    /// - Throws: `FlowStoreError.badCursor`.
    func pageSQL(_ query: FlowQuery) throws -> (String, [SQLiteValue], Int) {
        let names = try hostNames(query)
        var rest = query
        if names != nil { rest.host = nil }
        var (conditions, bindings) = rest.filterConditions()
        let narrowing = instanceCondition
        conditions += narrowing.0
        bindings += narrowing.1
        if let after = query.after {
            let cursor = try SharedFlowCursor(after)
            conditions.append("(start_time, id, instance_id) < (?, ?, ?)")
            bindings += [.integer(cursor.startTime), .integer(cursor.id), .text(cursor.instance)]
        }
        let limit = query.effectiveLimit
        if case let (names, text)? = names {
            if (1...SharedHostSearch.mergedLookups).contains(names.lookups) {
                let (sql, values) = SharedHostSearch.mergedPageSQL(names, filters: (conditions, bindings), rows: limit + 1)
                return (sql, values, limit)
            }
            let (condition, values) = SharedHostSearch.condition(names, text: text)
            conditions.insert(condition, at: 0)
            bindings.insert(contentsOf: values, at: 0)
        }
        bindings.append(.integer(Int64(limit + 1)))
        let sql = "SELECT \(PostgresDialect.selectList) FROM flows" + FlowQuery.whereClause(conditions)
            + " ORDER BY start_time DESC, id DESC, instance_id DESC LIMIT ?"
        return (sql, bindings, limit)
    }

    /// The names holding `query.host` (`SharedHostSearch.namesSQL`) and the text; nil without
    /// `--host`.
    /// - Throws: `FlowStoreError`.
    func hostNames(_ query: FlowQuery) throws -> (FlowNameMatches, String)? {
        guard let text = query.host, !text.isEmpty else { return nil }
        let rows = try connection.withLock { try $0.query(SharedHostSearch.namesSQL, SharedHostSearch.namesBindings(text), prepared: true) }
        return (FlowNameMatches(rows: rows.compactMap { row in
            guard case let .text(name) = row[0], case let .integer(bits) = row[1] else { return nil }
            return (name, bits)
        }), text)
    }

    /// The server's plan of `query`'s page (`EXPLAIN`): the tests read which index `--host` uses.
    func explain(_ query: FlowQuery) throws -> String {
        let (sql, bindings, _) = try pageSQL(query)
        return try plan(sql, bindings)
    }

    public func flow(id: Int64) throws -> FlowRecord? {
        let narrowing = instanceCondition
        let sql = "SELECT \(PostgresDialect.selectList) FROM flows WHERE " + (["id = ?"] + narrowing.0).joined(separator: " AND ")
            + " ORDER BY instance_id LIMIT 10"
        let rows = try connection.withLock { try $0.query(sql, [.integer(id)] + narrowing.1) }
        guard let values = rows.first else { return nil }
        if rows.count > 1 {
            throw FlowStoreError.ambiguousSharedFlow(id: id, instances: rows.map { SharedFlowHistory.identity($0) }.map { "\($0.machine) \($0.id)" })
        }
        do throws(DamagedRow) {
            return try SharedFlowHistory.flowRecord(values)
        } catch {
            throw FlowStoreError.damagedRow(path: target.server, error)
        }
    }

    /// A shared flow row (`PostgresDialect.selectList`: the local columns, then the instance's
    /// two) as a record tagged with its instance.
    /// - Throws: `DamagedRow` for a value no tv writes.
    static func flowRecord(_ values: [SQLiteValue]) throws(DamagedRow) -> FlowRecord {
        var record = try FlowRecordColumns.record(Array(values.dropLast(2)))
        record.instance = identity(values)
        return record
    }

    public func count(_ query: FlowQuery) throws -> Int {
        let names = try hostNames(query)
        var (conditions, bindings) = query.filterConditions { text in
            names.map { SharedHostSearch.condition($0.0, text: text) } ?? PostgresDialect.textCondition(text)
        }
        let narrowing = instanceCondition
        conditions += narrowing.0
        bindings += narrowing.1
        let rows = try connection.withLock { try $0.query("SELECT count(*) FROM flows" + FlowQuery.whereClause(conditions), bindings) }
        if case let .integer(n) = rows.first?.first ?? .null { return Int(n) }
        return 0
    }

    /// The instances that wrote to the store, most recently seen first, with their flow counts
    /// (narrowed like every read).
    /// - Throws: `FlowStoreError`.
    public func instances() throws -> [SharedInstance] {
        let narrowing = instanceCondition
        let sql = "SELECT i.instance_id, i.machine, i.first_seen, i.last_seen, (SELECT count(*) FROM flows f WHERE f.instance_id = i.instance_id) FROM instances i"
            + FlowQuery.whereClause(narrowing.0.map { $0.replacingOccurrences(of: "instance_id", with: "i.instance_id").replacingOccurrences(of: "machine", with: "i.machine") })
            + " ORDER BY i.last_seen DESC, i.instance_id"
        let rows = try connection.withLock { try $0.query(sql, narrowing.1) }
        return rows.map { values in
            func integer(_ i: Int) -> Int64 { if case let .integer(n) = values[i] { return n } else { return 0 } }
            func text(_ i: Int) -> String { if case let .text(t) = values[i] { return t } else { return "" } }
            return SharedInstance(identity: InstanceIdentity(id: text(0), machine: text(1)), firstSeen: integer(2),
                                  lastSeen: integer(3), flows: Int(integer(4)))
        }
    }

    /// The machine names more than one instance of the store carries (`instances`, a row per
    /// instance: small), whatever the narrowing.
    /// - Throws: `FlowStoreError`.
    public func machinesWithSeveralInstances() throws -> Set<String> {
        let rows = try connection.withLock { try $0.query("SELECT machine FROM instances GROUP BY machine HAVING count(*) > 1", []) }
        return Set(rows.compactMap { if case let .text(t) = $0.first ?? .null { return t } else { return nil } })
    }

    public func close() {
        connection.withLock { $0.close() }
    }

    /// The instance columns, the last two of a shared row.
    static func identity(_ values: [SQLiteValue]) -> InstanceIdentity {
        var id = "", machine = ""
        if case let .text(t) = values[values.count - 2] { id = t }
        if case let .text(t) = values[values.count - 1] { machine = t }
        return InstanceIdentity(id: id, machine: machine)
    }
}

/// One instance that wrote to the shared store (`tv store instances`).
public struct SharedInstance: Sendable, Equatable {
    /// Its id and machine name.
    public var identity: InstanceIdentity
    /// When it first and last wrote (µs since the epoch).
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Its flows in the store.
    public var flows: Int
}
