import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 22, "Long-running use": `tv run --metrics` through the real binary: real curl traffic
/// through the proxy, the endpoint scraped with curl and parsed by the Prometheus project's own
/// parser (Debian's python3-prometheus-client), every sample equal to `tv status --json`'s value.
@Suite("tv run --metrics (issue 22)", .serialized)
struct MetricsRunTests {
    /// Parses the exposition with prometheus_client and prints every sample as
    /// [name, {labels}, value] (JSON); fails on anything the parser refuses.
    static let parse = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        text = open(sys.argv[1]).read()
        out, types = [], {}
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for s in family.samples:
                out.append([s.name, s.labels, s.value])
        print(json.dumps({"samples": out, "types": types}))
        """

    @Test("two inspected curl requests: the scrape's counters are exactly tv status --json's; GET only, /metrics only")
    func scrapeEqualsStatus() throws {
        let world = try RunWorld()
        let box = world.sandbox
        let metricsPort = freeLoopbackPort()
        let tv = try world.run("--inspect", "--metrics", "127.0.0.1:\(metricsPort)")
        #expect(tv.log().contains("  metrics     http://127.0.0.1:\(metricsPort)/metrics (Prometheus text format; loopback unless --metrics-open)\n"), "\(tv.log())")
        for _ in 0..<2 {
            let r = try world.curlThrough(tv, [world.url("/index.html")])
            try #require(r.status == 0 && r.out == "hello from nginx\n", "\(r)")
        }
        _ = try box.closedFlows(2)
        _ = try box.waitForNoOpenConnections()

        let headers = try box.curl(["-D", "-", "-o", box.work + "/metrics.txt", "http://127.0.0.1:\(metricsPort)/metrics"])
        try #require(headers.status == 0, "\(headers)")
        #expect(headers.out.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "\(headers.out)")
        let status = try #require(try box.status())
        // Debian's python3 (its python3-prometheus-client), whatever python3 comes first on PATH.
        let parsed = try box.tool("/usr/bin/python3", [try box.write("parse.py", Self.parse), box.work + "/metrics.txt"])
        try #require(parsed.status == 0, "\(parsed)\n\(box.text(box.work + "/metrics.txt"))")
        let object = try #require(try JSONSerialization.jsonObject(with: parsed.stdout) as? [String: Any])
        let samples = try #require(object["samples"] as? [[Any]])
        var scraped: [String: Double] = [:]
        for sample in samples {
            let labels = (sample[1] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
            scraped["\(sample[0] as! String){\(labels)}"] = (sample[2] as? NSNumber)?.doubleValue
        }
        let types = object["types"] as? [String: String] ?? [:]
        #expect(types["tv_flows_closed"] == "counter" && types["tv_connections_open"] == "gauge" && types["tv_queue_depth"] == "gauge", "\(types)")

        func statusValue(_ path: String) -> Double? {
            var node: Any? = status
            for part in path.split(separator: ".") { node = (node as? [String: Any])?[String(part)] }
            return (node as? NSNumber)?.doubleValue ?? ((node as? String).map { $0 == "on" ? 1 : ($0 == "off" ? 0 : -1) })
        }
        // What the traffic makes: exact numbers, the same in both.
        #expect(scraped["tv_flows_closed_total{status=inspected}"] == 2 && statusValue("closed.inspected") == 2, "\(scraped)")
        #expect(scraped["tv_connections_accepted_total{}"] == 2 && statusValue("accepted") == 2)
        #expect(scraped["tv_handshakes_total{outcome=inspected}"] == 2 && statusValue("offered.inspected") == 2)
        #expect(scraped["tv_connections_open{}"] == 0)
        #expect(scraped["tv_drops_total{queue=flow_writer}"] == 0 && scraped["tv_drops_total{queue=content_writer}"] == 0)
        #expect(scraped["tv_queue_depth{queue=flow_writer}"] == 0)
        #expect(scraped["tv_inspection_enabled{}"] == 1)
        let names = scraped.filter { $0.key.hasPrefix("tv_names_total{") }.values.reduce(0, +)
        #expect(names == 2, "\(scraped)")
        let up = try #require(scraped["tv_bytes_total{direction=client_to_server}"]), down = try #require(scraped["tv_bytes_total{direction=server_to_client}"])
        #expect(up > 0 && down > up)
        // Every sample against the status value it was made from.
        let keyOf: [String: String] = [
            "tv_connections_open{}": "openConnections", "tv_connections_limit{}": "connectionCap", "tv_connections_accepted_total{}": "accepted",
            "tv_connections_refused_total{reason=cap}": "refusedByCap", "tv_connections_refused_total{reason=per_client}": "refusedPerClient",
            "tv_connections_refused_total{reason=descriptors}": "acceptsFailedForDescriptors", "tv_head_timeouts_total{}": "headTimeouts",
            "tv_bytes_total{direction=client_to_server}": "bytesFromClients", "tv_bytes_total{direction=server_to_client}": "bytesFromServers",
            "tv_drops_total{queue=flow_writer}": "recording.flowEventsDropped", "tv_drops_total{queue=content_writer}": "content.chunksDropped",
            "tv_drops_total{queue=program_lookup}": "programs.dropped", "tv_queue_depth{queue=flow_writer}": "recording.flowQueueEvents",
            "tv_queue_depth{queue=content_writer}": "content.queueEvents", "tv_queue_bytes{queue=content_writer}": "content.queueBytes",
            "tv_flows_not_saved_total{}": "recording.flowsNotSaved", "tv_writes_failed_total{writer=flows}": "recording.flowWritesFailed",
            "tv_writes_failed_total{writer=content}": "recording.contentWritesFailed", "tv_writer_failing{writer=flows}": "recording.flowsFailing",
            "tv_writer_failing{writer=content}": "recording.contentFailing", "tv_content_turns_kept_total{}": "content.turnsKept",
            "tv_content_bytes_kept_total{}": "content.bytesKept", "tv_program_lookups_total{result=found}": "programs.found",
            "tv_program_lookups_total{result=not_known}": "programs.notKnown", "tv_program_lookups_total{result=other_machine}": "programs.otherMachine",
            "tv_inspection_enabled{}": "inspection",
        ]
        for (sample, key) in keyOf {
            #expect(scraped[sample] != nil && scraped[sample] == statusValue(key), "\(sample) = \(scraped[sample] ?? -1), status \(key) = \(statusValue(key) ?? -1)")
        }
        for status in ["not_encrypted", "encrypted", "inspected", "kept_private", "failed"] {
            let key = ["not_encrypted": "notEncrypted", "kept_private": "keptPrivate"][status] ?? status
            #expect(scraped["tv_flows_closed_total{status=\(status)}"] == statusValue("closed." + key), "\(status)")
        }
        for origin in ["sni", "quic", "connect", "socks", "reverse", "dns", "dns_question"] {
            let key = origin == "dns_question" ? "dnsQuestion" : origin
            #expect(scraped["tv_names_total{origin=\(origin)}"] == statusValue("names.origin." + key), "\(origin)")
        }
        let started = try #require(scraped["tv_start_time_seconds{}"]), startedMicros = try #require(statusValue("startedAt"))
        #expect(abs(started - startedMicros / 1_000_000) < 0.001)
        #expect(!box.text(box.work + "/metrics.txt").contains("localhost"), "no host names are exported")

        // GET (and HEAD) of /metrics only.
        let post = try box.curl(["-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "http://127.0.0.1:\(metricsPort)/metrics"])
        #expect(post.out == "405", "\(post)")
        let other = try box.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(metricsPort)/other"])
        #expect(other.out == "404", "\(other)")
        // A scrape is not a flow: still two.
        #expect(try box.flowRows().count == 2)
        try tv.stop()
        #expect(!isListening(metricsPort), "the endpoint closes with the session")
    }

    @Test("a non-loopback --metrics address is refused with the reason, before anything listens")
    func refusesOpenAddress() throws {
        try withSandbox { box in
            let port = freeLoopbackPort()
            let r = try box.tvArgs(["run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--metrics", "0.0.0.0:\(port)"])
            #expect(r.status == 2, "\(r)")
            #expect(r.err == "tv: --metrics 0.0.0.0:\(port) would let other machines read this session's counters with no password; serve on 127.0.0.1 (a scraper elsewhere can reach it through an SSH tunnel), or add --metrics-open to serve there anyway.\n", "\(r)")
            let lone = try box.tvArgs(["run", "--metrics-open"])
            #expect(lone.status == 2 && lone.err == "tv: --metrics-open goes with --metrics HOST:PORT.\n", "\(lone)")
        }
    }

    @Test("a --metrics or --web-listen port in use is refused naming that option, not --listen (a trial was told to change --listen)")
    func portInUseNamesTheOption() throws {
        try withSandbox { box in
            let held = try #require(HeldLoopbackPort())
            defer { held.close() }
            let busy = held.port
            let metrics = try box.tvArgs(["run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--metrics", "127.0.0.1:\(busy)"])
            #expect(metrics.status == 1 && metrics.err.hasSuffix("tv: Port \(busy) on 127.0.0.1 is already in use; stop the other program or pass --metrics 127.0.0.1:PORT.\n"), "\(metrics)")
            let web = try box.tvArgs(["run", "--listen", "127.0.0.1:\(freeLoopbackPort())", "--web", "--web-listen", "127.0.0.1:\(busy)"])
            #expect(web.status != 0 && web.err.contains("choose another port with --web-listen 127.0.0.1:PORT."), "\(web)")
            // Refused before anything is announced (it came after "tv is running").
            #expect(!web.err.contains("tv is running") && !web.err.contains("What it does"), "\(web)")
        }
    }
}
