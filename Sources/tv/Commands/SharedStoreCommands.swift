import CommandLineParser
import FlowStore
import Foundation
import Settings
import TVCore
import TVHome

/// The shared store's reading side (issue 25): `tv flows --store URL [--instance NAME]`,
/// `tv flow ID --store URL`, and `tv store instances`. Writing is `tv run --store URL`.
enum SharedStoreCommands {
    static let storeOption = OptionSpec("store", value: "URL", help: "Read the shared store at URL (postgresql://user@host/db; no password in it: PGPASSFILE or ~/.pgpass) instead of this data folder: every instance's flows, each tagged MACHINE:ID.")
    static let instanceOption = OptionSpec("instance", value: "NAME", help: "With --store: only the flows of the instance with this id or machine name (`tv store instances` lists them).")

    static let spec = CommandSpec(
        name: "store", summary: "The shared store on PostgreSQL that sessions write with --store (or the store.url setting).",
        discussion: "Flow metadata of every instance pointed at the store is there, each row tagged with the instance that saw it (its id and machine name); decrypted content, packets and captures stay on the machine that recorded them. `tv flows`, `tv flow`, `tv requests`, `tv request`, `tv activity` and `tv export connections` read it with --store URL.",
        subcommands: [
            CommandSpec(name: "instances", summary: "The instances that wrote to the shared store, with their flow counts, most recent first.",
                        options: [storeOption, instanceOption, OptionSpec("json", help: "Print as JSON.")]),
            SharedStoreBackfill.spec,
        ],
        defaultSubcommand: "instances")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["store instances": instances, "store backfill": SharedStoreBackfill.run]

    /// The shared history `--store` (else, when `settingFallback`, the store.url setting) names;
    /// nil when neither does.
    /// - Parameter instance: the instance to narrow to (a flow label's), instead of `--instance`.
    static func open(_ inv: Invocation, settingFallback: Bool = false, instance: String? = nil) throws -> SharedFlowHistory? {
        let c = inv.command
        var url = c.value("store")
        if url == nil, settingFallback {
            let saved = try inv.settingsStore().read()[SettingKeys.storeURL]
            url = saved.isEmpty ? nil : saved
        }
        if url == "" {
            // libpq reads an empty string as its defaults (localhost:5432, the user's database).
            throw UsageRefusal("--store takes a postgresql://HOST[:PORT]/DATABASE URL; it was empty.")
        }
        guard let url else {
            if c.has("instance") { throw UsageRefusal("--instance goes with --store URL; it names one instance of the shared store.") }
            return nil
        }
        return try SharedFlowHistory(try SharedStoreTarget(url), instance: instance ?? c.value("instance"))
    }

    /// An audit session's number is its instance's own: `--audit N` over several instances
    /// mixed their sessions (a trial's `--audit 1` listed two projects' flows).
    static func checkAudit(_ query: FlowQuery, _ history: SharedFlowHistory) throws {
        guard let session = query.auditSession, !history.narrowsToOneInstance else { return }
        throw UsageRefusal("Audit session \(session) is a number each instance gives its own sessions; add --instance NAME to say whose (`tv store instances` lists them).")
    }

    /// `tv flows --store URL`: one page of the shared history.
    static func flows(_ inv: Invocation, history: SharedFlowHistory, query: FlowQuery, now: Int64) throws -> Int32 {
        try checkAudit(query, history)
        let c = inv.command
        if c.has("filter") { throw UsageRefusal("--filter reads this data folder only; with --store, narrow with --host, --status, --program, --since, --from, --to and --instance.") }
        if c.has("follow") { throw UsageRefusal("--follow watches this data folder's session; the shared store is read a page at a time.") }
        defer { history.close() }
        try SharedStoreReadCommands.hostIndexNote(inv, history: history, query: query)
        let page = try history.flows(query)
        if inv.json {
            inv.console.line(FlowListPresentation.json(page).serialized(pretty: true))
        } else {
            let total = page.flows.isEmpty && page.nextCursor == nil ? try history.count(FlowQuery()) : nil
            let repeated = ["store", "instance"].flatMap { name in c.values(name).flatMap { ["--" + name, $0] } } + FlowCommands.repeatedOptions(c)
            let several = try history.machinesWithSeveralInstances()
            for line in FlowListPresentation(page: page, now: now, repeatedOptions: repeated, totalFlows: total,
                                             machinesWithSeveralInstances: several).lines(width: inv.terminalColumns) {
                inv.console.line(line)
            }
        }
        return 0
    }

    /// `tv flow ID --store URL`: the shared row (its content and packets are the instance's).
    static func flow(_ inv: Invocation, history: SharedFlowHistory, id: Int64) throws -> Int32 {
        defer { history.close() }
        guard let record = try history.flow(id: id) else {
            throw UsageRefusal("There is no flow \(id) in the shared store\(history.instance.map { " for instance \(TerminalText.line($0))" } ?? ""); `tv flows --store URL` lists the ones there are.", exitCode: 1)
        }
        let requests = try history.exchanges(of: record)
        if inv.json {
            inv.console.line(RequestListPresentation.json(flow: FlowDetailPresentation.json(record), requests.exchanges).serialized(pretty: true))
        } else {
            for line in FlowDetailPresentation.lines(record, now: FlowCommands.nowMicros()) { inv.console.line(line) }
            for line in RequestListPresentation.flowLines(requests.exchanges, damaged: requests.damaged) { inv.console.line(line) }
        }
        return 0
    }

    static func instances(_ inv: Invocation) throws -> Int32 {
        guard let history = try open(inv, settingFallback: true) else {
            throw UsageRefusal("No shared store is named: pass --store URL, or save one with `tv settings set store.url URL`.")
        }
        defer { history.close() }
        let instances = try history.instances()
        if inv.json {
            inv.console.line(SharedInstancePresentation.json(instances).serialized(pretty: true))
        } else {
            for line in SharedInstancePresentation.lines(instances, now: FlowCommands.nowMicros()) { inv.console.line(line) }
        }
        return 0
    }
}
