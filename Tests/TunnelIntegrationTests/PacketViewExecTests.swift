import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 17 through `tv exec` with inspection: the TUN capture carries the client legs' TLS
/// secrets (a Decryption Secrets Block), so tshark shows the HTTP inside without a key log; and
/// `tv packet FLOW N` says what tshark says of the same packet, field by field.
@Suite("tv exec: TLS secrets inside the capture, tv packet against tshark (issue 17)", .serialized,
       .enabled(if: LabRequirements.met && FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark"),
                "needs root, /dev/net/tun, nginx, dnsmasq, tshark"))
final class PacketViewExecTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    /// The capture files tv wrote, oldest first.
    func captures() throws -> [String] {
        let folder = lab.dataDir + "/captures"
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("capture-") }.sorted().map { folder + "/" + $0 }
    }

    /// tshark's fields of the packets `filter` selects, in file order (checksums verified).
    func tshark(_ files: [String], filter: String, fields: [String]) -> [[String]] {
        files.flatMap { file in
            Sh.run(["tshark", "-r", file, "-o", "tcp.check_checksum:TRUE", "-Y", filter, "-T", "fields", "-E", "separator=|"]
                   + fields.flatMap { ["-e", $0] }).out
                .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        }
    }

    /// Every packet of `files` as tshark lists it, for a failure's message.
    func listing(_ files: [String]) -> String {
        files.map { file in
            file + ":\n" + Sh.run(["tshark", "-r", file, "-T", "fields", "-E", "separator=|", "-e", "frame.number", "-e", "frame.time_relative",
                                   "-e", "ip.src", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.len", "-e", "_ws.col.Info"]).out
        }.joined(separator: "\n")
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let r = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir] + arguments + ["--json"])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] else {
            throw LabError("tv \(arguments.joined(separator: " ")) --json: \(r)")
        }
        return object
    }

    @Test("curl --cacert ROOT https://origin.test through tv exec --inspect: tshark -Y http shows the response from the capture alone (its secrets embedded), nothing without them")
    func secretsInTheCapture() throws {
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        let files = try captures()
        try #require(!files.isEmpty)
        let http = tshark(files, filter: "http", fields: ["http.request.method", "http.request.uri", "http.response.code"])
        // The request and the response decrypt through the embedded secrets alone. (OpenSSL logs
        // the traffic secrets just after the Finished is on the wire; the capture writer puts a
        // batch's secrets before its packets, so they precede the Finished in the file.)
        #expect(http.map { $0.joined(separator: " ") } == ["GET /index.html ", "  200"], "\(http)\n\(r)\n\(listing(files))")
        // It is the embedded secrets that decrypt it: without them (editcap --discard-all-secrets)
        // nothing reads as HTTP.
        let bare = lab.dir + "/bare.pcapng"
        let strip = Sh.run(["editcap", "--discard-all-secrets", files.last!, bare])
        #expect(strip.status == 0, "\(strip)")
        #expect(tshark([bare], filter: "http", fields: ["http.request.method"]).isEmpty)
    }

    @Test("tv content delete blanks the capture's embedded secrets: tshark -Y http then reads nothing, the file keeps its size and packets (tv packets still lists them), tv content status counted it before and not after")
    func contentDeleteBlanksTheCapturesSecrets() throws {
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        let files = try captures()
        try #require(!files.isEmpty)
        #expect(!tshark(files, filter: "http", fields: ["http.request.method"]).isEmpty, "\(listing(files))")
        let sizes = files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? -1 }
        let packets = tshark(files, filter: "frame", fields: ["frame.len"])
        let before = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "content", "status"])
        #expect(before.status == 0 && before.out.contains("1 packet capture file holds the TLS secrets of the connections tv inspected in it: Wireshark reads what those said"), "\(before)")
        let delete = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "content", "delete", "--yes"])
        #expect(delete.status == 0 && delete.out.contains("; blanked the TLS secrets in 1 packet capture file."), "\(delete)")
        #expect(tshark(files, filter: "http", fields: ["http.request.method"]).isEmpty)
        #expect(tshark(files, filter: "frame", fields: ["frame.len"]) == packets)
        #expect(files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? -1 } == sizes)
        let after = Sh.run([TVBinary.path!, "--data-dir", lab.dataDir, "content", "status"])
        #expect(after.status == 0 && after.out == "No decrypted content is kept.\n", "\(after)")
        let https = try #require(try lab.flows().first { $0["serverPort"] as? Int == 443 })
        let rows = try json(["packets", String(try #require(https["id"] as? Int))])["packets"] as? [[String: Any]]
        #expect((rows?.count ?? 0) >= 8, "\(String(describing: rows))")
    }

    @Test("a closed capture older than content.expiry has its secrets blanked by the retention pass (tv storage apply): tshark -Y http reads nothing after, the packets stay")
    func expiredCaptureSecretsAreBlanked() throws {
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        let files = try captures()
        try #require(!files.isEmpty)
        #expect(!tshark(files, filter: "http", fields: ["http.request.method"]).isEmpty)
        // The capture closed two hours ago; content lives one.
        #expect(lab.tv(["settings", "set", "content.expiry", "1h", "--yes"]).status == 0)
        let age = Sh.run(["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute('UPDATE captures SET ended_at = ended_at - 7200000000, started_at = started_at - 7200000000')
            db.commit()
            """, lab.dataDir + "/tunnelvision.sqlite3"])
        #expect(age.status == 0, "\(age)")
        let apply = lab.tv(["storage", "apply"])
        #expect(apply.status == 0 && apply.out.contains("Blanked the TLS secrets in 1 packet capture file older than content.expiry"), "\(apply)")
        #expect(tshark(files, filter: "http", fields: ["http.request.method"]).isEmpty)
        #expect(!tshark(files, filter: "frame", fields: ["frame.len"]).isEmpty)
        // Said once: the next pass finds it blank.
        #expect(!lab.tv(["storage", "apply"]).out.contains("Blanked"))
    }

    @Test("Inspection off: a passed-through TLS connection's packets are not held for a secret that never comes, so the file stays in time order (capinfos) while plain requests follow it")
    func passThroughIsNotHeld() throws {
        let script = "curl -sS -o /dev/null --cacert \(lab.upstreamCA) https://origin.test/index.html"
            + " && for i in $(seq 1 20); do curl -sS -o /dev/null http://origin.test:8080/index.html; done"
        let r = lab.exec([], ["sh", "-c", script])
        #expect(r.status == 0, "\(r)")
        let files = try captures()
        try #require(!files.isEmpty)
        for file in files {
            let info = Sh.run(["capinfos", "-o", file])
            #expect(info.status == 0 && info.out.contains("Strict time order:   True"), "\(info)\n\(listing([file]))")
        }
    }

    @Test("The client's secret logged 300 ms after its Finished was captured (TV_TEST_CLIENT_SECRET_DELAY_MS: the loop sleeps first, the writer has written that batch): the writer held the flow's packets, tshark decrypts both directions")
    func lateClientSecret() throws {
        let r = lab.inHost(["env", "TV_TEST_CLIENT_SECRET_DELAY_MS=300", TVBinary.path!, "--data-dir", lab.dataDir, "exec", "--yes", "--quiet",
                            "--inspect", "--upstream-ca", lab.upstreamCA, "--",
                            "curl", "-sS", "--http1.1", "--cacert", lab.tvRoot, "https://origin.test/index.html"])
        #expect(r.status == 0 && r.out == OriginLab.indexBody, "\(r)")
        let files = try captures()
        try #require(!files.isEmpty)
        // Without the hold, the Finished and the request are in the file before the secret: the
        // request does not decrypt (only the response, whose secret came before the server's flight).
        let http = tshark(files, filter: "http", fields: ["http.request.method", "http.request.uri", "http.response.code"])
        #expect(http.map { $0.joined(separator: " ") } == ["GET /index.html ", "  200"], "\(http)\n\(r)\n\(listing(files))")
    }

    @Test("tv packet FLOW N for every packet of an HTTPS flow and of a DNS lookup equals tshark's reading: addresses, ports, seq/ack, flags, window, TTL, DNS answers")
    func packetEqualsTshark() throws {
        let r = lab.exec(["--inspect", "--upstream-ca", lab.upstreamCA],
                         ["sh", "-c", "getent ahostsv4 named.test >/dev/null && curl -sS --http1.1 --cacert \(lab.tvRoot) https://origin.test/index.html"])
        #expect(r.status == 0, "\(r)")
        let files = try captures()
        let flows = try lab.flows()
        let https = try #require(flows.first { $0["serverPort"] as? Int == 443 })
        let httpsID = try #require(https["id"] as? Int)
        let clientPort = try #require(https["clientPort"] as? Int)
        let theirs = tshark(files, filter: "tcp.port == \(clientPort)",
                            fields: ["ip.src", "ip.dst", "ip.ttl", "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.window_size_value"])
        let list = try json(["packets", String(httpsID)])
        let rows = try #require(list["packets"] as? [[String: Any]])
        #expect(rows.count == theirs.count && rows.count >= 8, "\(rows.count) rows, tshark \(theirs.count)")
        for (n, fields) in theirs.enumerated() {
            let packet = try json(["packet", String(httpsID), String(n + 1)])
            let headers = try #require(packet["headers"] as? [String: [String: String]])
            let ip = try #require(headers["IPv4"]), tcp = try #require(headers["TCP"])
            #expect([ip["from"], ip["to"], ip["TTL"]] == [fields[0], fields[1], fields[2]], "packet \(n + 1)")
            #expect(tcp["ports"] == "\(fields[3]) → \(fields[4])" && tcp["seq"] == fields[5] && tcp["ack"] == fields[6]
                    && tcp["window"] == fields[7], "packet \(n + 1): \(tcp) vs \(fields)")
            #expect(packet["absence"] is NSNull && (packet["hex"] as? String)?.isEmpty == false)
        }
        // The DNS lookup of origin.test: the query and the answer, field by field.
        let dns = try #require(flows.first { $0["serverPort"] as? Int == 53 && $0["transport"] as? String == "udp" })
        let dnsID = try #require(dns["id"] as? Int)
        let dnsRows = try #require(try json(["packets", String(dnsID)])["packets"] as? [[String: Any]])
        try #require(!dnsRows.isEmpty)
        let answers = tshark(files, filter: "dns.flags.response == 1 && dns.qry.name == \"named.test\"",
                             fields: ["dns.qry.name", "dns.qry.type", "dns.a", "dns.aaaa"])
        for n in 1...dnsRows.count {
            let packet = try json(["packet", String(dnsID), String(n)])
            guard let fields = (packet["headers"] as? [String: [String: String]])?["DNS"], fields["message"] == "reply" else { continue }
            let match = answers.contains { a in
                fields["looked up"] == a[0] && (fields["addresses"] ?? "") == [a[2], a[3]].filter { !$0.isEmpty }.joined(separator: ", ")
            }
            #expect(match, "\(fields) vs \(answers)")
        }
        // The capture deleted: the row is still printed, the bytes are said gone, and the exit
        // status says so too (a trial's script read 0).
        for capture in Set(rows.compactMap { $0["capture"] as? Int }) { #expect(lab.tv(["captures", "delete", String(capture), "--yes"]).status == 0) }
        let gone = lab.tv(["packet", String(httpsID), "1"])
        #expect(gone.status == 1 && gone.out.contains(" was deleted: those bytes are gone; the connection stays in your history.\n"), "\(gone)")
    }
}
