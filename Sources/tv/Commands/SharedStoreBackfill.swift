import CommandLineParser
import FlowStore
import Foundation
import Settings
import TVCore
import TVHome

/// `tv store backfill`: this data folder's closed flows (with their programs and request rows)
/// sent to the shared store as its instance, for the flows a session could not send there (the
/// server away longer than the writer waits: `tv stop` says how many "never reached the shared
/// store"), or a history recorded before the data folder pointed at the store. Rows already there
/// are written again with the same facts (the shared writer's upsert); open flows are left to
/// the session that has them, and those of sessions run with `--store ''` stay here
/// (`StoreKeptLocal`).
enum SharedStoreBackfill {
    static let spec = CommandSpec(
        name: "backfill", summary: "Send this data folder's closed flows in a span to the shared store, as this instance (flows that never reached it).",
        discussion: "Give the span with --since SPAN, --from TIME [--to TIME], or --all. Flows already in the store are written again with the same facts; flows still open are left to the session that has them. Only metadata travels, as with tv run --store: content, packets and captures stay here.",
        options: [OptionSpec("store", value: "URL", help: "The shared store (postgresql://user@host/db); default: the store.url setting."),
                  OptionSpec("since", value: "SPAN", help: "Flows started within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Flows started at or after TIME (UTC)."),
                  OptionSpec("to", value: "TIME", help: "Flows started before TIME."),
                  OptionSpec("all", help: "Every closed flow of this data folder.")])

    /// Flows sent between two waits for the shared writer (its queue never overflows).
    static let flowsPerFlush = 500

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        let given = c.value("store")
        let saved = given == nil ? try inv.settingsStore().read()[SettingKeys.storeURL] : ""
        guard let url = given ?? (saved.isEmpty ? nil : saved), !url.isEmpty else {
            throw UsageRefusal("`tv store backfill` needs the shared store: --store postgresql://HOST[:PORT]/DATABASE, or the store.url setting.")
        }
        guard c.has("all") || c.has("since") || c.has("from") || c.has("to") else {
            throw UsageRefusal("Say which flows to send: --since SPAN, --from TIME [--to TIME], or --all.")
        }
        if c.has("all") && (c.has("since") || c.has("from") || c.has("to")) {
            throw UsageRefusal("--all sends every closed flow; leave out --since, --from and --to, or --all.")
        }
        let now = FlowCommands.nowMicros()
        var query = try FlowCommands.filters(c, now: now)
        let home = try inv.existingHome()
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let target = try SharedStoreTarget(url)
        let (instance, renewal) = try InstanceIdentity.of(home)
        if let renewal { inv.console.note(InstanceBinding.renewalSentence(old: renewal.previousID, new: instance.id, renewal.mismatch)) }
        // Counts the flows the store holds other flows under the ids of (`SharedIDClash`).
        let clashes = SharedIDFloor()
        let writer = try FlowWriter(shared: target, instance: instance, localPath: home.databasePath, idFloor: clashes)
        var flows = 0, requests = 0, open = 0, copied = 0, keptLocal = 0
        var sent: [Int64] = []
        let kept = StoreKeptLocal.ranges(folder: home.path)
        func send(_ event: FlowEvent) {
            if writer.enqueue(event) { return }
            writer.flush()
            _ = writer.enqueue(event)
        }
        var after: String?
        repeat {
            query.limit = 1_000
            query.after = after
            let page = try store.flows(query)
            for flow in page.flows {
                // Recorded before this folder took its own id (a copy): the other folder's rows.
                if let first = instance.firstFlow, flow.id < first { copied += 1; continue }
                // Recorded by a session run with `--store ''`: kept here.
                if StoreKeptLocal.contains(kept, flow.id) { keptLocal += 1; continue }
                guard flow.duration != nil else { open += 1; continue }
                send(.closed(flow))
                if let program = flow.program { send(.program(flowID: flow.id, program)) }
                for exchange in try store.exchanges(ofFlow: flow.id).exchanges {
                    send(.exchange(exchange))
                    requests += 1
                }
                flows += 1
                sent.append(flow.id)
                if flows % flowsPerFlush == 0 { writer.flush() }
            }
            after = page.nextCursor
        } while after != nil
        writer.flush()
        let counters = writer.counters
        writer.close()
        let lost = counters.dropped + counters.flowsNotSaved + counters.exchangesNotSaved
        if counters.failing || lost > 0 {
            let why = counters.lastError?.message ?? "the shared writer dropped \(lost) event\(lost == 1 ? "" : "s")"
            throw UsageRefusal("Not every flow reached the shared store at \(target.server): \(why) Nothing is lost here; run the same command again once the store answers.", exitCode: 1)
        }
        // Sent: no longer a session's given-up flows (`StoreUnsent`).
        StoreUnsent.remove(sent, folder: home.path)
        let clashing = clashes.clashingIDs.sorted()
        if !clashing.isEmpty {
            flows -= clashing.count
            for id in clashing { requests -= try store.exchanges(ofFlow: id).exchanges.count }
        }
        var line = "Sent \(Units.grouped(Int64(flows))) flow\(flows == 1 ? "" : "s") and \(Units.grouped(Int64(requests))) request row\(requests == 1 ? "" : "s") to the shared store at \(target.server) as instance \(instance.machine) \(instance.id)"
        line += flows == 0 ? " (none closed in that span)." : "; flows already there were written again with the same facts."
        inv.console.line(line)
        if copied > 0 {
            inv.console.line("\(Units.grouped(Int64(copied))) flow\(copied == 1 ? " was" : "s were") left out: recorded before this data folder became instance \(instance.id) (it is a copy), \(copied == 1 ? "it is" : "they are") the folder it came from's, under that folder's id.")
        }
        if !clashing.isEmpty {
            inv.console.line("\(Units.grouped(Int64(clashing.count))) flow\(clashing.count == 1 ? " was" : "s were") left out: the shared store holds other flows of this instance under \(clashing.count == 1 ? "its id" : "their ids") (this data folder's database looks restored from an older copy); \(clashing.count == 1 ? "it stays" : "they stay") here, and the store's rows are as they were.")
        }
        if keptLocal > 0 {
            inv.console.line("\(Units.grouped(Int64(keptLocal))) flow\(keptLocal == 1 ? " was" : "s were") left out: recorded by a session run with --store '', which keeps its flows in this data folder only.")
        }
        if open > 0 {
            inv.console.line("\(Units.grouped(Int64(open))) open flow\(open == 1 ? " was" : "s were") left to the session that has \(open == 1 ? "it" : "them").")
        }
        return 0
    }
}
