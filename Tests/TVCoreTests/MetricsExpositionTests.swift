import Proxy
import Testing
@testable import TVCore

/// `tv run --metrics`: the exposition made from status values, the HTTP answers, the address.
@Suite struct MetricsExpositionTests {
    /// A session's status values as the control socket carries them (a small explicit-proxy one).
    static let values: [String: String] = [
        "pid": "42", "listen": "127.0.0.1:8080", "inspection": "on", "openConnections": "1", "connectionCap": "4096",
        "accepted": "7", "refusedByCap": "0", "refusedPerClient": "2", "acceptsFailedForDescriptors": "0", "headTimeouts": "1",
        "bytesFromClients": "1500", "bytesFromServers": "90000",
        "closed.inspected": "4", "closed.failed": "1", "closed.notEncrypted": "1", "closed.encrypted": "0", "closed.keptPrivate": "0", "closed.interrupted": "0",
        "offered.total": "5", "offered.inspected": "4", "offered.failed.server.certificate": "1",
        "recording.flowEventsDropped": "3", "recording.flowQueueEvents": "2", "recording.flowsNotSaved": "0",
        "recording.flowWritesFailed": "0", "recording.contentWritesFailed": "0", "recording.flowsFailing": "off", "recording.contentFailing": "on",
        "content.chunksDropped": "5", "content.queueEvents": "6", "content.queueBytes": "700", "content.turnsKept": "8", "content.bytesKept": "900",
        "programs.dropped": "0", "programs.found": "6", "programs.otherMachine": "2", "programs.notKnown": "1",
        "names.origin.sni": "4", "names.origin.quic": "0", "names.origin.connect": "2", "names.origin.socks": "0", "names.origin.reverse": "0",
        "names.origin.dns": "0", "names.origin.dnsQuestion": "0",
        "startedAt": "1764633600000042",
        "errors.1.host": "evil\"host\n", "talkers.1.host": "example.com", "dataFolder": "/tmp/x",
    ]

    @Test("the exposition of a session's values: every family with HELP and TYPE, exact samples, no host names")
    func exposition() {
        #expect(MetricsExposition.render(Self.values) == """
            # HELP tv_flows_closed_total Flows closed this session, by status.
            # TYPE tv_flows_closed_total counter
            tv_flows_closed_total{status="not_encrypted"} 1
            tv_flows_closed_total{status="encrypted"} 0
            tv_flows_closed_total{status="inspected"} 4
            tv_flows_closed_total{status="kept_private"} 0
            tv_flows_closed_total{status="failed"} 1
            tv_flows_closed_total{status="interrupted"} 0
            # HELP tv_connections_open Client connections open now.
            # TYPE tv_connections_open gauge
            tv_connections_open 1
            # HELP tv_connections_limit Connections the session holds at most (the connection cap).
            # TYPE tv_connections_limit gauge
            tv_connections_limit 4096
            # HELP tv_connections_accepted_total Client connections accepted.
            # TYPE tv_connections_accepted_total counter
            tv_connections_accepted_total 7
            # HELP tv_connections_refused_total Client connections refused, by reason.
            # TYPE tv_connections_refused_total counter
            tv_connections_refused_total{reason="cap"} 0
            tv_connections_refused_total{reason="per_client"} 2
            tv_connections_refused_total{reason="descriptors"} 0
            # HELP tv_head_timeouts_total Connections closed because the request head was not whole within the head timeout.
            # TYPE tv_head_timeouts_total counter
            tv_head_timeouts_total 1
            # HELP tv_bytes_total Bytes relayed, by direction.
            # TYPE tv_bytes_total counter
            tv_bytes_total{direction="client_to_server"} 1500
            tv_bytes_total{direction="server_to_client"} 90000
            # HELP tv_handshakes_total Closed connections offered for inspection, by how the offer ended (the outcomes tv diag counts).
            # TYPE tv_handshakes_total counter
            tv_handshakes_total{outcome="failed.server.certificate"} 1
            tv_handshakes_total{outcome="inspected"} 4
            # HELP tv_drops_total Items a full queue dropped (never waited for), by the queue.
            # TYPE tv_drops_total counter
            tv_drops_total{queue="flow_writer"} 3
            tv_drops_total{queue="content_writer"} 5
            tv_drops_total{queue="program_lookup"} 0
            # HELP tv_queue_depth Items waiting in a writer's queue now, by the queue.
            # TYPE tv_queue_depth gauge
            tv_queue_depth{queue="flow_writer"} 2
            tv_queue_depth{queue="content_writer"} 6
            # HELP tv_queue_bytes Bytes waiting in a writer's queue now, by the queue.
            # TYPE tv_queue_bytes gauge
            tv_queue_bytes{queue="content_writer"} 700
            # HELP tv_names_total Closed flows named, by where the name came from.
            # TYPE tv_names_total counter
            tv_names_total{origin="sni"} 4
            tv_names_total{origin="quic"} 0
            tv_names_total{origin="connect"} 2
            tv_names_total{origin="socks"} 0
            tv_names_total{origin="reverse"} 0
            tv_names_total{origin="dns"} 0
            tv_names_total{origin="dns_question"} 0
            # HELP tv_flows_not_saved_total Flows given up with no row in the database.
            # TYPE tv_flows_not_saved_total counter
            tv_flows_not_saved_total 0
            # HELP tv_writes_failed_total Writer transactions that failed (retries included), by writer.
            # TYPE tv_writes_failed_total counter
            tv_writes_failed_total{writer="flows"} 0
            tv_writes_failed_total{writer="content"} 0
            # HELP tv_writer_failing 1 while a writer's writes fail, else 0.
            # TYPE tv_writer_failing gauge
            tv_writer_failing{writer="flows"} 0
            tv_writer_failing{writer="content"} 1
            # HELP tv_content_turns_kept_total Turns of decrypted content written.
            # TYPE tv_content_turns_kept_total counter
            tv_content_turns_kept_total 8
            # HELP tv_content_bytes_kept_total Bytes of decrypted content written.
            # TYPE tv_content_bytes_kept_total counter
            tv_content_bytes_kept_total 900
            # HELP tv_program_lookups_total Flows whose program was looked up, by result.
            # TYPE tv_program_lookups_total counter
            tv_program_lookups_total{result="found"} 6
            tv_program_lookups_total{result="other_machine"} 2
            tv_program_lookups_total{result="not_known"} 1
            # HELP tv_inspection_enabled 1 while the session inspects TLS, else 0.
            # TYPE tv_inspection_enabled gauge
            tv_inspection_enabled 1
            # HELP tv_start_time_seconds When the session started, seconds since 1970-01-01 UTC.
            # TYPE tv_start_time_seconds gauge
            tv_start_time_seconds 1764633600.000042

            """)
    }

    @Test("the capture's and the decrypted capture's queues appear when the session has them")
    func captureQueues() {
        let text = MetricsExposition.render(["capture.packetsDropped": "9", "capture.secretsDropped": "1", "capture.packetsFailed": "0",
                                             "capture.packetsWritten": "120", "decryptedCapture.eventsDropped": "2", "decryptedCapture.bytesDropped": "4096"])
        #expect(text == """
            # HELP tv_drops_total Items a full queue dropped (never waited for), by the queue.
            # TYPE tv_drops_total counter
            tv_drops_total{queue="capture"} 9
            tv_drops_total{queue="capture_secrets"} 1
            tv_drops_total{queue="decrypted_capture"} 2
            # HELP tv_dropped_bytes_total Bytes a full queue dropped, by the queue.
            # TYPE tv_dropped_bytes_total counter
            tv_dropped_bytes_total{queue="decrypted_capture"} 4096
            # HELP tv_writes_failed_total Writer transactions that failed (retries included), by writer.
            # TYPE tv_writes_failed_total counter
            tv_writes_failed_total{writer="capture"} 0
            # HELP tv_capture_packets_written_total Packets written to the capture file.
            # TYPE tv_capture_packets_written_total counter
            tv_capture_packets_written_total 120

            """)
    }

    @Test("label values and help text escaped as the format says; a value that is not a number is left out")
    func escaping() {
        #expect(MetricsExposition.escapeLabel("a\\b\"c\nd") == "a\\\\b\\\"c\\nd")
        #expect(MetricsExposition.escapeHelp("a\\b\"c\nd") == "a\\\\b\"c\\nd")
        #expect(MetricsExposition.render(["offered.we\"ird\\": "3"]).contains("tv_handshakes_total{outcome=\"we\\\"ird\\\\\"} 3\n"))
        #expect(MetricsExposition.render(["accepted": "many"]) == "# HELP tv_connections_accepted_total Client connections accepted.\n# TYPE tv_connections_accepted_total counter\n")
        #expect(MetricsExposition.number("-1500000", key: "startedAt") == "-1.500000")
        #expect(MetricsExposition.render([:]) == "")
    }

    @Test("HTTP: GET and HEAD of /metrics, 404, 405, 400, 414, 431, and a head still coming")
    func http() {
        let body = "tv_x 1\n"
        func text(_ request: String) -> String? {
            MetricsHTTP.response(to: Array(request.utf8), exposition: { body }).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(text("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 7\r\nConnection: close\r\n\r\ntv_x 1\n")
        #expect(text("HEAD /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n") == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 7\r\nConnection: close\r\n\r\n")
        #expect(text("GET /other HTTP/1.1\r\nHost: a\r\n\r\n") == "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 25\r\nConnection: close\r\n\r\nMetrics are at /metrics.\n")
        #expect(text("POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") == "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 35\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\nOnly GET and HEAD are served here.\n")
        #expect(text("\u{16}\u{03}\u{01}\u{00}\r\n\r\n")?.hasPrefix("HTTP/1.1 400 Bad Request\r\n") == true)
        #expect(text("GET /metrics HTTP/1.1\r\nHost: a\r\n") == nil)
        #expect(text("GET /" + String(repeating: "a", count: MetricsHTTP.maxHeadBytes))
                == "HTTP/1.1 414 URI Too Long\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 52\r\nConnection: close\r\n\r\nThe request line exceeds 8192 bytes without ending.\n")
        // A whole head over the limit is said to be too long, not "not HTTP/1" (a trial's 200 KB header).
        let long = text("GET /metrics HTTP/1.1\r\nX-Big: " + String(repeating: "b", count: MetricsHTTP.maxHeadBytes) + "\r\n\r\n") ?? ""
        #expect(long.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n") && long.hasSuffix("\r\n\r\nThe request head exceeds 8192 bytes without ending in an empty line.\n"), "\(long.suffix(200))")
    }

    @Test("the address: loopback forms accepted, others refused without --metrics-open, with the reason")
    func address() throws {
        #expect(try MetricsAddress.parse("127.0.0.1:9464", open: false) == Endpoint(address: "127.0.0.1", port: 9464))
        #expect(try MetricsAddress.parse("[::1]:9464", open: false) == Endpoint(address: "::1", port: 9464))
        #expect(try MetricsAddress.parse("localhost:9464", open: false) == Endpoint(address: "127.0.0.1", port: 9464))
        #expect(try MetricsAddress.parse("9464", open: false) == Endpoint(address: "127.0.0.1", port: 9464))
        #expect(try MetricsAddress.parse("0.0.0.0:9464", open: true) == Endpoint(address: "0.0.0.0", port: 9464))
        #expect(throws: MetricsError.notLoopback(Endpoint(address: "0.0.0.0", port: 9464))) { try MetricsAddress.parse("0.0.0.0:9464", open: false) }
        #expect(throws: MetricsError.notLoopback(Endpoint(address: "192.168.1.5", port: 1))) { try MetricsAddress.parse("192.168.1.5:1", open: false) }
        for bad in ["example.com:9464", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", ":9464", ""] {
            #expect(throws: MetricsError.badAddress(bad)) { try MetricsAddress.parse(bad, open: false) }
        }
        #expect(MetricsError.notLoopback(Endpoint(address: "0.0.0.0", port: 9464)).message
                == "--metrics 0.0.0.0:9464 would let other machines read this session's counters with no password; serve on 127.0.0.1 (a scraper elsewhere can reach it through an SSH tunnel), or add --metrics-open to serve there anyway.")
        #expect(MetricsError.badAddress("x").message == "--metrics takes a numeric address and port such as 127.0.0.1:9464 or [::1]:9464, not 'x'.")
    }
}
