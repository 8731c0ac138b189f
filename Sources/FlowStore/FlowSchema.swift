import Foundation
import Synchronization

/// The flow database's schema, as an ordered list of migrations.
///
/// `migrations[i]` takes a file from `PRAGMA user_version` i to i+1. A new version is a new entry
/// at the end; an entry already shipped is never edited. `migrate` applies what is missing in one
/// transaction, so a file is either fully at the new version or untouched.
public enum FlowSchema {
    /// The SQL of each migration, oldest first.
    public static let migrations: [String] = [
        // 1: flows, settings, pinned hosts, host names.
        """
        CREATE TABLE flows (
            id INTEGER PRIMARY KEY,
            start_time INTEGER NOT NULL,              -- µs since the epoch
            last_activity_time INTEGER NOT NULL,      -- µs since the epoch
            client_address TEXT NOT NULL,
            client_port INTEGER NOT NULL,
            server_address TEXT NOT NULL,
            server_port INTEGER NOT NULL,
            transport TEXT NOT NULL CHECK (transport IN ('tcp', 'udp')),
            host TEXT,
            host_origin TEXT NOT NULL
                CHECK (host_origin IN ('sni', 'connect', 'socks', 'reverse', 'dns', 'none')),
            alpn TEXT,
            tls_version TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('not_encrypted', 'encrypted', 'inspected', 'kept_private', 'failed')),
            failure_reason TEXT,
            bytes_up INTEGER NOT NULL DEFAULT 0,
            bytes_down INTEGER NOT NULL DEFAULT 0,
            duration INTEGER,                         -- µs; NULL while open
            error TEXT,
            client_versions TEXT NOT NULL DEFAULT '', -- TextList
            client_alpn TEXT NOT NULL DEFAULT '',     -- TextList
            chosen_version_source TEXT,
            cert_subject TEXT,
            cert_issuer TEXT,
            cert_sans TEXT NOT NULL DEFAULT '',       -- TextList
            cert_not_before INTEGER,                  -- seconds since the epoch
            cert_not_after INTEGER,                   -- seconds since the epoch
            cert_sha256 TEXT                          -- lowercase hex
        );
        -- (start_time, rowid) order serves newest-first keyset pages without a sort.
        CREATE INDEX flows_by_start_time ON flows (start_time);
        CREATE INDEX flows_by_host ON flows (host);

        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE pinned_hosts (
            host TEXT PRIMARY KEY,
            first_seen INTEGER NOT NULL,              -- µs since the epoch
            last_seen INTEGER NOT NULL,               -- µs since the epoch
            reason TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1
        ) WITHOUT ROWID;

        CREATE TABLE host_names (
            address TEXT NOT NULL,
            name TEXT NOT NULL,
            first_seen INTEGER NOT NULL,              -- µs since the epoch
            last_seen INTEGER NOT NULL,               -- µs since the epoch
            PRIMARY KEY (address, name)
        ) WITHOUT ROWID;
        """,
        // 2: the index of decrypted content (Recording.ContentStore); the bytes live in
        // $TV_HOME/content/content-NNNNNNNN.seg. No foreign key to flows: content may be written
        // before (or without) its flow row, and expiry removes it on its own clock.
        """
        CREATE TABLE content_turns (
            flow_id INTEGER NOT NULL,
            turn INTEGER NOT NULL,                    -- 1-based, in the order turns started
            direction TEXT NOT NULL
                CHECK (direction IN ('client_to_server', 'server_to_client')),
            start_offset INTEGER NOT NULL,            -- µs since the flow's first byte
            kept_bytes INTEGER NOT NULL,              -- bytes in the segment
            seen_bytes INTEGER NOT NULL,              -- bytes the turn carried
            truncated INTEGER NOT NULL DEFAULT 0,     -- 1: the budget cut it; its side stopped
            cut_by TEXT CHECK (cut_by IN ('turn_limit', 'flow_budget')),
            incomplete INTEGER NOT NULL DEFAULT 0,    -- 1: kept bytes were lost (queue full, switch off)
            segment INTEGER NOT NULL,                 -- NNNNNNNN of content-NNNNNNNN.seg
            segment_offset INTEGER NOT NULL,          -- byte offset of the turn in the segment
            recorded_at INTEGER NOT NULL,             -- µs since the epoch, when it was written
            PRIMARY KEY (flow_id, turn)
        ) WITHOUT ROWID;
        CREATE INDEX content_turns_by_segment ON content_turns (segment);
        CREATE INDEX content_turns_by_recorded_at ON content_turns (recorded_at);
        """,
        // 3: packet counts of flows the TUN front-end counts (UDP), and the TTL of DNS answers.
        """
        ALTER TABLE flows ADD COLUMN packets_up INTEGER;      -- NULL: not counted (TCP)
        ALTER TABLE flows ADD COLUMN packets_down INTEGER;
        ALTER TABLE host_names ADD COLUMN ttl INTEGER;        -- seconds, of the last answer seen
        """,
        // 4: the status 'interrupted' (a flow whose session ended without closing it: killed,
        // crashed, power lost), and which writer wrote each flow, so that a starting session
        // closes the flows a dead writer left open and never those of a live one (`tv exec`
        // beside `tv run`). SQLite cannot change a CHECK in place, so `flows` is rebuilt
        // (sqlite.org/lang_altertable.html §7, "other kinds of table schema changes"); rows keep
        // their ids. Flows open before this version have no writer: none of today's writers can
        // own them, so they are closed here, as interrupted at their last known activity.
        """
        CREATE TABLE flows_v4 (
            id INTEGER PRIMARY KEY,
            start_time INTEGER NOT NULL,              -- µs since the epoch
            last_activity_time INTEGER NOT NULL,      -- µs since the epoch
            client_address TEXT NOT NULL,
            client_port INTEGER NOT NULL,
            server_address TEXT NOT NULL,
            server_port INTEGER NOT NULL,
            transport TEXT NOT NULL CHECK (transport IN ('tcp', 'udp')),
            host TEXT,
            host_origin TEXT NOT NULL
                CHECK (host_origin IN ('sni', 'connect', 'socks', 'reverse', 'dns', 'none')),
            alpn TEXT,
            tls_version TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('not_encrypted', 'encrypted', 'inspected', 'kept_private', 'failed', 'interrupted')),
            failure_reason TEXT,
            bytes_up INTEGER NOT NULL DEFAULT 0,
            bytes_down INTEGER NOT NULL DEFAULT 0,
            duration INTEGER,                         -- µs; NULL while open
            error TEXT,
            client_versions TEXT NOT NULL DEFAULT '', -- TextList
            client_alpn TEXT NOT NULL DEFAULT '',     -- TextList
            chosen_version_source TEXT,
            cert_subject TEXT,
            cert_issuer TEXT,
            cert_sans TEXT NOT NULL DEFAULT '',       -- TextList
            cert_not_before INTEGER,                  -- seconds since the epoch
            cert_not_after INTEGER,                   -- seconds since the epoch
            cert_sha256 TEXT,                         -- lowercase hex
            packets_up INTEGER,                       -- NULL: not counted (TCP)
            packets_down INTEGER,
            writer INTEGER                            -- flow_writers.id; NULL before version 4
        );
        INSERT INTO flows_v4 (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                              transport, host, host_origin, alpn, tls_version, status, failure_reason, bytes_up, bytes_down,
                              duration, error, client_versions, client_alpn, chosen_version_source, cert_subject, cert_issuer,
                              cert_sans, cert_not_before, cert_not_after, cert_sha256, packets_up, packets_down)
            SELECT id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                   transport, host, host_origin, alpn, tls_version, status, failure_reason, bytes_up, bytes_down,
                   duration, error, client_versions, client_alpn, chosen_version_source, cert_subject, cert_issuer,
                   cert_sans, cert_not_before, cert_not_after, cert_sha256, packets_up, packets_down
            FROM flows;
        DROP TABLE flows;
        ALTER TABLE flows_v4 RENAME TO flows;
        CREATE INDEX flows_by_start_time ON flows (start_time);
        CREATE INDEX flows_by_host ON flows (host);
        UPDATE flows SET status = 'interrupted', duration = max(0, last_activity_time - start_time)
            WHERE duration IS NULL;

        CREATE TABLE flow_writers (
            id INTEGER PRIMARY KEY,
            pid INTEGER NOT NULL,
            started INTEGER NOT NULL,                 -- µs since the epoch
            ended INTEGER                             -- µs since the epoch; NULL while it runs
        );
        """,
        // 5: pinning memory keyed by client, host and port (issue 14): what tv remembered about
        // one client (its address and ClientHello fingerprint; a later issue adds the program)
        // for one host and port, and of which kind. `pinned_hosts` stays as it was: the
        // host-wide pins an older tv remembered for every client and port, still honoured and
        // listed until `tv pinned forget HOST`; nothing new is written there.
        """
        CREATE TABLE client_pins (
            client_address TEXT NOT NULL,
            client_hello TEXT NOT NULL,               -- ClientHelloFingerprint, 12 hex digits
            host TEXT NOT NULL,                       -- lowercased, no trailing dot
            port INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('pinned', 'lacks_root')),
            first_seen INTEGER NOT NULL,              -- µs since the epoch
            last_seen INTEGER NOT NULL,               -- µs since the epoch
            reason TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (client_address, client_hello, host, port)
        ) WITHOUT ROWID;
        CREATE INDEX client_pins_by_host ON client_pins (host);
        """,
        // 6: the client leg's TLS version, beside `tls_version` (the server leg's). An inspected
        // flow has two handshakes, client to tv and tv to server, which can differ (TLS 1.3 to tv,
        // 1.2 to a server that speaks no more); a passed-through flow has one, so both columns
        // hold the same version. Rows written before this version keep NULL here.
        """
        ALTER TABLE flows ADD COLUMN client_tls_version TEXT;
        """,
        // 7 (issue 16): one row per HTTP exchange read inside a flow
        // (`ExchangeRecord`, `ExchangeColumns`). Metadata only: without content.keep `path` has no
        // query (`query_removed` says one was there); header values and bodies are never here.
        // `(flow_id, seq)` is the writer's upsert key; `id` is SQLite's, stable once inserted.
        """
        CREATE TABLE exchanges (
            id INTEGER PRIMARY KEY,
            flow_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,                     -- 1-based order of the request in the flow
            stream_id INTEGER,                        -- HTTP/2 stream id; NULL for HTTP/1
            http_version TEXT NOT NULL,               -- 'HTTP/1.0', 'HTTP/1.1', 'HTTP/2'
            method TEXT NOT NULL,
            scheme TEXT,                              -- 'https', 'http'
            authority TEXT,                           -- host[:port]
            path TEXT NOT NULL,                       -- without the query unless content was kept
            query_removed INTEGER NOT NULL DEFAULT 0, -- 1: a query was there and not kept
            status INTEGER,                           -- final status; NULL: no response read
            reason TEXT,
            request_body_bytes INTEGER NOT NULL DEFAULT 0,  -- transfer coding removed
            request_wire_bytes INTEGER NOT NULL DEFAULT 0,  -- as sent (chunk framing included)
            response_body_bytes INTEGER,
            response_wire_bytes INTEGER,
            content_type TEXT,
            content_encoding TEXT,
            request_time INTEGER NOT NULL,            -- µs since the epoch: first request byte
            response_time INTEGER,                    -- µs since the epoch: first response byte
            end_time INTEGER,                         -- µs since the epoch; NULL while open
            upgrade INTEGER NOT NULL DEFAULT 0,
            connect INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL CHECK (state IN ('open', 'complete', 'incomplete')),
            UNIQUE (flow_id, seq)
        );
        -- (request_time, id) order serves newest-first keyset pages.
        CREATE INDEX exchanges_by_request_time ON exchanges (request_time);
        """,
        // 8 (issue 17): capture files and packet rows. `captures` lists the pcapng files
        // of $TV_HOME/captures/capture-NNNNNN.pcapng (a deleted file keeps its row, with
        // `deleted_at`, so its sequence number is never given again); `packets` keeps the first
        // 500 packets of a flow with where each one's Enhanced Packet Block starts; `packet_counts`
        // counts all of a flow's captured packets. No foreign keys: a packet may be written before
        // its flow row, and a capture may be deleted while its rows stay.
        """
        CREATE TABLE captures (
            seq INTEGER PRIMARY KEY,                  -- NNNNNN of capture-NNNNNN.pcapng
            path TEXT NOT NULL,
            started_at INTEGER NOT NULL,              -- µs since the epoch
            ended_at INTEGER,                         -- µs since the epoch; NULL while recording
            bytes INTEGER NOT NULL DEFAULT 0,         -- bytes written (whole blocks)
            packets INTEGER NOT NULL DEFAULT 0,
            snaplen INTEGER NOT NULL,                 -- the file's if_snaplen (0: none)
            recording INTEGER NOT NULL DEFAULT 1,     -- 1 while a writer may still append
            deleted_at INTEGER                        -- µs since the epoch; the file is gone
        );
        CREATE TABLE packets (
            flow_id INTEGER NOT NULL,
            n INTEGER NOT NULL,                       -- 1-based index of the packet in its flow
            capture_seq INTEGER NOT NULL,             -- captures.seq
            file_offset INTEGER NOT NULL,             -- byte offset of the packet's block in the file
            time_us INTEGER NOT NULL,                 -- µs since the epoch
            direction TEXT NOT NULL
                CHECK (direction IN ('client_to_server', 'server_to_client')),
            orig_len INTEGER NOT NULL,                -- bytes on the wire
            incl_len INTEGER NOT NULL,                -- bytes in the file (the snap length's cut)
            tcp_flags INTEGER,                        -- NULL: not TCP
            meaning TEXT NOT NULL CHECK (meaning IN
                ('opened', 'accepted', 'data', 'delivery_confirmed', 'finished_sending', 'cut_off')),
            PRIMARY KEY (flow_id, n)
        ) WITHOUT ROWID;
        CREATE INDEX packets_by_capture ON packets (capture_seq);
        CREATE TABLE packet_counts (
            flow_id INTEGER PRIMARY KEY,
            packets INTEGER NOT NULL                  -- every packet captured for the flow
        );
        """,
        // 9 (issue 18): names from DNS answers and from QUIC Initial packets.
        // host_origin gains 'quic' (the SNI read from QUIC Initials) and 'dns_question' (a DNS
        // query flow, named after its question); 'dns' now means inferred from a DNS answer for
        // the server address, and every 'dns' row so far was a query flow. Only the CHECK list
        // widens, so the table's stored SQL is edited in place (sqlite.org/lang_altertable.html
        // §7, the simpler procedure for constraints) instead of rebuilding `flows`, whatever
        // columns other migrations added; the ALTERs after it change the schema cookie, so other
        // connections reread the schema.
        // other_hosts: the address's other live names when the name was inferred (TextList);
        // ech_public_name: 1 when the host is the outer name of an ECH ClientHello.
        """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
            SET sql = replace(sql, '''reverse'', ''dns'', ''none'')', '''reverse'', ''quic'', ''dns'', ''dns_question'', ''none'')')
            WHERE type = 'table' AND name = 'flows';
        PRAGMA writable_schema = RESET;
        UPDATE flows SET host_origin = 'dns_question' WHERE host_origin = 'dns';
        ALTER TABLE flows ADD COLUMN other_hosts TEXT NOT NULL DEFAULT '';   -- TextList
        ALTER TABLE flows ADD COLUMN ech_public_name INTEGER NOT NULL DEFAULT 0;
        """,
        // 10 (issue 18): the program behind each flow, written by the program lookup's
        // own event (`FlowEvent.program`), never by the whole-record upsert. Known: pid, command
        // name, executable, the socket owner's uid and user name; not known: `program_unknown`
        // (a `ProgramUnknown` raw value). NULL everywhere: not looked up (an older row).
        // `tv flows --program NAME` reads through the index.
        """
        ALTER TABLE flows ADD COLUMN program_pid INTEGER;
        ALTER TABLE flows ADD COLUMN program_command TEXT;
        ALTER TABLE flows ADD COLUMN program_executable TEXT;
        ALTER TABLE flows ADD COLUMN program_uid INTEGER;
        ALTER TABLE flows ADD COLUMN program_user TEXT;
        ALTER TABLE flows ADD COLUMN program_unknown TEXT;
        CREATE INDEX flows_by_program ON flows (program_command);
        """,
        // 11 (issue 19): the history at scale. `flows_text` is an FTS5 index
        // (trigram tokenizer, SQLite 3.34+; sqlite.org/fts5.html §4.3.5) over the host, the other
        // names its address had (`other_hosts`, migration 9) and both addresses, kept by triggers, so
        // `tv flows --host TEXT` finds a substring of three or
        // more characters without reading the table. It is an external-content table (its text is
        // read from `flows`), so it costs the index alone. An update touches it only when one of
        // the four columns changed (the writer upserts every flow several times). `status` gets
        // an index with the time, so `--status` pages walk it newest first.
        """
        CREATE VIRTUAL TABLE flows_text USING fts5(
            host, other_hosts, server_address, client_address,
            content = 'flows', content_rowid = 'id', tokenize = 'trigram');
        INSERT INTO flows_text (flows_text) VALUES ('rebuild');
        CREATE TRIGGER flows_text_insert AFTER INSERT ON flows BEGIN
            INSERT INTO flows_text (rowid, host, other_hosts, server_address, client_address)
                VALUES (new.id, new.host, new.other_hosts, new.server_address, new.client_address);
        END;
        CREATE TRIGGER flows_text_delete AFTER DELETE ON flows BEGIN
            INSERT INTO flows_text (flows_text, rowid, host, other_hosts, server_address, client_address)
                VALUES ('delete', old.id, old.host, old.other_hosts, old.server_address, old.client_address);
        END;
        CREATE TRIGGER flows_text_update AFTER UPDATE OF host, other_hosts, server_address, client_address ON flows
            WHEN old.host IS NOT new.host OR old.other_hosts IS NOT new.other_hosts
                 OR old.server_address IS NOT new.server_address
                 OR old.client_address IS NOT new.client_address BEGIN
            INSERT INTO flows_text (flows_text, rowid, host, other_hosts, server_address, client_address)
                VALUES ('delete', old.id, old.host, old.other_hosts, old.server_address, old.client_address);
            INSERT INTO flows_text (rowid, host, other_hosts, server_address, client_address)
                VALUES (new.id, new.host, new.other_hosts, new.server_address, new.client_address);
        END;
        CREATE INDEX flows_by_status_time ON flows (status, start_time);
        """,
        // 12 (issue 23, branch i21-audit): audit projects, sessions and markers (`AuditStore`).
        // A session holds every flow first written while it was open, by any writer on this
        // file (`tv run`, `tv exec`): the writer's upsert sets `flows.audit_session_id` from the
        // live session on insert and never changes it after; the flow's packets, captures and
        // kept content follow its id. At most one session records at a time:
        // `audit_sessions_live` is a unique index over `ended IS NULL` for rows with no end.
        // Deleting a session deletes its markers and clears the tag (its evidence then ages
        // under the retention limits like any other flow).
        """
        CREATE TABLE audit_projects (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            note TEXT NOT NULL DEFAULT '',
            created INTEGER NOT NULL                  -- µs since the epoch
        );
        CREATE TABLE audit_sessions (
            id INTEGER PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES audit_projects (id),
            note TEXT NOT NULL DEFAULT '',
            started INTEGER NOT NULL,                 -- µs since the epoch
            ended INTEGER,                            -- µs since the epoch; NULL while recording
            settings TEXT NOT NULL DEFAULT '{}'       -- JSON object: mode and settings it ran with
        );
        CREATE UNIQUE INDEX audit_sessions_live ON audit_sessions ((ended IS NULL)) WHERE ended IS NULL;
        CREATE INDEX audit_sessions_by_project ON audit_sessions (project_id);
        CREATE TABLE audit_markers (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES audit_sessions (id),
            time INTEGER NOT NULL,                    -- µs since the epoch
            text TEXT NOT NULL
        );
        CREATE INDEX audit_markers_by_time ON audit_markers (time);
        ALTER TABLE flows ADD COLUMN audit_session_id INTEGER;   -- audit_sessions.id; NULL: none
        CREATE INDEX flows_by_audit_session ON flows (audit_session_id) WHERE audit_session_id IS NOT NULL;
        """,
        // 13 (issue 21, branch i21-capdedupe, recording small requests): the turns index keeps one secondary
        // index, on (segment, recorded_at), in place of one on each column. Every turn written
        // updated three b-trees and now updates two, and a sweep's per-segment counts (`GROUP BY
        // segment` with `recorded_at` compared) read this index alone instead of looking each row
        // up in the table; expiry deletes segment by segment through it.
        """
        DROP INDEX content_turns_by_segment;
        DROP INDEX content_turns_by_recorded_at;
        CREATE INDEX content_turns_by_segment_time ON content_turns (segment, recorded_at);
        """,
        // 14 (issue 16, branch i21-exchperf): an exchange's state may be 'answered' (`ExchangeState`: tv
        // answered the request itself, in the server's place). SQLite cannot change a CHECK in
        // place: the table is made again under its name, with its rows, ids and indexes.
        """
        ALTER TABLE exchanges RENAME TO exchanges_before_answered;
        CREATE TABLE exchanges (
            id INTEGER PRIMARY KEY,
            flow_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            stream_id INTEGER,
            http_version TEXT NOT NULL,
            method TEXT NOT NULL,
            scheme TEXT,
            authority TEXT,
            path TEXT NOT NULL,
            query_removed INTEGER NOT NULL DEFAULT 0,
            status INTEGER,
            reason TEXT,
            request_body_bytes INTEGER NOT NULL DEFAULT 0,
            request_wire_bytes INTEGER NOT NULL DEFAULT 0,
            response_body_bytes INTEGER,
            response_wire_bytes INTEGER,
            content_type TEXT,
            content_encoding TEXT,
            request_time INTEGER NOT NULL,
            response_time INTEGER,
            end_time INTEGER,
            upgrade INTEGER NOT NULL DEFAULT 0,
            connect INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL CHECK (state IN ('open', 'complete', 'incomplete', 'answered')),
            UNIQUE (flow_id, seq)
        );
        INSERT INTO exchanges SELECT * FROM exchanges_before_answered;
        DROP TABLE exchanges_before_answered;
        CREATE INDEX exchanges_by_request_time ON exchanges (request_time);
        """,
        // 15 (issue 19's benchmark, branch i21-bigstore): what a million flows showed.
        // `--program` pages walk `flows_by_program_time` newest first (the program's command
        // name, then the time) instead of sorting every flow of the program; it replaces
        // `flows_by_program`, which it covers. `flow_activity` counts flows started per minute
        // (span 60) and per hour (span 3600; bucket = start_time / span in µs), kept by
        // triggers on `flows` (an insert adds one, a delete, retention's included, takes one
        // away; a changed start time moves it), so `tv activity` sums at most a bucket per
        // minute of its stretch instead of reading one index entry per flow
        // (`FlowActivityPlan`). Buckets whose count fell to 0 stay, as 0.
        // `flows_by_host` goes: no query reads it since `--host` reads `flows_text` (migration
        // 11), and every flow paid for it. `flows_open` and `exchanges_open` are partial indexes
        // of what is still open (a handful of rows), so closing a writer's open flows (a session's
        // end, a dead writer found at start; `FlowWriterRegistry`) no longer reads every row.
        """
        CREATE INDEX flows_by_program_time ON flows (program_command, start_time);
        DROP INDEX flows_by_program;
        DROP INDEX flows_by_host;
        CREATE INDEX flows_open ON flows (writer) WHERE duration IS NULL;
        CREATE INDEX exchanges_open ON exchanges (flow_id) WHERE state = 'open';
        CREATE TABLE flow_activity (
            span INTEGER NOT NULL,                    -- seconds: 60 or 3600
            bucket INTEGER NOT NULL,                  -- start_time / (span × 1,000,000)
            flows INTEGER NOT NULL,
            PRIMARY KEY (span, bucket)
        ) WITHOUT ROWID;
        INSERT INTO flow_activity (span, bucket, flows)
            SELECT 60, start_time / 60000000, count(*) FROM flows GROUP BY 2;
        INSERT INTO flow_activity (span, bucket, flows)
            SELECT 3600, start_time / 3600000000, count(*) FROM flows GROUP BY 2;
        CREATE TRIGGER flow_activity_insert AFTER INSERT ON flows BEGIN
            INSERT INTO flow_activity (span, bucket, flows)
                VALUES (60, new.start_time / 60000000, 1), (3600, new.start_time / 3600000000, 1)
                ON CONFLICT (span, bucket) DO UPDATE SET flows = flows + 1;
        END;
        CREATE TRIGGER flow_activity_delete AFTER DELETE ON flows BEGIN
            UPDATE flow_activity SET flows = flows - 1 WHERE span = 60 AND bucket = old.start_time / 60000000;
            UPDATE flow_activity SET flows = flows - 1 WHERE span = 3600 AND bucket = old.start_time / 3600000000;
        END;
        CREATE TRIGGER flow_activity_move AFTER UPDATE OF start_time ON flows
            WHEN old.start_time / 60000000 IS NOT new.start_time / 60000000 BEGIN
            UPDATE flow_activity SET flows = flows - 1 WHERE span = 60 AND bucket = old.start_time / 60000000;
            UPDATE flow_activity SET flows = flows - 1 WHERE span = 3600 AND bucket = old.start_time / 3600000000;
            INSERT INTO flow_activity (span, bucket, flows)
                VALUES (60, new.start_time / 60000000, 1), (3600, new.start_time / 3600000000, 1)
                ON CONFLICT (span, bucket) DO UPDATE SET flows = flows + 1;
        END;
        """,
        // 16 (issue 23, branch i21-audit): the process recording a session for as
        // long as it runs (`tv run --audit`; `AuditRecorder`): pid and start time in clock ticks
        // since boot. NULL for a session started by `tv audit start`. A live session whose
        // recorder is gone (killed) is closed by the next `tv run` / `tv audit start`.
        """
        ALTER TABLE audit_sessions ADD COLUMN recorder_pid INTEGER;
        ALTER TABLE audit_sessions ADD COLUMN recorder_start_ticks INTEGER;
        """,
        // 17 (issue 23, branch i21-audit): the server certificate chain the
        // upstream leg saw: each certificate's DER once, by SHA-256 (`certificates`), and each
        // flow's chain as those fingerprints, leaf first, space-separated (`flows.chain`; empty
        // when no chain was seen).
        """
        CREATE TABLE certificates (
            sha256 TEXT PRIMARY KEY,                  -- lowercase hex of the DER's SHA-256
            der BLOB NOT NULL
        ) WITHOUT ROWID;
        ALTER TABLE flows ADD COLUMN chain TEXT NOT NULL DEFAULT '';
        """,
        // 18 (issue 23, branch i22-audit): when a certificate's DER last reached the writer (µs
        // since the epoch; 0 for rows from before). Retention prunes a certificate no flow's
        // chain names once this is over an hour old; the loops hand a DER again after 30 minutes
        // (`SentCertificates`), so a chain written later never names a pruned row.
        """
        ALTER TABLE certificates ADD COLUMN stored_at INTEGER NOT NULL DEFAULT 0;
        """,
        // 19 (issue 21, branch i22-content, recording small requests): the turns index packs the
        // turns of one flow written in one batch into one row (`content_turn_runs`, read and
        // written by Recording's `TurnRunText`), so a batch of small requests updates two b-trees
        // once per flow instead of once per turn. `turns` holds each turn as
        // `turn,direction,start_offset,kept_bytes,seen_bytes,truncated,cut_by,incomplete,segment_offset`
        // (decimal; direction `c`/`s`; cut_by empty, `t` turn_limit, `f` flow_budget), turns
        // separated by `;`. `turn_count` and `kept_bytes` (the sum) let totals and retention count
        // turns without reading `turns`. The old rows become runs grouped as the writer wrote
        // them (one flow, one segment, one `recorded_at`), every value carried over as it was.
        """
        CREATE TABLE content_turn_runs (
            flow_id INTEGER NOT NULL,
            first_turn INTEGER NOT NULL,              -- the lowest turn number in `turns`
            segment INTEGER NOT NULL,                 -- NNNNNNNN of content-NNNNNNNN.seg
            recorded_at INTEGER NOT NULL,             -- µs since the epoch, when it was written
            turn_count INTEGER NOT NULL,              -- turns in `turns`
            kept_bytes INTEGER NOT NULL,              -- their kept bytes, summed
            turns TEXT NOT NULL,                      -- the packed turns (see above)
            PRIMARY KEY (flow_id, first_turn)
        ) WITHOUT ROWID;
        CREATE INDEX content_turn_runs_by_segment_time ON content_turn_runs (segment, recorded_at, turn_count);
        INSERT INTO content_turn_runs (flow_id, first_turn, segment, recorded_at, turn_count, kept_bytes, turns)
            SELECT flow_id, min(turn), segment, recorded_at, count(*), sum(kept_bytes), group_concat(packed, ';')
            FROM (SELECT flow_id, turn, segment, recorded_at, kept_bytes,
                         turn || ','
                         || CASE direction WHEN 'client_to_server' THEN 'c' WHEN 'server_to_client' THEN 's' ELSE direction END
                         || ',' || start_offset || ',' || kept_bytes || ',' || seen_bytes || ',' || truncated || ','
                         || CASE cut_by WHEN 'turn_limit' THEN 't' WHEN 'flow_budget' THEN 'f' ELSE ifnull(cut_by, '') END
                         || ',' || incomplete || ',' || segment_offset AS packed
                  FROM content_turns ORDER BY flow_id, segment, recorded_at, turn)
            GROUP BY flow_id, segment, recorded_at;
        DROP TABLE content_turns;
        """,
        // 20 (issue 19 at a million flows, branch i22-bigstore): `--host` searches the distinct
        // names, not the flows. The trigram index over every flow (`flows_text`, migration 11)
        // cost ~40 % of an insert and returned a text's flows by id, so a page sorted all of
        // them. Now `flow_names` holds each distinct text ever written in `host`, `other_hosts`,
        // `server_address` or `client_address` once (`columns`: in which of them, bits 1, 2, 4,
        // 8), kept by triggers on `flows` (a new name costs its trigrams once; a known one an
        // index probe); `flow_names_text` is the trigram index over those names; and each of the
        // four columns has an index with the time, so a name's flows come newest first
        // (`FlowTextSearch`, `FlowHostWindows`). Names whose flows are all deleted go at
        // retention's next pass (`StorageManager`), so no name outlives its history.
        """
        DROP TRIGGER flows_text_insert;
        DROP TRIGGER flows_text_delete;
        DROP TRIGGER flows_text_update;
        DROP TABLE flows_text;
        CREATE INDEX flows_by_host_time ON flows (host, start_time);
        CREATE INDEX flows_by_other_hosts_time ON flows (other_hosts, start_time) WHERE other_hosts <> '';
        CREATE INDEX flows_by_server_time ON flows (server_address, start_time);
        CREATE INDEX flows_by_client_time ON flows (client_address, start_time);
        CREATE TABLE flow_names (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            columns INTEGER NOT NULL                  -- bits: 1 host, 2 other_hosts, 4 server_address, 8 client_address
        );
        CREATE VIRTUAL TABLE flow_names_text USING fts5(
            name, content = 'flow_names', content_rowid = 'id', tokenize = 'trigram');
        CREATE TRIGGER flow_names_text_insert AFTER INSERT ON flow_names BEGIN
            INSERT INTO flow_names_text (rowid, name) VALUES (new.id, new.name);
        END;
        CREATE TRIGGER flow_names_text_delete AFTER DELETE ON flow_names BEGIN
            INSERT INTO flow_names_text (flow_names_text, rowid, name) VALUES ('delete', old.id, old.name);
        END;
        INSERT INTO flow_names (name, columns)
            SELECT name, sum(bit) FROM (
                SELECT DISTINCT host AS name, 1 AS bit FROM flows WHERE host <> ''
                UNION SELECT DISTINCT other_hosts, 2 FROM flows WHERE other_hosts <> ''
                UNION SELECT DISTINCT server_address, 4 FROM flows WHERE server_address <> ''
                UNION SELECT DISTINCT client_address, 8 FROM flows WHERE client_address <> '')
            GROUP BY name;
        CREATE TRIGGER flow_names_insert AFTER INSERT ON flows BEGIN
        \(flowNamesUpserts)
        END;
        CREATE TRIGGER flow_names_update AFTER UPDATE OF host, other_hosts, server_address, client_address ON flows
            WHEN old.host IS NOT new.host OR old.other_hosts IS NOT new.other_hosts
                 OR old.server_address IS NOT new.server_address
                 OR old.client_address IS NOT new.client_address BEGIN
        \(flowNamesUpserts)
        END;
        """,
        // 21 (issue 19's insert rate, branch i23-hist): the flow writer keeps `flow_activity`
        // and `flow_names` itself for the rows it inserts (`writer` set), in the same
        // transaction: one upsert per touched bucket per batch (`FlowActivityTally`) and a name
        // upserted only when it is new to the writer (`FlowNameCache`), instead of two activity
        // upserts and four name probes per row in triggers. Any other insert (`writer` NULL: the
        // sqlite3 shell, a test's SQL) is still counted and named by a trigger. Deletes, a moved
        // start time and changed names keep their triggers (migrations 15 and 20).
        """
        DROP TRIGGER flow_activity_insert;
        DROP TRIGGER flow_names_insert;
        CREATE TRIGGER flows_insert_unwritten AFTER INSERT ON flows WHEN new.writer IS NULL BEGIN
            INSERT INTO flow_activity (span, bucket, flows)
                VALUES (60, new.start_time / 60000000, 1), (3600, new.start_time / 3600000000, 1)
                ON CONFLICT (span, bucket) DO UPDATE SET flows = flows + 1;
        \(flowNamesUpserts)
        END;
        """,
        // 22 (issue 16's writer share, branch i24-exch): finished exchanges are packed, one row
        // per flow per batch (`exchange_runs`, written by `ExchangeRowWriter`, read by
        // `StoredExchanges`; the bytes are `ExchangeRunCoding`'s), so a batch of small requests
        // inserts into three b-trees once per flow instead of four per exchange. `exchanges`
        // keeps the rows of exchanges still open, of those whose open row was written (their end
        // updates it), and every row from before, unchanged; it is made again with AUTOINCREMENT
        // so that its counter (`sqlite_sequence`) also hands out the runs' ids: a run's
        // exchanges are `first_id`, `first_id + 1` … `first_id + exchange_count - 1`, and an id
        // is never given twice across the two tables. A run spans at most 60 s of request times
        // (`ExchangeRunCoding.span`).
        """
        ALTER TABLE exchanges RENAME TO exchanges_before_runs;
        CREATE TABLE exchanges (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            flow_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            stream_id INTEGER,
            http_version TEXT NOT NULL,
            method TEXT NOT NULL,
            scheme TEXT,
            authority TEXT,
            path TEXT NOT NULL,
            query_removed INTEGER NOT NULL DEFAULT 0,
            status INTEGER,
            reason TEXT,
            request_body_bytes INTEGER NOT NULL DEFAULT 0,
            request_wire_bytes INTEGER NOT NULL DEFAULT 0,
            response_body_bytes INTEGER,
            response_wire_bytes INTEGER,
            content_type TEXT,
            content_encoding TEXT,
            request_time INTEGER NOT NULL,
            response_time INTEGER,
            end_time INTEGER,
            upgrade INTEGER NOT NULL DEFAULT 0,
            connect INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL CHECK (state IN ('open', 'complete', 'incomplete', 'answered')),
            UNIQUE (flow_id, seq)
        );
        INSERT INTO exchanges SELECT * FROM exchanges_before_runs;
        DROP TABLE exchanges_before_runs;
        CREATE INDEX exchanges_by_request_time ON exchanges (request_time);
        CREATE INDEX exchanges_open ON exchanges (flow_id) WHERE state = 'open';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'exchanges', 0
            WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'exchanges');
        CREATE TABLE exchange_runs (
            first_id INTEGER PRIMARY KEY,             -- the id of the run's first exchange
            flow_id INTEGER NOT NULL,
            exchange_count INTEGER NOT NULL,          -- exchanges packed in `exchanges`
            first_request_time INTEGER NOT NULL,      -- µs since the epoch: the earliest request
            last_request_time INTEGER NOT NULL,       -- µs since the epoch: the latest request
            exchanges BLOB NOT NULL                   -- the packed exchanges (ExchangeRunCoding)
        );
        CREATE INDEX exchange_runs_by_flow ON exchange_runs (flow_id);
        CREATE INDEX exchange_runs_by_last_time ON exchange_runs (last_request_time, first_request_time);
        """,
        // 23 (issue 19 at a million flows, branch i24-hist): the four name indexes carry the
        // status after the time, so a `--host TEXT --status S` window (`FlowQuery.hostPlan`)
        // keeps or skips an entry from the index alone and reads from the table only the
        // flows it returns (before: every flow of the names in the window, to read its status;
        // about four rows read per row kept for `inspected`). Built again under new names.
        """
        DROP INDEX flows_by_host_time;
        DROP INDEX flows_by_other_hosts_time;
        DROP INDEX flows_by_server_time;
        DROP INDEX flows_by_client_time;
        CREATE INDEX flows_by_host_time_status ON flows (host, start_time, status);
        CREATE INDEX flows_by_other_hosts_time_status ON flows (other_hosts, start_time, status) WHERE other_hosts <> '';
        CREATE INDEX flows_by_server_time_status ON flows (server_address, start_time, status);
        CREATE INDEX flows_by_client_time_status ON flows (client_address, start_time, status);
        """,
        // 24 (issue 19's insert rate, session 16): the four name indexes lead with the flow's
        // UTC day (`FlowDays`), so a batch's entries land in the current day's part of each
        // index, not at the end of every name's run. Keyed by name first, a flood's batch of
        // 20,000 flows rewrote the last leaf of each of ~2,000 names in the host and the server
        // index, with their splits: 11,945 WAL frames a batch, 75 % of them those two indexes;
        // keyed by day first, 3,035 (the 50th batch of a million bench flows, built batch by
        // batch; week-long buckets: 6,829). tv-bench's insert rate went from 43-54 k to
        // 71-78 k flows/s. A name's flows are found by one seek per (day, name)
        // (`FlowTextSearch`, `FlowHostWindows.mostWidth`).
        """
        DROP INDEX flows_by_host_time_status;
        DROP INDEX flows_by_other_hosts_time_status;
        DROP INDEX flows_by_server_time_status;
        DROP INDEX flows_by_client_time_status;
        CREATE INDEX flows_by_day_host ON flows (start_time / 86400000000, host, start_time, status);
        CREATE INDEX flows_by_day_other_hosts ON flows (start_time / 86400000000, other_hosts, start_time, status) WHERE other_hosts <> '';
        CREATE INDEX flows_by_day_server ON flows (start_time / 86400000000, server_address, start_time, status);
        CREATE INDEX flows_by_day_client ON flows (start_time / 86400000000, client_address, start_time, status);
        """,
        // 25 (session 25): host_origin gains 'http_host' (a flow that reached tv without a name,
        // named by its first request's Host header: `HostOrigin.httpHost`). As in 9, only the
        // CHECK list widens, so the stored SQL is edited in place (sqlite.org/lang_altertable.html
        // §7); the table made and dropped after it changes the schema cookie, so other
        // connections read the schema again.
        """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
            SET sql = replace(sql, '''dns_question'', ''none'')', '''dns_question'', ''http_host'', ''none'')')
            WHERE type = 'table' AND name = 'flows';
        PRAGMA writable_schema = RESET;
        CREATE TABLE schema_cookie_25 (x);
        DROP TABLE schema_cookie_25;
        """,
        // 26 (session 26): each flow writer's range of flow ids, [first_flow_id, flow_id_end)
        // (`FlowIDRanges`): two `tv exec`s at once took the same ids. NULL for writers before.
        """
        ALTER TABLE flow_writers ADD COLUMN first_flow_id INTEGER;
        ALTER TABLE flow_writers ADD COLUMN flow_id_end INTEGER;
        """,
        // 27 (session 31): when a request's last byte was read, for HAR's `send` (it was always
        // 0, the upload counted as the server's wait: a trial). Packed runs carry it too
        // (`ExchangeRunCoding`, flag bit 14); rows written before have none. And when a deleted
        // capture's file was unlinked (`CaptureDeletion`): a file restored under the name of a
        // finished deletion was swept as if the deletion had stopped half way (a re-check);
        // deletions finished before are taken as finished.
        """
        ALTER TABLE exchanges ADD COLUMN request_end_time INTEGER;  -- µs since the epoch: the request's last byte
        ALTER TABLE captures ADD COLUMN unlinked_at INTEGER;        -- µs since the epoch: the deleted capture's file unlinked
        UPDATE captures SET unlinked_at = deleted_at WHERE deleted_at IS NOT NULL;
        """,
        // 28 (upstream-verify): what tv's check of the server's certificate found, recorded
        // whether or not it was acted on: a flow inspected under --upstream-insecure read plain
        // "inspected" beside an expired or self-signed certificate (a new-user trial). NULL in
        // both: not checked (no upstream leg, or rows from before).
        """
        ALTER TABLE flows ADD COLUMN cert_verified INTEGER;   -- 1 verified, 0 not
        ALTER TABLE flows ADD COLUMN cert_problem TEXT;       -- why not (UpstreamCertificateProblem.cause)
        """,
        // 29 (session 41): a DNS query's QTYPE and which server its program asked (tv's DNS
        // address, the system resolver, or one of its own: `DNSServerAsked`, with the address it
        // asked), so a program with a hard-coded resolver is told apart (a trial's rows were
        // alike); and where `other_hosts` came from (`OtherHostsOrigin`): a connection that
        // announced a name keeps the names lookups gave its address. Rows written before have
        // NULL in each (`tv flow` then reads them as before).
        """
        ALTER TABLE flows ADD COLUMN dns_type INTEGER;            -- QTYPE of a DNS query flow's question
        ALTER TABLE flows ADD COLUMN dns_asked TEXT;              -- DNSServerAsked's raw value
        ALTER TABLE flows ADD COLUMN dns_asked_address TEXT;      -- the address the program sent its query to
        ALTER TABLE flows ADD COLUMN other_hosts_origin TEXT;     -- OtherHostsOrigin's raw value
        """,
        // 30 (h2bomb): requests tv read on a connection and counted without writing their rows,
        // past its row allowance (`RequestRowAllowance`: a trial's one HTTP/2 connection of
        // HEADERS and RST_STREAM made 200,000 rows in 20 s). NULL: none were (or a row from before).
        """
        ALTER TABLE flows ADD COLUMN requests_left_out INTEGER;   -- requests counted, not written
        """,
        // 31 (session 42): packets.meaning gains 'too_big_for_path' (an ICMP fragmentation needed
        // or ICMPv6 packet too big: `PacketMeaning.tooBigForPath`; a trial's were titled "cut
        // off" and "data", though the flow went on). As in 9 and 25, only the CHECK list widens,
        // so the stored SQL is edited in place (sqlite.org/lang_altertable.html §7); the table
        // made and dropped after it changes the schema cookie, so other connections read the
        // schema again. Rows written before keep what they were titled.
        """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
            SET sql = replace(sql, '''finished_sending'', ''cut_off'')', '''finished_sending'', ''cut_off'', ''too_big_for_path'')')
            WHERE type = 'table' AND name = 'packets';
        PRAGMA writable_schema = RESET;
        CREATE TABLE schema_cookie_31 (x);
        DROP TABLE schema_cookie_31;
        """,
        // 32 (h2rows): an exchange's state may be 'cancelled' (`ExchangeState.cancelled`: the
        // client reset its HTTP/2 stream after its request; a rapid reset's rows read "its end
        // was never read" beside the 200 kept content showed: a trial). As 31, only the CHECK
        // list widens, edited in place; rows written before keep their state.
        """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
            SET sql = replace(sql, '''incomplete'', ''answered'')', '''incomplete'', ''answered'', ''cancelled'')')
            WHERE type = 'table' AND name = 'exchanges';
        PRAGMA writable_schema = RESET;
        CREATE TABLE schema_cookie_32 (x);
        DROP TABLE schema_cookie_32;
        """,
    ]

    /// Migration 20's triggers' body (on insert and on a changed name): each of the row's four
    /// texts into `flow_names`, its column's bit added; a known name with its bit costs a probe.
    private static let flowNamesUpserts = """
            INSERT INTO flow_names (name, columns) SELECT new.host, 1 WHERE new.host <> ''
                ON CONFLICT (name) DO UPDATE SET columns = columns | 1 WHERE columns & 1 = 0;
            INSERT INTO flow_names (name, columns) SELECT new.other_hosts, 2 WHERE new.other_hosts <> ''
                ON CONFLICT (name) DO UPDATE SET columns = columns | 2 WHERE columns & 2 = 0;
            INSERT INTO flow_names (name, columns) SELECT new.server_address, 4 WHERE new.server_address <> ''
                ON CONFLICT (name) DO UPDATE SET columns = columns | 4 WHERE columns & 4 = 0;
            INSERT INTO flow_names (name, columns) SELECT new.client_address, 8 WHERE new.client_address <> ''
                ON CONFLICT (name) DO UPDATE SET columns = columns | 8 WHERE columns & 8 = 0;
        """

    /// The connection for a command that only reads: read-only (`SQLiteDatabase(readingAt:)`,
    /// so it works on a full disk) when the file exists at the current version; otherwise a
    /// writable one, migrated (a missing file is created, an older one brought up to date).
    /// - Throws: `FlowStoreError.newerSchema`, `.corrupt`, `.diskFull` …
    public static func openForReading(_ path: String) throws -> SQLiteDatabase {
        if FileManager.default.fileExists(atPath: path) {
            let reader = try SQLiteDatabase(readingAt: path)
            let version = try reader.userVersion()
            if version > currentVersion {
                throw FlowStoreError.newerSchema(path: path, found: version, supported: currentVersion)
            }
            if version == currentVersion { return reader }
            reader.close()
        }
        let database = try SQLiteDatabase(path: path)
        try migrate(database)
        return database
    }

    /// The version a file has after all migrations: `migrations.count`.
    public static var currentVersion: Int { migrations.count }

    /// What a program is told before migrations run on a large history: the file, its size in
    /// bytes, and the versions from and to. A migration can rebuild an index over every flow
    /// (version 24's took ~4 s at a million flows), and `tv run` or a reading command said
    /// nothing meanwhile. Set once by the program (`tv` says it on standard error); nil: silent.
    public typealias MigrationNotice = @Sendable (_ path: String, _ bytes: Int64, _ from: Int, _ to: Int) -> Void

    /// The program's `MigrationNotice`, read by `migrate`.
    public static let migrationNotice = Mutex<MigrationNotice?>(nil)

    /// The file size from which `migrate` gives notice: 64 MiB, about 50,000 flows with their
    /// indexes (a migration over them takes well under a second).
    public static let noticeFromBytes: Int64 = 64 << 20

    /// Brings `database` up to `migrations.count`, in order, in one transaction.
    /// - Parameters:
    ///   - migrations: the list to apply (the real one unless a test passes its own).
    ///   - notice: told before migrations run on a file of at least `noticeFromBytes` that
    ///     already holds a history (version ≥ 1); `migrationNotice` unless a test passes its own.
    /// - Returns: the version the file had before (0 for a new file).
    /// - Throws: `FlowStoreError.newerSchema` when the file's version is above what this code
    ///   knows (the file is left untouched), or the `FlowStoreError` of a failing statement (the
    ///   file stays at its old version).
    @discardableResult
    public static func migrate(_ database: SQLiteDatabase, migrations: [String] = FlowSchema.migrations,
                               notice: MigrationNotice? = FlowSchema.migrationNotice.withLock { $0 },
                               noticeFromBytes: Int64 = FlowSchema.noticeFromBytes) throws -> Int {
        // Read the version inside the write transaction, so two connections opening at once
        // cannot both apply the same migration.
        try database.transaction {
            let found = try database.userVersion()
            guard found <= migrations.count else {
                throw FlowStoreError.newerSchema(path: database.path, found: found, supported: migrations.count)
            }
            var st = stat()
            if found > 0, found < migrations.count, let notice, stat(database.path, &st) == 0, Int64(st.st_size) >= noticeFromBytes {
                notice(database.path, Int64(st.st_size), found, migrations.count)
            }
            for version in found..<migrations.count {
                try database.execute(migrations[version])
            }
            if found != migrations.count {
                try database.setUserVersion(migrations.count)
            }
            return found
        }
    }
}
