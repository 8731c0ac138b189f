/// The shared store's schema on PostgreSQL, as an ordered list of migrations (the version is
/// kept in `tv_schema`). The tables are SQLite's (`FlowSchema`) as they stand today, for what
/// travels: `flows` with the same columns, names, CHECK lists and indexes, keyed by instance and
/// id, and `instances`. What stays on the machine (content_turn_runs, captures, packets,
/// packet_counts, settings) has no table here. A new version is a new entry at the end; one
/// shipped is never edited. A column added to `flows` in `FlowSchema` gets its entry here too
/// (`PostgresSchemaTests` compares the two column lists).
///
/// Merge seam (i21-audit, issue 23): audit projects, sessions and markers travel too; their
/// tables go here as a new entry (with `instance_id` and `machine` columns), written by the
/// same batch writer.
enum PostgresSchema {
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
    ]

    /// The version after all migrations.
    static var currentVersion: Int { migrations.count }

    /// Brings the database up to `migrations.count` in one transaction, under an advisory lock so
    /// instances starting together apply each migration once.
    /// - Returns: the version found (0 for an empty database).
    /// - Throws: `FlowStoreError.newerSchema` (a newer tv wrote it; left untouched), or the
    ///   failing statement's error (left at its old version).
    @discardableResult
    static func migrate(_ connection: PGConnection, migrations: [String] = PostgresSchema.migrations) throws -> Int {
        try connection.transaction {
            // 0x7476 'tv': one lock for every tv migrating this database.
            try connection.query("SELECT pg_advisory_xact_lock(?)", [.integer(0x7476)])
            try connection.execute("CREATE TABLE IF NOT EXISTS tv_schema (version BIGINT NOT NULL)")
            var found = 0
            if case let .integer(n) = try connection.query("SELECT max(version) FROM tv_schema").first?.first ?? .null { found = Int(n) }
            guard found <= migrations.count else {
                throw FlowStoreError.newerSchema(path: connection.server, found: found, supported: migrations.count)
            }
            for version in found..<migrations.count { try connection.execute(migrations[version]) }
            if found != migrations.count {
                try connection.execute("DELETE FROM tv_schema")
                try connection.query("INSERT INTO tv_schema (version) VALUES (?)", [.integer(Int64(migrations.count))])
            }
            return found
        }
    }
}
