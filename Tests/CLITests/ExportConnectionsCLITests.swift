import FlowStore
import FlowTerms
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tv export connections` read back by real tools: python3's json.tool and csv module, and jq.
@Suite(.serialized) struct ExportConnectionsCLITests {
    /// `count` flows written straight into the database (the writer would take seconds for
    /// 25,000), each with an error text holding a comma and quotes.
    static func fill(_ dataDir: String, count: Int) throws {
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let store = try FlowStore(path: dataDir + "/tunnelvision.sqlite3")
        store.close()
        guard count > 0 else { return }
        let database = try SQLiteDatabase(path: dataDir + "/tunnelvision.sqlite3")
        defer { database.close() }
        try database.transaction {
            try database.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                INSERT INTO flows (id, start_time, last_activity_time, client_address, client_port, server_address, server_port,
                                   transport, host, host_origin, status, duration, bytes_up, bytes_down, error, tls_version)
                SELECT i, 1764471900000000 + i * 1000000, 1764471900000000 + i * 1000000, '::1', 40000 + i % 20000, '192.0.2.7', 443,
                       'tcp', 'h' || i || '.test', 'sni', 'encrypted', 250000, i, 2 * i, 'said "no", then closed', 'TLSv1.3' FROM n
                """)
        }
    }

    @Test("JSON at 0, 1 and 25,000 connections: json.tool and jq read it, the trailer's count equals the rows, truncated says whether more matched")
    func jsonReadByRealTools() throws {
        for count in [0, 1, 25_000] {
            try withSandbox { s in
                try Self.fill(s.dataDir, count: count)
                let file = s.work + "/connections.json"
                let r = try s.tv("export", "connections", "-o", file)
                #expect(r.status == 0, "\(r)")
                let written = min(count, 20_000)
                #expect(r.out == "Wrote \(written == 1 ? "1 connection" : (written == 0 ? "0 connections" : "20,000 connections")) to \(file)\(count > 20_000 ? "; more matched: these are the newest (the file says \"truncated\": true), and --limit N writes more" : "").\n", "\(r)")
                #expect(s.mode(file) == 0o600)
                #expect(try s.tool("python3", ["-m", "json.tool", file]).status == 0)
                let jq = try s.tool("jq", ["-c", "[.count, (.connections | length), .truncated, .contentIncluded, (.connections[0].server // null), (.connections[0].client // null), (keys_unsorted | last)]", file])
                #expect(jq.status == 0, "\(jq)")
                let firstClient = count == 0 ? "null" : "\"[::1]:\(40_000 + count % 20_000)\""
                #expect(jq.out == "[\(written),\(written),\(count > 20_000),false,\(count == 0 ? "null" : "\"192.0.2.7:443\""),\(firstClient),\"truncated\"]\n", "\(jq)")
                if count == 25_000 {
                    let limited = try s.tv("export", "connections", "-o", file, "--limit", "25000")
                    #expect(limited.status == 0, "\(limited)")
                    let all = try s.tool("jq", ["-c", "[.count, (.connections | length), .truncated, .connections[-1].id]", file])
                    #expect(all.out == "[25000,25000,false,1]\n", "\(all)")
                    let filtered = try s.tv("export", "connections", "-o", file, "--host", "h2499")
                    #expect(filtered.status == 0, "\(filtered)")
                    let ids = try s.tool("jq", ["-c", "[.connections[].id]", file])
                    #expect(ids.out == "[24999,24998,24997,24996,24995,24994,24993,24992,24991,24990,2499]\n", "\(ids)")
                }
            }
        }
    }

    @Test("a flow that never reached its server (no address): server is null in JSON and empty in CSV, not ':443'")
    func notConnected() throws {
        try withSandbox { s in
            try Self.fill(s.dataDir, count: 2)
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try database.execute("UPDATE flows SET server_address = '', status = 'failed' WHERE id = 2")
            database.close()
            let json = s.work + "/c.json", csv = s.work + "/c.csv"
            #expect(try s.tv("export", "connections", "-o", json).status == 0)
            // A .csv file is CSV without --format (a trial's README example wrote JSON into all.csv).
            #expect(try s.tv("export", "connections", "-o", csv).status == 0)
            let explicit = s.work + "/c-json.csv"
            #expect(try s.tv("export", "connections", "-o", explicit, "--format", "json").status == 0)
            #expect((try String(contentsOfFile: explicit, encoding: .utf8)).hasPrefix("{"))
            let jq = try s.tool("jq", ["-c", "[.connections[] | [.id, .server, .serverPort]]", json])
            #expect(jq.out == "[[2,null,443],[1,\"192.0.2.7:443\",443]]\n", "\(jq)")
            let read = try s.tool("python3", ["-c", "import csv, sys; print([r[6] for r in csv.reader(open(sys.argv[1], newline=''))])", csv])
            #expect(read.out == "['server', '', '192.0.2.7:443']\n", "\(read)")
        }
    }

    @Test("CSV (RFC 4180) read back by Python's csv module: the header, every row, quotes and commas intact")
    func csvReadByPython() throws {
        try withSandbox { s in
            try Self.fill(s.dataDir, count: 3)
            let file = s.work + "/connections.csv"
            let r = try s.tv("export", "connections", "-o", file, "--format", "csv")
            #expect(r.status == 0, "\(r)")
            let read = try s.tool("python3", ["-c", """
                import csv, json, sys
                rows = list(csv.reader(open(sys.argv[1], newline='')))
                print(json.dumps([len(rows), rows[0][:3], rows[1][0], rows[1][5], rows[1][6], rows[1][12], rows[1][13], rows[1][14], rows[0][9], rows[0][-5:]]))
                """, file])
            #expect(read.out == "[4, [\"id\", \"start\", \"end\"], \"3\", \"[::1]:40003\", \"192.0.2.7:443\", \"said \\\"no\\\", then closed\", \"3\", \"6\", \"otherHosts\", [\"programUser\", \"programNotKnown\", \"serverPort\", \"certificateVerified\", \"certificateProblem\"]]\n", "\(read)")
            let bad = try s.tv("export", "connections", "-o", file, "--format", "xml")
            #expect(bad.err == "tv: --format takes json or csv, not 'xml'.\n", "\(bad)")
        }
    }

    @Test("CSV: a host (a client's SNI) or SAN a spreadsheet would run as a formula starts with ' (OWASP); JSON keeps it as it was")
    func csvFormulaGuard() throws {
        try withSandbox { s in
            try Self.fill(s.dataDir, count: 4)
            let database = try SQLiteDatabase(path: s.dataDir + "/tunnelvision.sqlite3")
            try database.execute("UPDATE flows SET host = '=HYPERLINK(\"http://x\")' WHERE id = 1")
            try database.execute("UPDATE flows SET host = '@SUM(1+1)' WHERE id = 2")
            try database.execute("UPDATE flows SET host = '-2+3', error = '+cmd' WHERE id = 3")
            database.close()
            let file = s.work + "/connections.csv"
            #expect(try s.tv("export", "connections", "-o", file, "--format", "csv").status == 0)
            let read = try s.tool("python3", ["-c", """
                import csv, json, sys
                rows = list(csv.reader(open(sys.argv[1], newline='')))
                print(json.dumps([[r[0], r[7], r[12]] for r in rows[1:]]))
                """, file])
            #expect(read.out == #"[["4", "h4.test", "said \"no\", then closed"], ["3", "'-2+3", "'+cmd"], ["2", "'@SUM(1+1)", "said \"no\", then closed"], ["1", "'=HYPERLINK(\"http://x\")", "said \"no\", then closed"]]"# + "\n", "\(read)")
            let json = try s.tv("export", "connections", "-o", "-")
            #expect(json.out.contains(#""host":"=HYPERLINK(\"http://x\")""#), "\(json)")
        }
    }

    @Test("a full disk (a 64 KiB tmpfs) leaves no file, no temporary, and says why", .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func fullDiskLeavesNoFile() throws {
        try withSandbox { s in
            try Self.fill(s.dataDir, count: 25_000)
            let mount = s.root + "/full"
            try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
            let mounted = try s.tool("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount])
            try #require(mounted.status == 0, "tmpfs could not be mounted: \(mounted)")
            defer { _ = try? s.tool("umount", [mount]) }
            let file = mount + "/connections.json"
            let r = try s.tv("export", "connections", "-o", file)
            #expect(r.status == 1, "\(r)")
            #expect(r.err == "tv: Could not write \(file) (No space left on device); check the folder's permissions and free space, then try again.\n", "\(r)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: mount) == [])
        }
    }
}

