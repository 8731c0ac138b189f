/// The shared store's schema on PostgreSQL, as an ordered list of migrations (the version is
/// kept in `tv_schema`). The tables are SQLite's (`FlowSchema`) as they stand today, for what
/// travels: `flows` with the same columns, names, CHECK lists and indexes, keyed by instance and
/// id, and `instances`. What stays on the machine (content_turn_runs, captures, packets,
/// packet_counts, settings) has no table here. A new version is a new entry at the end; one
/// shipped is never edited. A column added to `flows` in `FlowSchema` gets its entry here too
/// (`PostgresSchemaTests` compares the two column lists).
///
enum PostgresSchema {
    /// Every table the migrations make (a test reads them out of the migrations).
    static let tableNames = ["audit_markers", "audit_projects", "audit_sessions", "client_pins", "exchanges", "flow_names", "flows",
                             "host_names", "instances", "pinned_hosts"]

    /// The SQL of each migration, oldest first.
    static let migrations: [String] = [
        // 1 (i21-pg): instances and flows.
        """
        CREATE TABLE instances (
            instance_id TEXT PRIMARY KEY,             -- InstanceIdentity.id
            machine TEXT NOT NULL,                    -- its host name when it last wrote
            first_seen BIGINT NOT NULL,               -- µs since the epoch
            last_seen BIGINT NOT NULL                 -- µs since the epoch: its last batch
        );
        CREATE TABLE flows (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            id BIGINT NOT NULL,                       -- the instance's own flow id
            start_time BIGINT NOT NULL,
            last_activity_time BIGINT NOT NULL,
            client_address TEXT NOT NULL,
            client_port BIGINT NOT NULL,
            server_address TEXT NOT NULL,
            server_port BIGINT NOT NULL,
            transport TEXT NOT NULL CHECK (transport IN ('tcp', 'udp')),
            host TEXT,
            host_origin TEXT NOT NULL
                CHECK (host_origin IN ('sni', 'connect', 'socks', 'reverse', 'quic', 'dns', 'dns_question', 'none')),
            alpn TEXT,
            tls_version TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('not_encrypted', 'encrypted', 'inspected', 'kept_private', 'failed', 'interrupted')),
            failure_reason TEXT,
            bytes_up BIGINT NOT NULL DEFAULT 0,
            bytes_down BIGINT NOT NULL DEFAULT 0,
            duration BIGINT,
            error TEXT,
            client_versions TEXT NOT NULL DEFAULT '',
            client_alpn TEXT NOT NULL DEFAULT '',
            chosen_version_source TEXT,
            cert_subject TEXT,
            cert_issuer TEXT,
            cert_sans TEXT NOT NULL DEFAULT '',
            cert_not_before BIGINT,
            cert_not_after BIGINT,
            cert_sha256 TEXT,
            packets_up BIGINT,
            packets_down BIGINT,
            client_tls_version TEXT,
            other_hosts TEXT NOT NULL DEFAULT '',
            ech_public_name BIGINT NOT NULL DEFAULT 0,
            program_pid BIGINT,
            program_command TEXT,
            program_executable TEXT,
            program_uid BIGINT,
            program_user TEXT,
            program_unknown TEXT,
            PRIMARY KEY (instance_id, id)
        );
        -- Newest-first keyset pages of the whole history, and of one instance, without a sort.
        CREATE INDEX flows_by_start_time ON flows (start_time DESC, id DESC, instance_id DESC);
        CREATE INDEX flows_by_instance_time ON flows (instance_id, start_time DESC, id DESC);
        CREATE INDEX flows_by_status_time ON flows (status, start_time);
        CREATE INDEX flows_by_program ON flows (program_command);
        CREATE INDEX flows_by_host ON flows (host);
        """,
        // 2 (merge of i21-audit): SQLite's `flows.audit_session_id`, so the two column lists stay
        // one. Audit sessions themselves do not travel yet, so it stays NULL in shared rows.
        """
        ALTER TABLE flows ADD COLUMN audit_session_id BIGINT;
        """,
        // 3 (merge of i21-audit's chain): SQLite's `flows.chain`, the server chain's SHA-256s.
        // The certificates themselves (DER) stay on the machine that saw them, as content does.
        """
        ALTER TABLE flows ADD COLUMN chain TEXT NOT NULL DEFAULT '';
        """,
        // 4 (i22-pg, issue 25): the rest of what travels, each row tagged with its instance.
        // `exchanges` are SQLite's request rows keyed by (instance, flow id, seq), with the
        // shared store's own id (the local id is not known to the mirror); their paths travel
        // without the query string (`SharedExchangeRow`). `host_names`, `pinned_hosts` and the
        // audit tables are SQLite's, keyed by instance first (`LocalTableSync` copies them).
        """
        CREATE TABLE exchanges (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            flow_id BIGINT NOT NULL,                  -- the instance's own flow id
            seq BIGINT NOT NULL,
            stream_id BIGINT,
            http_version TEXT NOT NULL,
            method TEXT NOT NULL,
            scheme TEXT,
            authority TEXT,
            path TEXT NOT NULL,
            query_removed BIGINT NOT NULL DEFAULT 0,
            status BIGINT,
            reason TEXT,
            request_body_bytes BIGINT NOT NULL DEFAULT 0,
            request_wire_bytes BIGINT NOT NULL DEFAULT 0,
            response_body_bytes BIGINT,
            response_wire_bytes BIGINT,
            content_type TEXT,
            content_encoding TEXT,
            request_time BIGINT NOT NULL,
            response_time BIGINT,
            end_time BIGINT,
            upgrade BIGINT NOT NULL DEFAULT 0,
            connect BIGINT NOT NULL DEFAULT 0,
            state TEXT NOT NULL CHECK (state IN ('open', 'complete', 'incomplete', 'answered')),
            UNIQUE (instance_id, flow_id, seq)
        );
        CREATE INDEX exchanges_by_request_time ON exchanges (request_time DESC, id DESC);
        CREATE INDEX exchanges_open ON exchanges (instance_id, flow_id) WHERE state = 'open';
        CREATE TABLE host_names (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            address TEXT NOT NULL,
            name TEXT NOT NULL,
            first_seen BIGINT NOT NULL,
            last_seen BIGINT NOT NULL,
            ttl BIGINT,
            PRIMARY KEY (instance_id, address, name)
        );
        CREATE TABLE pinned_hosts (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            host TEXT NOT NULL,
            first_seen BIGINT NOT NULL,
            last_seen BIGINT NOT NULL,
            reason TEXT NOT NULL,
            count BIGINT NOT NULL DEFAULT 1,
            PRIMARY KEY (instance_id, host)
        );
        CREATE TABLE audit_projects (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            id BIGINT NOT NULL,
            name TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            created BIGINT NOT NULL,
            PRIMARY KEY (instance_id, id)
        );
        CREATE TABLE audit_sessions (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            id BIGINT NOT NULL,
            project_id BIGINT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            started BIGINT NOT NULL,
            ended BIGINT,
            settings TEXT NOT NULL DEFAULT '{}',
            recorder_pid BIGINT,
            recorder_start_ticks BIGINT,
            PRIMARY KEY (instance_id, id)
        );
        CREATE TABLE audit_markers (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            id BIGINT NOT NULL,
            session_id BIGINT NOT NULL,
            time BIGINT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (instance_id, id)
        );
        CREATE INDEX audit_markers_by_time ON audit_markers (time);
        CREATE INDEX flows_open ON flows (instance_id) WHERE duration IS NULL;
        """,
        // 5 (i24-pg, issue 25): `--host` through the names, as SQLite's `flow_names`
        // (`SharedHostSearch`). `flow_names` holds each distinct text ever written in `host`,
        // `other_hosts`, `server_address` or `client_address`, one row per name and column bit
        // (`FlowTextSearch.columns`: 1, 2, 4, 8), kept by statement triggers on `flows` (every
        // writer's batch, one INSERT … SELECT DISTINCT over its transition table; ON CONFLICT DO
        // NOTHING, in name order, so instances writing at once never update one another's rows)
        // and filled here from the flows already there. Each column's index in start-time order
        // replaces `flows_by_host`, so a page merges its names' index scans; the trigram index
        // moves from the flows' four columns (`flows_host_trgm`, every insert paid for it) to
        // the names (`PostgresSchema.ensureHostIndexSQL`). On a store of 10 M flows this
        // migration reads every flow once and builds four indexes: minutes, once.
        // (A note on migration 2, shipped so left as it is: since i23-pg shared flows do carry
        // `audit_session_id`, the local audit session recording when the flow was first written.)
        """
        CREATE TABLE flow_names (
            name TEXT NOT NULL,
            column_bit BIGINT NOT NULL,               -- FlowTextSearch.columns' bit
            PRIMARY KEY (name, column_bit)
        );
        CREATE FUNCTION tv_flow_names_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO flow_names (name, column_bit)
            SELECT DISTINCT v.name, v.bit FROM tv_written_flows f,
                LATERAL (VALUES (f.host, 1), (NULLIF(f.other_hosts, ''), 2), (f.server_address, 4), (f.client_address, 8)) AS v (name, bit)
            WHERE v.name IS NOT NULL ORDER BY 1, 2
            ON CONFLICT DO NOTHING;
            RETURN NULL;
        END $$;
        CREATE TRIGGER flow_names_on_insert AFTER INSERT ON flows REFERENCING NEW TABLE AS tv_written_flows
            FOR EACH STATEMENT EXECUTE FUNCTION tv_flow_names_add();
        CREATE TRIGGER flow_names_on_update AFTER UPDATE ON flows REFERENCING NEW TABLE AS tv_written_flows
            FOR EACH STATEMENT EXECUTE FUNCTION tv_flow_names_add();
        INSERT INTO flow_names (name, column_bit)
            SELECT DISTINCT v.name, v.bit FROM flows f,
                LATERAL (VALUES (f.host, 1), (NULLIF(f.other_hosts, ''), 2), (f.server_address, 4), (f.client_address, 8)) AS v (name, bit)
            WHERE v.name IS NOT NULL;
        CREATE INDEX flows_by_host_time ON flows (host, start_time DESC, id DESC, instance_id DESC);
        CREATE INDEX flows_by_other_hosts_time ON flows (other_hosts, start_time DESC, id DESC, instance_id DESC) WHERE other_hosts <> '';
        CREATE INDEX flows_by_server_time ON flows (server_address, start_time DESC, id DESC, instance_id DESC);
        CREATE INDEX flows_by_client_time ON flows (client_address, start_time DESC, id DESC, instance_id DESC);
        DROP INDEX flows_by_host;
        DROP INDEX IF EXISTS flows_host_trgm;
        """,
        // 6 (session 25): host_origin gains 'http_host' (`HostOrigin.httpHost`), as SQLite's
        // migration 25. NOT VALID: the rows already there are not read again (each passed the
        // narrower list), new and updated rows are checked.
        """
        ALTER TABLE flows DROP CONSTRAINT flows_host_origin_check;
        ALTER TABLE flows ADD CONSTRAINT flows_host_origin_check
            CHECK (host_origin IN ('sni', 'connect', 'socks', 'reverse', 'quic', 'dns', 'dns_question', 'http_host', 'none')) NOT VALID;
        """,
        // 7 (session 30): the pinning memory tv writes, SQLite's `client_pins` (its migration
        // 5): per client (address and ClientHello fingerprint), host and port, and of which
        // kind. Only the host-wide `pinned_hosts` an older tv wrote travelled, so no pin made
        // since reached the shared store (a trial).
        """
        CREATE TABLE client_pins (
            instance_id TEXT NOT NULL,
            machine TEXT NOT NULL,
            client_address TEXT NOT NULL,
            client_hello TEXT NOT NULL,
            host TEXT NOT NULL,
            port INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('pinned', 'lacks_root')),
            first_seen BIGINT NOT NULL,
            last_seen BIGINT NOT NULL,
            reason TEXT NOT NULL,
            count BIGINT NOT NULL DEFAULT 1,
            PRIMARY KEY (instance_id, client_address, client_hello, host, port)
        );
        CREATE INDEX client_pins_by_host ON client_pins (host);
        """,
        // 8 (session 31): when a request's last byte was read (SQLite's migration 27), for
        // HAR's `send`.
        """
        ALTER TABLE exchanges ADD COLUMN request_end_time BIGINT;
        """,
        // 9 (upstream-verify): what tv's check of the server's certificate found (SQLite's
        // migration 28), so a flow inspected under --upstream-insecure says so on every machine.
        """
        ALTER TABLE flows ADD COLUMN cert_verified BIGINT;
        ALTER TABLE flows ADD COLUMN cert_problem TEXT;
        """,
        // 10 (session 41): a DNS query's QTYPE and the server its program asked, and where
        // `other_hosts` came from (SQLite's migration 29).
        """
        ALTER TABLE flows ADD COLUMN dns_type BIGINT;
        ALTER TABLE flows ADD COLUMN dns_asked TEXT;
        ALTER TABLE flows ADD COLUMN dns_asked_address TEXT;
        ALTER TABLE flows ADD COLUMN other_hosts_origin TEXT;
        """,
        // 11 (h2bomb): requests counted on a connection without their rows (SQLite's migration 30).
        """
        ALTER TABLE flows ADD COLUMN requests_left_out BIGINT;
        """,
        // 12 (h2rows): an exchange's state may be 'cancelled' (`ExchangeState.cancelled`,
        // SQLite's migration 32). NOT VALID, as 6.
        """
        ALTER TABLE exchanges DROP CONSTRAINT exchanges_state_check;
        ALTER TABLE exchanges ADD CONSTRAINT exchanges_state_check
            CHECK (state IN ('open', 'complete', 'incomplete', 'answered', 'cancelled')) NOT VALID;
        """,
    ]

    /// The trigram index `--host` reads on the shared store (`SharedHostSearch.namesSQL`): a
    /// GIN index over the names (`flow_names`) with `pg_trgm`'s `gin_trgm_ops`, so an
    /// `ILIKE '%text%'` is a bitmap index scan, not a read of every name.
    static let hostIndexName = "flow_names_trgm"

    /// Makes the `pg_trgm` extension (when this role may; PostgreSQL 13+ lets a database owner
    /// make this trusted extension) and `hostIndexName` when they are missing. A role that may
    /// not is no failure: the reads go on without the index (`hasHostIndex` says so). Runs in a
    /// PL/pgSQL block, so a refusal rolls back only itself, not the migration's transaction.
    static let ensureHostIndexSQL = """
        DO $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
                CREATE EXTENSION pg_trgm;
            END IF;
            CREATE INDEX IF NOT EXISTS \(hostIndexName) ON flow_names USING gin (name gin_trgm_ops);
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END $$;
        """

    /// Whether `hostIndexName` is there (in the search path, where the migration made it).
    /// `to_regclass`, not the `pg_indexes` view: every open asks, and in a new session planning
    /// the view's catalog join took 1-5 ms (server log, 10 M-flow store, load 5), the lookup a
    /// few µs.
    /// - Throws: `FlowStoreError`.
    static func hasHostIndex(_ connection: PGConnection) throws -> Bool {
        let rows = try connection.query("SELECT to_regclass(?) IS NOT NULL", [.text(hostIndexName)])
        return rows.first?.first == .integer(1)
    }

    /// The version after all migrations.
    static var currentVersion: Int { migrations.count }

    /// Brings the database up to `migrations.count` in one transaction, under an advisory lock so
    /// instances starting together apply each migration once.
    /// - Returns: the version found (0 for an empty database).
    /// - Throws: `FlowStoreError.sharedStoreNewerSchema` (a newer tv wrote it; left untouched), or the
    ///   failing statement's error (left at its old version).
    @discardableResult
    static func migrate(_ connection: PGConnection, migrations: [String] = PostgresSchema.migrations) throws -> Int {
        // A store already at this version is read without DDL or locks, so a role that may only
        // read (GRANT SELECT) reads it: `CREATE TABLE IF NOT EXISTS` needs CREATE on the schema
        // even when the table is there (a trial's read-only role was refused on every command).
        if migrations.count == PostgresSchema.migrations.count,
           case .integer(let present)? = try connection.query("SELECT to_regclass('tv_schema') IS NOT NULL").first?.first, present == 1,
           case .integer(let version)? = try connection.query("SELECT max(version) FROM tv_schema").first?.first {
            if version > migrations.count {
                throw FlowStoreError.sharedStoreNewerSchema(server: connection.server, found: Int(version), supported: migrations.count)
            }
            if version == migrations.count {
                // Made when missing and this role may (the block swallows a refusal).
                if try !hasHostIndex(connection) { try connection.execute(ensureHostIndexSQL) }
                return Int(version)
            }
        }
        return try connection.transaction {
            // 0x7476 'tv': one lock for every tv migrating this database.
            try connection.query("SELECT pg_advisory_xact_lock(?)", [.integer(0x7476)])
            try connection.execute("CREATE TABLE IF NOT EXISTS tv_schema (version BIGINT NOT NULL)")
            var found = 0
            if case let .integer(n) = try connection.query("SELECT max(version) FROM tv_schema").first?.first ?? .null { found = Int(n) }
            guard found <= migrations.count else {
                throw FlowStoreError.sharedStoreNewerSchema(server: connection.server, found: found, supported: migrations.count)
            }
            // A database that is not tv's (its own `flows`, and no tv_schema before this one) was
            // refused with PostgreSQL's "relation already exists" and advice about permissions
            // (a trial); its tables are left as they are either way (the transaction rolls back).
            // Any of its tables (only flows, instances and exchanges were looked for: a database
            // with its own `host_names` got the permissions advice again, a trial).
            if found == 0, case .text(let taken)? = try connection.query(
                "SELECT string_agg(n, ', ' ORDER BY n) FROM unnest(ARRAY[" + tableNames.map { "'\($0)'" }.joined(separator: ", ") + "]) AS n WHERE to_regclass(n) IS NOT NULL").first?.first,
               !taken.isEmpty {
                throw FlowStoreError.sharedStoreNotTvs(server: connection.server, tables: taken)
            }
            for version in found..<migrations.count { try connection.execute(migrations[version]) }
            // Only when missing: `CREATE INDEX IF NOT EXISTS` takes its SHARE lock on
            // `flow_names` before it looks for the index, so run on every open it made each
            // reader wait for the writers' open batches (their triggers insert names) and them
            // for it.
            if migrations.count == PostgresSchema.migrations.count, try !hasHostIndex(connection) {
                try connection.execute(ensureHostIndexSQL)
            }
            if found != migrations.count {
                try connection.execute("DELETE FROM tv_schema")
                try connection.query("INSERT INTO tv_schema (version) VALUES (?)", [.integer(Int64(migrations.count))])
            }
            return found
        }
    }
}
