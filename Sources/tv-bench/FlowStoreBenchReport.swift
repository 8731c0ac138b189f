import Foundation
import TVHome

/// How `tv-bench flows` prints: a table for people, JSON (`--json`) for a file to keep.
enum FlowStoreBenchReport {
    static func table(flows: Int, insert: FlowStoreBench.Insert, rows: [FlowStoreBench.Row], fileBytes: Int64,
                      rounds: Int, met: Bool) -> [String] {
        var out: [String] = []
        out.append("FlowStore at \(grouped(flows)) flows (\(grouped(insert.exchanges)) exchanges), medians of \(rounds) runs; goals: insert ≥ 50,000 flows/s, each read ≤ 5 ms")
        out.append(String(format: "insert through the batched writer: %@ flows/s (%.1f s; %.1f µs of CPU per flow, both threads; the producer waited for the writer %d times)%@",
                          grouped(Int(insert.flowsPerSecond)), insert.seconds, insert.cpuMicrosPerFlow, insert.producerWaits,
                          insert.flowsPerSecond >= FlowStoreBench.goalFlowsPerSecond ? "" : "  OVER GOAL"))
        out.append("database file: \(ByteWords.binary(fileBytes)) (\(grouped(Int(fileBytes) / max(flows, 1))) bytes per flow)")
        out.append("")
        let width = max(40, rows.map(\.name.count).max() ?? 0)
        out.append("read".padding(toLength: width, withPad: " ", startingAt: 0) + "  first page   next page   rows  plan")
        for row in rows {
            let over = row.firstMillis > FlowStoreBench.goalMillis || (row.nextMillis ?? 0) > FlowStoreBench.goalMillis
            out.append(row.name.padding(toLength: width, withPad: " ", startingAt: 0)
                       + "  " + millis(row.firstMillis).leftPadded(10)
                       + "  " + (row.nextMillis.map(millis) ?? "-").leftPadded(10)
                       + "  " + String(row.rows).leftPadded(5)
                       + "  " + row.plan.joined(separator: "; ") + (over ? "  OVER GOAL" : ""))
        }
        out.append("")
        out.append(met ? "Every goal is met." : "Some goals are not met (OVER GOAL above).")
        return out
    }

    static func json(flows: Int, insert: FlowStoreBench.Insert, rows: [FlowStoreBench.Row], fileBytes: Int64, met: Bool) -> String {
        JSONValue.object([
            ("flows", .int(Int64(flows))),
            ("exchanges", .int(Int64(insert.exchanges))),
            ("insert", .object([("seconds", .double(insert.seconds)), ("flowsPerSecond", .double(insert.flowsPerSecond)),
                                ("producerWaits", .int(Int64(insert.producerWaits))), ("cpuMicrosPerFlow", .double(insert.cpuMicrosPerFlow))])),
            ("databaseBytes", .int(fileBytes)),
            ("goals", .object([("flowsPerSecond", .double(FlowStoreBench.goalFlowsPerSecond)),
                               ("readMillis", .double(FlowStoreBench.goalMillis)), ("met", .bool(met))])),
            ("reads", .array(rows.map { row in
                .object([("name", .string(row.name)), ("firstPageMillis", .double(row.firstMillis)),
                         ("nextPageMillis", row.nextMillis.map { .double($0) } ?? .null), ("rows", .int(Int64(row.rows))),
                         ("plan", .array(row.plan.map { .string($0) }))])
            })),
        ]).serialized(pretty: true)
    }

    static func millis(_ value: Double) -> String { String(format: "%.2f ms", value) }

    static func grouped(_ n: Int) -> String { ByteWords.grouped(Int64(n)) }
}

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
