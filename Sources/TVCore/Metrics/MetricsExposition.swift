import FlowTerms

/// A live session's counters in Prometheus's text exposition format, version 0.0.4
/// (https://prometheus.io/docs/instrumenting/exposition_formats/): `# HELP` and `# TYPE` lines,
/// counters named `…_total`, label values escaped (`\\`, `\"`, `\n`).
///
/// Made from the session's `status` values (the control socket's answer, what `tv status`
/// shows), so the two never disagree: no second set of counters. A sample whose value is absent
/// (a capture queue in a session without capture) is left out; a family with no sample too.
/// Only numbers and fixed label values are exported: no host names or error sentences.
public enum MetricsExposition {
    /// The `Content-Type` of the exposition (the format's version and charset).
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A metric family: one name, one help line, one type, its samples.
    struct Family {
        enum Kind: String { case counter, gauge }
        var name: String
        var help: String
        var kind: Kind
        /// Label pairs and the status key each sample reads.
        var samples: [(labels: [(String, String)], key: String)]
    }

    /// The families read from `values`, in a fixed order.
    static func families(_ values: [String: String]) -> [Family] {
        var families: [Family] = [
            Family(name: "tv_flows_closed_total", help: "Flows closed this session, by status.", kind: .counter,
                   samples: FlowStatus.allCases.map { ([("status", $0.rawValue)], SessionStatusPresentation.closedKey($0)) }),
            Family(name: "tv_connections_open", help: "Client connections open now.", kind: .gauge, samples: [([], "openConnections")]),
            Family(name: "tv_connections_limit", help: "Connections the session holds at most (the connection cap).", kind: .gauge,
                   samples: [([], "connectionCap")]),
            Family(name: "tv_connections_accepted_total", help: "Client connections accepted.", kind: .counter, samples: [([], "accepted")]),
            Family(name: "tv_connections_refused_total", help: "Client connections refused, by reason.", kind: .counter,
                   samples: [([("reason", "cap")], "refusedByCap"), ([("reason", "per_client")], "refusedPerClient"),
                             ([("reason", "descriptors")], "acceptsFailedForDescriptors")]),
            Family(name: "tv_head_timeouts_total", help: "Connections closed because the request head was not whole within the head timeout.",
                   kind: .counter, samples: [([], "headTimeouts")]),
            Family(name: "tv_bytes_total", help: "Bytes relayed, by direction.", kind: .counter,
                   samples: [([("direction", Direction.clientToServer.rawValue)], "bytesFromClients"),
                             ([("direction", Direction.serverToClient.rawValue)], "bytesFromServers")]),
            Family(name: "tv_handshakes_total", help: "Closed connections offered for inspection, by how the offer ended (the outcomes tv diag counts).",
                   kind: .counter, samples: prefixed(values, "offered.", except: ["offered.total"], label: "outcome")),
            Family(name: "tv_drops_total", help: "Items a full queue dropped (never waited for), by the queue.", kind: .counter,
                   samples: [([("queue", "flow_writer")], "recording.flowEventsDropped"),
                             ([("queue", "content_writer")], "content.chunksDropped"),
                             ([("queue", "capture")], "capture.packetsDropped"),
                             ([("queue", "capture_secrets")], "capture.secretsDropped"),
                             ([("queue", "program_lookup")], "programs.dropped"),
                             ([("queue", "decrypted_capture")], QueueStatus.decryptedEventsDropped)]),
            Family(name: "tv_dropped_bytes_total", help: "Bytes a full queue dropped, by the queue.", kind: .counter,
                   samples: [([("queue", "decrypted_capture")], QueueStatus.decryptedBytesDropped)]),
            Family(name: "tv_queue_depth", help: "Items waiting in a writer's queue now, by the queue.", kind: .gauge,
                   samples: [([("queue", "flow_writer")], QueueStatus.flowQueueEvents),
                             ([("queue", "content_writer")], "content.queueEvents")]),
            Family(name: "tv_queue_bytes", help: "Bytes waiting in a writer's queue now, by the queue.", kind: .gauge,
                   samples: [([("queue", "content_writer")], "content.queueBytes")]),
            Family(name: "tv_names_total", help: "Closed flows named, by where the name came from.", kind: .counter,
                   samples: HostOrigin.allCases.filter { $0 != .none }.map { ([("origin", $0.rawValue)], SessionTally.originKey($0)) }),
            Family(name: "tv_flows_not_saved_total", help: "Flows given up with no row in the database.", kind: .counter,
                   samples: [([], "recording.flowsNotSaved")]),
            Family(name: "tv_writes_failed_total", help: "Writer transactions that failed (retries included), by writer.", kind: .counter,
                   samples: [([("writer", "flows")], "recording.flowWritesFailed"), ([("writer", "content")], "recording.contentWritesFailed"),
                             ([("writer", "capture")], "capture.packetsFailed"),
                             ([("writer", "decrypted_capture")], "decryptedCapture.failedWrites")]),
            Family(name: "tv_writer_failing", help: "1 while a writer's writes fail, else 0.", kind: .gauge,
                   samples: [([("writer", "flows")], "recording.flowsFailing"), ([("writer", "content")], "recording.contentFailing"),
                             ([("writer", "decrypted_capture")], "decryptedCapture.failing")]),
            Family(name: "tv_decrypted_capture_packets_not_saved_total", help: "Decrypted capture packets that never reached a file (a full disk).",
                   kind: .counter, samples: [([], "decryptedCapture.packetsNotSaved")]),
            Family(name: "tv_content_turns_kept_total", help: "Turns of decrypted content written.", kind: .counter, samples: [([], "content.turnsKept")]),
            Family(name: "tv_content_bytes_kept_total", help: "Bytes of decrypted content written.", kind: .counter, samples: [([], "content.bytesKept")]),
            Family(name: "tv_capture_packets_written_total", help: "Packets written to the capture file.", kind: .counter,
                   samples: [([], "capture.packetsWritten")]),
            Family(name: "tv_program_lookups_total", help: "Flows whose program was looked up, by result.", kind: .counter,
                   samples: [([("result", "found")], "programs.found"), ([("result", "other_machine")], "programs.otherMachine"),
                             ([("result", "not_known")], "programs.notKnown")]),
            Family(name: "tv_inspection_enabled", help: "1 while the session inspects TLS, else 0.", kind: .gauge, samples: [([], "inspection")]),
            Family(name: "tv_start_time_seconds", help: "When the session started, seconds since 1970-01-01 UTC.", kind: .gauge,
                   samples: [([], "startedAt")]),
        ]
        families = families.map { family in
            var family = family
            family.samples = family.samples.filter { values[$0.key] != nil }
            return family
        }
        return families.filter { !$0.samples.isEmpty }
    }

    /// The exposition of `values` (a session's `status` answer).
    public static func render(_ values: [String: String]) -> String {
        var out = ""
        for family in families(values) {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n# TYPE \(family.name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                guard let number = number(values[sample.key]!, key: sample.key) else { continue }
                out += family.name
                if !sample.labels.isEmpty {
                    out += "{" + sample.labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
                }
                out += " " + number + "\n"
            }
        }
        return out
    }

    /// A status value as a sample value: decimal text as it is, `on`/`off` as 1/0, `startedAt`
    /// (µs) as seconds with six decimals; nil for anything else.
    static func number(_ text: String, key: String) -> String? {
        switch text {
        case "on": return "1"
        case "off": return "0"
        default:
            guard let n = Int64(text) else { return nil }
            if key == "startedAt" {
                let micros = String(abs(n) % 1_000_000)
                return (n < 0 ? "-" : "") + String(abs(n) / 1_000_000) + "." + String(repeating: "0", count: 6 - micros.count) + micros
            }
            return String(n)
        }
    }

    /// The samples of every key under `prefix` (sorted), the rest of the key as `label`'s value.
    private static func prefixed(_ values: [String: String], _ prefix: String, except: Set<String>, label: String) -> [(labels: [(String, String)], key: String)] {
        values.keys.filter { $0.hasPrefix(prefix) && !except.contains($0) }.sorted()
            .map { ([(label, String($0.dropFirst(prefix.count)))], $0) }
    }

    /// A label value escaped as the format says: `\` as `\\`, `"` as `\"`, line feed as `\n`.
    static func escapeLabel(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A help text escaped as the format says: `\` as `\\`, line feed as `\n`.
    static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
