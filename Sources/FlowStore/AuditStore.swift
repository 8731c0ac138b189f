/// The audit tables (`audit_projects`, `audit_sessions`, `audit_markers`, migration of
/// i21-audit) and what a session holds through `flows.audit_session_id`.
///
/// Membership is decided at write time: the flow writer's upsert tags a flow with the session
/// recording when the flow is first written (any writer on the file: `tv run`, `tv exec`), so a
/// session started beside a running `tv run` holds that session's flows from that moment. A
/// flow already written before the start stays outside, even while it is still open. Packets,
/// capture files and kept content belong to a session through their flow ids.
public struct AuditStore: Sendable {
    let connection: SharedConnection

    static let sessionColumns = """
        s.id, s.project_id, p.name, s.note, s.started, s.ended, s.settings
        FROM audit_sessions s JOIN audit_projects p ON p.id = s.project_id
        """

    /// Makes a project.
    /// - Throws: `AuditError.empty` (blank name), `.badProjectName`, `.noteTooLong`, `.projectExists`; `FlowStoreError`.
    public func newProject(name: String, note: String, now: Int64) throws -> AuditProject {
        guard !name.allSatisfy(\.isWhitespace) else { throw AuditError.empty(what: "project name") }
        guard AuditLimits.isProjectName(name) else { throw AuditError.badProjectName(name) }
        guard note.count <= AuditLimits.marker else { throw AuditError.noteTooLong(characters: note.count) }
        return try connection.withDatabase { database in
            if try AuditStore.project(named: name, in: database) != nil { throw AuditError.projectExists(name) }
            let skeleton = AuditLimits.skeleton(name)
            let names = try database.prepare("SELECT name FROM audit_projects")
            var twin: String?
            try names.forEachRow { row in if twin == nil, let other = row.string(at: 0), AuditLimits.skeleton(other) == skeleton { twin = other } }
            if let twin { throw AuditError.projectLooksLike(new: name, existing: twin) }
            let insert = try database.prepare("INSERT INTO audit_projects (name, note, created) VALUES (?, ?, ?) RETURNING id")
            try insert.bind([.text(name), .text(note), .integer(now)])
            _ = try insert.step()
            let id = insert.int64(at: 0)
            insert.reset()
            return AuditProject(id: id, name: name, note: note, created: now)
        }
    }

    /// Every project, oldest first, with its session count.
    public func projects() throws -> [AuditProject] {
        try connection.withDatabase { database in
            var out: [AuditProject] = []
            let select = try database.prepare("""
                SELECT p.id, p.name, p.note, p.created, (SELECT count(*) FROM audit_sessions s WHERE s.project_id = p.id)
                FROM audit_projects p ORDER BY p.created, p.id
                """)
            try select.forEachRow { row in
                out.append(AuditProject(id: row.int64(at: 0), name: row.string(at: 1) ?? "", note: row.string(at: 2) ?? "",
                                        created: row.int64(at: 3), sessions: Int(row.int64(at: 4))))
            }
            return out
        }
    }

    /// The project named `name` (exactly), or nil.
    public func project(named name: String) throws -> AuditProject? {
        try connection.withDatabase { try AuditStore.project(named: name, in: $0) }
    }

    static func project(named name: String, in database: SQLiteDatabase) throws -> AuditProject? {
        let select = try database.prepare("""
            SELECT p.id, p.name, p.note, p.created, (SELECT count(*) FROM audit_sessions s WHERE s.project_id = p.id)
            FROM audit_projects p WHERE p.name = ?
            """)
        try select.bind([.text(name)])
        guard try select.step() else { return nil }
        return AuditProject(id: select.int64(at: 0), name: select.string(at: 1) ?? "", note: select.string(at: 2) ?? "",
                            created: select.int64(at: 3), sessions: Int(select.int64(at: 4)))
    }

    /// Starts a session of `project` at `now`, recording `settings` (a JSON object as text).
    /// One transaction: the check and the insert cannot interleave with another start, and the
    /// unique index `audit_sessions_live` refuses a second live row whatever the caller.
    /// - Throws: `AuditError.noProject`, `.sessionRecording`, `.noteTooLong`; `FlowStoreError`.
    /// `recorder`: the process recording it for as long as it runs (nil: until `tv audit stop`).
    public func start(project: String, note: String, settings: String, now: Int64, recorder: AuditRecorder? = nil) throws -> AuditSession {
        guard note.count <= AuditLimits.marker else { throw AuditError.noteTooLong(characters: note.count) }
        return try connection.withDatabase { database in
            try database.transaction {
                guard let owner = try AuditStore.project(named: project, in: database) else { throw AuditError.noProject(project) }
                if let live = try AuditStore.live(in: database) {
                    throw AuditError.sessionRecording(id: live.id, project: live.projectName)
                }
                let insert = try database.prepare("""
                    INSERT INTO audit_sessions (project_id, note, started, settings, recorder_pid, recorder_start_ticks)
                    VALUES (?, ?, ?, ?, ?, ?) RETURNING id
                    """)
                try insert.bind([.integer(owner.id), .text(note), .integer(now), .text(settings),
                                 recorder.map { .integer(Int64($0.pid)) } ?? .null, recorder.map { .integer($0.startTicks) } ?? .null])
                _ = try insert.step()
                let id = insert.int64(at: 0)
                insert.reset()
                return AuditSession(id: id, projectID: owner.id, projectName: owner.name, note: note,
                                    started: now, ended: nil, settings: settings)
            }
        }
    }

    /// Replaces session `id`'s settings (a JSON object as text): `tv run --audit` starts its audit
    /// session before its own session is made, and records what that session runs with (its
    /// inspection among them) once it is.
    /// - Throws: `FlowStoreError`.
    public func recordSettings(session id: Int64, settings: String) throws {
        try connection.withDatabase { database in
            let update = try database.prepare("UPDATE audit_sessions SET settings = ? WHERE id = ?")
            try update.bind([.text(settings), .integer(id)])
            try database.transaction { _ = try update.step() }
        }
    }

    /// Records `settings` as the live session's when it has none yet (`{}`: `tv audit start` with
    /// no session running): the first `tv run` or `tv exec` to start while it records says what
    /// it runs with, its CA among them. Returns whether a session took them.
    /// - Throws: `FlowStoreError`.
    @discardableResult
    public func adoptSettings(_ settings: String) throws -> Bool {
        try connection.withDatabase { database in
            let update = try database.prepare("UPDATE audit_sessions SET settings = ? WHERE ended IS NULL AND settings = '{}'")
            try update.bind([.text(settings)])
            return try database.transaction {
                _ = try update.step()
                return database.changes > 0
            }
        }
    }

    /// Changes the live session's settings in one transaction: `change` gets them (a JSON
    /// object's text) and returns the new text and a marker to add at `now` (tv's own, said in
    /// the session's timeline), or nil to leave them. Returns whether a session changed.
    /// - Throws: `FlowStoreError`.
    @discardableResult
    public func changeLiveSettings(now: Int64, _ change: (String) -> (settings: String, marker: String)?) throws -> Bool {
        try connection.withDatabase { database in
            try database.transaction {
                guard let live = try AuditStore.live(in: database), let changed = change(live.settings) else { return false }
                let update = try database.prepare("UPDATE audit_sessions SET settings = ? WHERE id = ?")
                try update.bind([.text(changed.settings), .integer(live.id)])
                _ = try update.step()
                let insert = try database.prepare("INSERT INTO audit_markers (session_id, time, text) VALUES (?, ?, ?)")
                try insert.bind([.integer(live.id), .integer(max(now, live.started)), .text(changed.marker)])
                _ = try insert.step()
                return true
            }
        }
    }

    /// Ends the live session at `now`.
    /// - Throws: `AuditError.noLiveSession`; `FlowStoreError`.
    public func stop(now: Int64) throws -> AuditSession {
        try connection.withDatabase { database in
            try database.transaction {
                guard var live = try AuditStore.live(in: database) else { throw AuditError.noLiveSession }
                let end = max(now, live.started)
                let update = try database.prepare("UPDATE audit_sessions SET ended = ? WHERE id = ?")
                try update.bind([.integer(end), .integer(live.id)])
                _ = try update.step()
                live.ended = end
                return live
            }
        }
    }

    /// Closes the live session when the process recording it is gone (`isAlive` says no): at
    /// its last flow's or marker's time (`AuditRecorder.abandonedEnd`). Returns the session
    /// closed, or nil (none live, none with a recorder, or its recorder runs). One transaction
    /// and `ended IS NULL` in the update: of two callers racing, one closes it and says so.
    /// - Throws: `FlowStoreError`.
    public func closeAbandoned(isAlive: (AuditRecorder) -> Bool) throws -> AuditSession? {
        try connection.withDatabase { database in
            guard try AuditStore.hasTables(database) else { return nil }
            return try database.transaction {
                guard var live = try AuditStore.live(in: database) else { return nil }
                let who = try database.prepare("SELECT recorder_pid, recorder_start_ticks FROM audit_sessions WHERE id = ?")
                try who.bind([.integer(live.id)])
                let found = try who.step()
                let pid = found ? who.optionalInt64(at: 0) : nil, ticks = found ? who.optionalInt64(at: 1) : nil
                who.reset()
                guard let pid, let ticks else { return nil }
                guard !isAlive(AuditRecorder(pid: Int32(truncatingIfNeeded: pid), startTicks: ticks)) else { return nil }
                func latest(_ sql: String) throws -> Int64? {
                    let select = try database.prepare(sql)
                    try select.bind([.integer(live.id)])
                    defer { select.reset() }
                    return try select.step() ? select.optionalInt64(at: 0) : nil
                }
                let end = AuditRecorder.abandonedEnd(
                    started: live.started,
                    lastFlow: try latest("SELECT MAX(last_activity_time) FROM flows WHERE audit_session_id = ?"),
                    lastMarker: try latest("SELECT MAX(time) FROM audit_markers WHERE session_id = ?"))
                let update = try database.prepare("UPDATE audit_sessions SET ended = ? WHERE id = ? AND ended IS NULL")
                try update.bind([.integer(end), .integer(live.id)])
                _ = try update.step()
                live.ended = end
                return live
            }
        }
    }

    /// The session recording now, or nil.
    public func live() throws -> AuditSession? {
        try connection.withDatabase { try AuditStore.live(in: $0) }
    }

    static func live(in database: SQLiteDatabase) throws -> AuditSession? {
        let select = try database.prepare("SELECT \(sessionColumns) WHERE s.ended IS NULL")
        guard try select.step() else { return nil }
        return session(select)
    }

    static func session(_ row: SQLiteStatement) -> AuditSession {
        AuditSession(id: row.int64(at: 0), projectID: row.int64(at: 1), projectName: row.string(at: 2) ?? "",
                     note: row.string(at: 3) ?? "", started: row.int64(at: 4), ended: row.optionalInt64(at: 5),
                     settings: row.string(at: 6) ?? "{}")
    }

    /// Adds a marker to the live session at `now`.
    /// - Throws: `AuditError.empty`, `.noLiveSession`; `FlowStoreError`.
    public func mark(_ text: String, now: Int64) throws -> AuditMarker {
        guard !text.allSatisfy(\.isWhitespace) else { throw AuditError.empty(what: "marker's text") }
        guard text.count <= AuditLimits.marker else { throw AuditError.markerTooLong(characters: text.count) }
        return try connection.withDatabase { database in
            try database.transaction {
                guard let live = try AuditStore.live(in: database) else { throw AuditError.noLiveSession }
                let insert = try database.prepare("INSERT INTO audit_markers (session_id, time, text) VALUES (?, ?, ?) RETURNING id")
                try insert.bind([.integer(live.id), .integer(now), .text(text)])
                _ = try insert.step()
                let id = insert.int64(at: 0)
                insert.reset()
                return AuditMarker(id: id, sessionID: live.id, time: now, text: text)
            }
        }
    }

    /// Sessions, oldest first; of one project when `project` is given.
    /// - Throws: `AuditError.noProject` for a project name that names none.
    public func sessions(project: String? = nil) throws -> [AuditSession] {
        try connection.withDatabase { database in
            var out: [AuditSession] = []
            let select: SQLiteStatement
            if let project {
                guard let owner = try AuditStore.project(named: project, in: database) else { throw AuditError.noProject(project) }
                select = try database.prepare("SELECT \(AuditStore.sessionColumns) WHERE s.project_id = ? ORDER BY s.started, s.id")
                try select.bind([.integer(owner.id)])
            } else {
                select = try database.prepare("SELECT \(AuditStore.sessionColumns) ORDER BY s.started, s.id")
            }
            try select.forEachRow { out.append(AuditStore.session($0)) }
            return out
        }
    }

    /// Session `id`.
    /// - Throws: `AuditError.noSession`.
    public func session(_ id: Int64) throws -> AuditSession {
        try connection.withDatabase { database in
            let select = try database.prepare("SELECT \(AuditStore.sessionColumns) WHERE s.id = ?")
            try select.bind([.integer(id)])
            guard try select.step() else { throw AuditError.noSession(id) }
            return AuditStore.session(select)
        }
    }

    /// Markers of session `id`, in time order.
    public func markers(session id: Int64) throws -> [AuditMarker] {
        try markers(where: "session_id = ?", [.integer(id)])
    }

    /// Markers placed in `[from, to)` (µs), in time order: what `tv flows`, `tv activity` and
    /// `tv top` show at their time; of session `session` only when given (`tv flows --audit N`
    /// listed other sessions' markers among its flows: a trial).
    public func markers(from: Int64, to: Int64, session: Int64? = nil) throws -> [AuditMarker] {
        if let session {
            return try markers(where: "time >= ? AND time < ? AND session_id = ?", [.integer(from), .integer(to), .integer(session)])
        }
        return try markers(where: "time >= ? AND time < ?", [.integer(from), .integer(to)])
    }

    private func markers(where condition: String, _ bindings: [SQLiteValue]) throws -> [AuditMarker] {
        try connection.withDatabase { database in
            guard try AuditStore.hasTables(database) else { return [] }
            var out: [AuditMarker] = []
            let select = try database.prepare("SELECT id, session_id, time, text FROM audit_markers WHERE \(condition) ORDER BY time, id")
            try select.bind(bindings)
            try select.forEachRow { row in
                out.append(AuditMarker(id: row.int64(at: 0), sessionID: row.int64(at: 1), time: row.int64(at: 2), text: row.string(at: 3) ?? ""))
            }
            return out
        }
    }

    static func hasTables(_ database: SQLiteDatabase) throws -> Bool {
        if case let .integer(n) = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'audit_markers'") { return n > 0 }
        return false
    }

    /// Ids of the flows session `id` holds, oldest first.
    public func flowIDs(session id: Int64) throws -> [Int64] {
        try connection.withDatabase { database in
            var out: [Int64] = []
            let select = try database.prepare("SELECT id FROM flows WHERE audit_session_id = ? ORDER BY start_time, id")
            try select.bind([.integer(id)])
            try select.forEachRow { out.append($0.int64(at: 0)) }
            return out
        }
    }

    /// Ids of the flows carried into a session's span: started before `from` (µs) and still
    /// open then (not ended before it), active at or after it, and held by no session. A
    /// connection a program kept open across `tv audit start` says what it said during the span
    /// in the same connection (an auditor's requests on it were in the decrypted capture, cut by
    /// time, and missing from the HAR: a trial). Oldest first.
    public func flowIDs(carriedInto from: Int64) throws -> [Int64] {
        try connection.withDatabase { database in
            var out: [Int64] = []
            let select = try database.prepare("""
                SELECT id FROM flows WHERE start_time < ? AND audit_session_id IS NULL
                AND last_activity_time >= ? AND (duration IS NULL OR start_time + duration >= ?)
                ORDER BY start_time, id
                """)
            try select.bind([.integer(from), .integer(from), .integer(from)])
            try select.forEachRow { out.append($0.int64(at: 0)) }
            return out
        }
    }

    /// Sequences of the capture files (not deleted) whose time overlaps `[from, to]` (µs),
    /// oldest first: where a session's packets are cut from.
    public func captures(from: Int64, to: Int64) throws -> [Int] {
        try connection.withDatabase { database in
            var out: [Int] = []
            let select = try database.prepare("""
                SELECT seq FROM captures WHERE deleted_at IS NULL AND started_at <= ? AND (ended_at IS NULL OR ended_at >= ?)
                ORDER BY seq
                """)
            try select.bind([.integer(to), .integer(from)])
            try select.forEachRow { out.append(Int($0.int64(at: 0))) }
            return out
        }
    }

    /// What session `id` holds, counted.
    public func summary(session id: Int64) throws -> AuditSessionSummary {
        try connection.withDatabase { database in
            var summary = AuditSessionSummary()
            let key: [SQLiteValue] = [.integer(id)]
            let totals = try database.prepare("""
                SELECT count(*), coalesce(sum(bytes_up), 0), coalesce(sum(bytes_down), 0) FROM flows WHERE audit_session_id = ?
                """)
            try totals.bind(key)
            if try totals.step() {
                summary.flows = Int(totals.int64(at: 0))
                summary.bytesUp = totals.int64(at: 1)
                summary.bytesDown = totals.int64(at: 2)
            }
            func counts(_ sql: String) throws -> [AuditCount] {
                var out: [AuditCount] = []
                let select = try database.prepare(sql)
                try select.bind(key)
                try select.forEachRow { out.append(AuditCount($0.string(at: 0), Int($0.int64(at: 1)))) }
                return out
            }
            summary.hosts = try counts("""
                SELECT coalesce(host, server_address) AS name, count(*) AS n FROM flows WHERE audit_session_id = ?
                GROUP BY name ORDER BY n DESC, name
                """)
            // Flows whose program is not known count too, under no name (`tv top` lists them;
            // `tv audit show` left them out: a trial's 8 flows read "curl (7)").
            summary.programs = try counts("""
                SELECT program_command AS name, count(*) AS n FROM flows WHERE audit_session_id = ?
                GROUP BY name ORDER BY n DESC, name IS NULL, name
                """)
            let flowsOf = "SELECT id FROM flows WHERE audit_session_id = ?"
            if case let .integer(n) = try database.scalar("SELECT count(*) FROM packets WHERE flow_id IN (\(flowsOf))", key) {
                summary.packets = Int(n)
            }
            let captures = try database.prepare("""
                SELECT DISTINCT p.capture_seq FROM packets p JOIN captures c ON c.seq = p.capture_seq
                WHERE c.deleted_at IS NULL AND p.flow_id IN (\(flowsOf)) ORDER BY p.capture_seq
                """)
            try captures.bind(key)
            try captures.forEachRow { summary.captures.append(Int($0.int64(at: 0))) }
            if case let .integer(n) = try database.scalar("SELECT coalesce(sum(turn_count), 0) FROM content_turn_runs WHERE flow_id IN (\(flowsOf))", key) {
                summary.contentTurns = Int(n)
            }
            if case let .integer(n) = try database.scalar("SELECT count(*) FROM audit_markers WHERE session_id = ?", key) {
                summary.markers = Int(n)
            }
            return summary
        }
    }

    /// Deletes session `id` and its markers, and clears its flows' tag: the flows stay in the
    /// history but are no longer evidence, so retention may take them. Their requests' queries
    /// expire with content again: the expiry's sweep goes back to the earliest of them
    /// (`StoredExchanges.revisitQueries`), since it had gone past them while they were spared
    /// (an audit trial's `?k=SECRET` stayed in its row after the session was deleted and its
    /// content had expired).
    /// - Throws: `AuditError.noSession`, `.deleteLive`; `FlowStoreError`.
    public func delete(session id: Int64) throws -> AuditDeletion {
        try connection.withDatabase { database in
            try database.transaction {
                let select = try database.prepare("SELECT \(AuditStore.sessionColumns) WHERE s.id = ?")
                try select.bind([.integer(id)])
                guard try select.step() else { throw AuditError.noSession(id) }
                let session = AuditStore.session(select)
                guard !session.isLive else { throw AuditError.deleteLive(id) }
                if case let .integer(earliest) = try database.scalar("SELECT min(start_time) FROM flows WHERE audit_session_id = \(id)") {
                    try StoredExchanges.revisitQueries(from: earliest, database: database)
                }
                try database.execute("DELETE FROM audit_markers WHERE session_id = \(id)")
                let markers = database.changes
                try database.execute("UPDATE flows SET audit_session_id = NULL WHERE audit_session_id = \(id)")
                let flows = database.changes
                try database.execute("DELETE FROM audit_sessions WHERE id = \(id)")
                return AuditDeletion(session: session, markers: markers, flowsReleased: flows)
            }
        }
    }

    /// What every session holds, for retention: flow ids and the capture sequences holding
    /// their packets. Flows tagged with a session that no longer exists are not evidence.
    public func evidence() throws -> AuditEvidenceIDs {
        try connection.withDatabase { try AuditStore.evidence(in: $0) }
    }

    /// Every audit session's span (µs; `to` nil while it records): what `tv audit bundle` cuts
    /// the decrypted captures by, so the files meeting one are evidence.
    /// - Throws: `FlowStoreError`.
    public static func spans(in database: SQLiteDatabase) throws -> [(from: Int64, to: Int64?)] {
        var out: [(from: Int64, to: Int64?)] = []
        try database.prepare("SELECT started, ended FROM audit_sessions").forEachRow {
            out.append(($0.int64(at: 0), $0.isNull(at: 1) ? nil : $0.int64(at: 1)))
        }
        return out
    }

    /// `evidence()` over a connection the caller owns (the retention pass's).
    /// - Parameter includingCarried: also the flows carried into a session (opened before it,
    ///   still active at its start: `flowIDs(carriedInto:)`), which its bundle holds. They are
    ///   found by reading every flow started before each session (no index reaches the last
    ///   activity), so only the history's retention pass asks (every 10 minutes, and when a
    ///   limit changes), not the content writer's sweeps: an audit trial's `history.maxAge`
    ///   deleted a connection its bundle had counted as evidence.
    public static func evidence(in database: SQLiteDatabase, includingCarried: Bool = false) throws -> AuditEvidenceIDs {
        var flows: Set<Int64> = []
        var captures: Set<Int> = []
        var held = "SELECT f.id FROM flows f JOIN audit_sessions s ON s.id = f.audit_session_id"
        if includingCarried {
            held += " UNION SELECT f.id FROM audit_sessions s JOIN flows f ON f.start_time < s.started AND f.audit_session_id IS NULL"
                + " AND f.last_activity_time >= s.started AND (f.duration IS NULL OR f.start_time + f.duration >= s.started)"
        }
        let select = try database.prepare(held)
        try select.forEachRow { flows.insert($0.int64(at: 0)) }
        let files = try database.prepare("SELECT DISTINCT capture_seq FROM packets WHERE flow_id IN (\(held))")
        try files.forEachRow { captures.insert(Int($0.int64(at: 0))) }
        return AuditEvidenceIDs(captures: captures, flows: flows)
    }
}

/// Flow ids and capture sequences that are evidence of some session (Recording's
/// `AuditEvidence.known` is made from it).
public struct AuditEvidenceIDs: Sendable, Equatable {
    public var captures: Set<Int>
    public var flows: Set<Int64>
    public init(captures: Set<Int>, flows: Set<Int64>) {
        self.captures = captures
        self.flows = flows
    }
}

extension FlowStore {
    /// The audit tables (projects, sessions, markers).
    public var audit: AuditStore { AuditStore(connection: connection) }
}
