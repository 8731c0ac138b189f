import CommandLineParser
import FlowStore
import Foundation
import HTTPReading
import TVCore
import TVHome

/// The reading commands' `--store URL [--instance NAME]` beyond `tv flows` and `tv flow`
/// (issue 25): `tv requests`, `tv request ID`, `tv activity` and `tv export connections` read
/// the shared store's rows, each from the instance that saw it. Kept content (headers, bodies,
/// query strings) stays on the machine that recorded it, so what reads it (`--filter`, a
/// request's headers) is for that machine's own data folder.
enum SharedStoreReadCommands {
    /// `--store` and `--instance`, as `tv flows` takes them.
    static let options = [SharedStoreCommands.storeOption, SharedStoreCommands.instanceOption]

    /// `tv requests --store URL`: one page of the shared request rows (their flow ids are each
    /// instance's own; `--instance` names one).
    static func requests(_ inv: Invocation, history: SharedFlowHistory, query: ExchangeQuery) throws -> Int32 {
        let c = inv.command
        if c.has("filter") {
            throw UsageRefusal("--filter reads kept content, which stays on the machine that recorded it; with --store, narrow with --flow, --since, --from, --to and --instance.")
        }
        defer { history.close() }
        let page = try history.exchanges(query)
        // The flows shown whose requests were counted without rows say so, as `tv requests` does.
        let leftOut = LeftOutRequestsNotice(shared: try history.requestsLeftOut(shownIn: page))
        if let sentence = leftOut.sentence { inv.console.note("tv: " + sentence) }
        if inv.json {
            inv.console.line(RequestListPresentation.json(page).adding([("requestsLeftOut", leftOut.json)]).serialized(pretty: true))
        } else {
            let repeated = ["store", "instance", "flow", "since", "from", "to", "limit"].flatMap { name in c.values(name).flatMap { ["--" + name, $0] } }
            for line in RequestListPresentation(page: page, repeatedOptions: repeated).lines() { inv.console.line(line) }
        }
        return 0
    }

    /// `tv request ID --store URL`: the shared row (its path without the query), and where its
    /// headers and bodies are when they were kept.
    static func request(_ inv: Invocation, history: SharedFlowHistory, id: Int64) throws -> Int32 {
        defer { history.close() }
        guard let (exchange, instance) = try history.exchange(id: id) else {
            throw UsageRefusal("There is no request \(id) in the shared store\(history.instance.map { " for instance \(TerminalText.line($0))" } ?? ""); `tv requests --store URL` lists the ones there are.", exitCode: 1)
        }
        let destination = try history.flow(id: exchange.flowID, of: instance).flatMap { RequestDestination.differing(exchange, on: $0) }
        if inv.command.has("curl") {
            let curl = CurlCommand(exchange, request: nil, destination: destination)
            // The headers, query and body never travel: said so, not "keeping was off".
            if curl.note != nil {
                inv.console.note("tv: Its headers, query string and body never travel to the shared store, so this command sends the method and URL only; `tv request --curl` on \(TerminalText.line(instance.machine)) has them if they were kept.")
            }
            inv.console.line(curl.command)
            return 0
        }
        var detail = RequestDetailPresentation(exchange: exchange, recorded: nil, sharedFrom: instance)
        detail.destination = destination
        if inv.json {
            var text = ""
            detail.writeJSON(reader: BoundedBodyReader()) { text += $0 }
            inv.console.line(text)
        } else {
            let reader = BoundedBodyReader()
            inv.console.lines { line in detail.write(reader: reader, line) }
        }
        return 0
    }

    /// `tv activity --store URL`: every instance's flows (or the named one's) per interval, and
    /// their audit markers.
    static func activity(_ inv: Invocation, history: SharedFlowHistory, from: Int64?, to: Int64?, now: Int64, maxBars: Int) throws -> ActivityReport {
        defer { history.close() }
        guard let bounds = try history.startTimeBounds() else { return ActivityReport(axis: nil, sparse: [:], oldestKept: nil) }
        let axis = ActivityAxis.stretch(from: from, to: to, now: now, oldest: bounds.oldest, newest: bounds.newest, maxBars: maxBars)
        let sparse = axis.end > bounds.oldest ? try history.activity(from: axis.start, to: axis.end, widthMicros: axis.widthMicros) : [:]
        return ActivityReport(axis: axis, sparse: sparse, oldestKept: bounds.oldest, markers: try history.markers(from: axis.start, to: axis.end))
    }

    /// A note for `--host` on a shared store without its trigram index (every row is read).
    static func hostIndexNote(_ inv: Invocation, history: SharedFlowHistory, query: FlowQuery) throws {
        guard let host = query.host, !host.isEmpty, try !history.hasHostIndex() else { return }
        inv.console.note("tv: The shared store has no trigram index for --host (the pg_trgm extension is missing and this role may not create it), so every name (`flow_names`) is read; a database owner can run CREATE EXTENSION pg_trgm and the next tv that opens the store makes the index.")
    }
}
