import CommandLineParser
import FlowFilter
import TVCore

/// `tv export har FLOW… -o FILE`: the HTTP read from kept content, as HAR 1.2 (what browsers and
/// HTTP Toolkit open), or from exchange rows where no content was kept. It carries the bodies
/// that were kept.
enum ExportCommands {
    static let harSpec = CommandSpec(
        name: "har", summary: "Write the HTTP requests as HAR 1.2 (with the kept bodies, if any).",
        discussion: "Reads each flow's kept turns as HTTP/1.x or HTTP/2 (the same reading as `tv turns FLOW --http`) and writes one HAR entry per request; a flow with no kept content is written from its exchange rows (method, URL without the query string, status, body sizes and times; no headers or bodies, and each entry's comment says so). Flows are named by flow id (40, as `tv flows` prints it; a request id of `tv requests` is not one), by range (40-48), by --all, or by start time (--since, --from, --to, as `tv flows` takes them); these narrow each other, and --filter then keeps only the requests it matches (alone it looks through every flow). A body the recording budget cut is written as far as it was kept, and the entry's comment says so. Content codings are undone within limits (1,000 times a body's kept size, at least 64 KiB; at most 16 MiB a body and 64 MiB for the command), and a body's comment says where one cut. The file is written whole or not at all (mode 0600); -o - writes the HAR to standard output and the summary to standard error.",
        options: [OptionSpec("output", short: "o", value: "FILE", help: "The HAR file to write (required; - writes to standard output)."),
                  OptionSpec("all", help: "Every flow (within --since/--from/--to when given)."),
                  OptionSpec("since", value: "SPAN", help: "Only flows started within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Only flows started at or after TIME (UTC: 2026-11-30T14:05Z, 2026-11-30, or epoch seconds)."),
                  OptionSpec("to", value: "TIME", help: "Only flows started before TIME."),
                  OptionSpec("filter", value: "EXPR", help: "Only the requests matching EXPR. " + FilterOperator.summary)],
        positionals: [PositionalSpec("FLOW", help: "Flow ids or ranges of them (40 41 50-58), as `tv flows` prints them: not the request ids of `tv requests` (`tv request ID` names its flow; --filter picks requests).", optional: true, variadic: true)])

    static let spec = CommandSpec(name: "export", summary: "Write what tv kept to a file another tool reads.",
                                  subcommands: [harSpec, ExportConnectionsCommand.spec])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "export har": har, "export connections": ExportConnectionsCommand.run,
    ]

    static func har(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        guard let output = c.value("output") else {
            throw UsageRefusal("`tv export har` needs -o FILE: HAR carries the kept bodies, so it goes to a file you name.")
        }
        var selection = HARSelection()
        try selection.add(c.positionals)
        selection.all = c.has("all")
        let now = FlowCommands.nowMicros()
        if let since = c.value("since") { selection.from = now - (try TimeFilter.span(since)) }
        if let from = c.value("from") { selection.from = max(selection.from ?? .min, try TimeFilter.moment(from)) }
        if let to = c.value("to") { selection.to = try TimeFilter.moment(to) }
        let filter = try c.value("filter").map(FilterParser.parse)
        selection.filtered = filter != nil
        try selection.validate()
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        let ids: [Int64]
        do {
            defer { store.close() }
            ids = try selection.flowIDs(in: store)
        }
        try HARReading(flowIDs: ids, file: try inv.outputFile(output), creatorVersion: TVVersion.number, filter: filter, itemized: selection.onlyIDs)
            .run(home: try inv.existingHome(), to: inv.console)
        return 0
    }
}
