import CommandLineParser
import FlowStore
import Foundation
import TVCore
import TVHome

/// `tv activity`: the Timeline's scrub bar in the terminal: flows started per interval, from one
/// aggregate over the start-time index, zero-filled, as many bars as the terminal is wide.
enum ActivityCommand {
    static let spec = CommandSpec(
        name: "activity", summary: "Draw how many connections started per interval, as a bar chart as wide as the terminal.",
        discussion: "Bar widths are round (1 s … 1 week), the narrowest that fits. With no range it covers everything recorded. --from/--to is an absolute stretch, widened to whole bars; --since is relative to now. It counts every connection: no host or status filter applies. Audit markers in the stretch show as ▲ under their bar and one line each (time, text); --json lists them under markers.",
        options: [OptionSpec("bars", value: "N", help: "At most N bars (default: the terminal's width, else 60; 1-1000)."),
                  OptionSpec("since", value: "SPAN", help: "The last SPAN (90s, 15m, 1h, 2d, 1w), up to now."),
                  OptionSpec("from", value: "TIME", help: "From TIME (UTC: 2026-11-30T14:05Z, 2026-11-30, or epoch seconds)."),
                  OptionSpec("to", value: "TIME", help: "Up to TIME (default: now with --from, else the newest connection)."),
                  FlowCommands.json] + SharedStoreReadCommands.options)

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["activity": run]

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        var maxBars = Terminal.size(environment: inv.environment)?.columns ?? 60
        if let text = c.value("bars") {
            guard let n = Int(text), n >= 1, n <= 1_000 else { throw UsageRefusal("--bars takes a whole number from 1 to 1000, not '\(text)'.") }
            maxBars = n
        }
        if c.has("since"), c.has("from") || c.has("to") {
            throw UsageRefusal("--since is a stretch up to now; give either it or --from/--to, not both.")
        }
        let now = FlowCommands.nowMicros()
        var from = try c.value("from").map(TimeFilter.moment)
        var to = try c.value("to").map(TimeFilter.moment)
        if let since = c.value("since") {
            // A stretch of nothing is refused there (a trial's 0s said "--to must be after --from").
            let span = try TimeFilter.span(since)
            from = now - span
            to = now
        }
        if let f = from, let t = to, t <= f { throw UsageRefusal("--from must be before --to; nothing starts in that window.") }
        // The axis ends now at the latest: a --from still to come has nothing to draw.
        if let f = from, to == nil, f >= now { throw UsageRefusal("--from is still to come; give a moment before now.") }
        let report: ActivityReport
        if let shared = try SharedStoreCommands.open(inv) {
            report = try SharedStoreReadCommands.activity(inv, history: shared, from: from, to: to, now: now, maxBars: maxBars)
        } else {
            report = try local(inv, from: from, to: to, now: now, maxBars: maxBars)
        }
        if inv.json {
            inv.console.line(report.json.serialized(pretty: true))
        } else {
            for line in report.lines { inv.console.line(line) }
        }
        return 0
    }

    /// This data folder's report (asking a running session to write what it holds first).
    static func local(_ inv: Invocation, from: Int64?, to: Int64?, now: Int64, maxBars: Int) throws -> ActivityReport {
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let report: ActivityReport
        if let bounds = try store.startTimeBounds() {
            let axis = ActivityAxis.stretch(from: from, to: to, now: now, oldest: bounds.oldest, newest: bounds.newest, maxBars: maxBars)
            let sparse = axis.end > bounds.oldest ? try store.activity(from: axis.start, to: axis.end, widthMicros: axis.widthMicros) : [:]
            let markers = try store.audit.markers(from: axis.start, to: axis.end)
            report = ActivityReport(axis: axis, sparse: sparse, oldestKept: bounds.oldest, markers: markers)
        } else {
            report = ActivityReport(axis: nil, sparse: [:], oldestKept: nil)
        }
        return report
    }
}
