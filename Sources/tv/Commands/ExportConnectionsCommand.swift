import CommandLineParser
import FlowStore
import TVCore

/// `tv export connections -o FILE`: the connection list (metadata only) as JSON or CSV.
enum ExportConnectionsCommand {
    static let spec = CommandSpec(
        name: "connections", summary: "Write the connection list (metadata only, no content) as JSON or CSV.",
        discussion: "Each connection: its id, times, transport, client and server as ADDRESS:PORT, the host name and where it came from, the status, bytes per direction, packets per direction where the tunnel counted them (UDP flows of tv exec and --mode tun; null elsewhere: a TCP flow's captured packets are listed by `tv packets ID`), and the handshake's facts. Nothing any connection said is inside. The newest 20,000 (or --limit N) connections matching the filters, newest first; the JSON ends with \"count\" and \"truncated\" (true when more matched). The file is written whole or not at all (mode 0600).",
        options: [OptionSpec("output", short: "o", value: "FILE", help: "The file to write (required; - writes to standard output)."),
                  OptionSpec("format", value: "FORMAT", help: "json or csv (RFC 4180, for spreadsheets); the default is csv for a FILE ending in .csv, else json."),
                  OptionSpec("limit", value: "N", help: "At most N connections, the newest (default 20000)."),
                  OptionSpec("host", value: "TEXT", help: "Only connections whose host name, or the server's or the client's address, contains TEXT."),
                  OptionSpec("status", value: "S", help: "Only one status, as `tv flows --status`."),
                  OptionSpec("program", value: "NAME", help: "Only connections opened by program NAME (its command name, as `tv flows --program`)."),
                  OptionSpec("since", value: "SPAN", help: "Only connections started within SPAN (90s, 15m, 1h, 2d, 1w)."),
                  OptionSpec("from", value: "TIME", help: "Only connections started at or after TIME (UTC)."),
                  OptionSpec("to", value: "TIME", help: "Only connections started before TIME.")] + SharedStoreReadCommands.options)

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        guard let output = c.value("output") else {
            throw UsageRefusal("`tv export connections` needs -o FILE, the file to write.")
        }
        let now = FlowCommands.nowMicros()
        var export = ConnectionExport(filters: try FlowCommands.filters(c, now: now))
        if let text = c.value("format") {
            guard let format = ConnectionExport.Format(rawValue: text.lowercased()) else {
                throw UsageRefusal("--format takes json or csv, not '\(text)'.")
            }
            export.format = format
        } else if output.lowercased().hasSuffix(".csv") {
            // A file named .csv is written as CSV (a trial's `-o all.csv` held JSON).
            export.format = .csv
        }
        if let text = c.value("limit") {
            guard let n = Int(text), n > 0 else { throw UsageRefusal("--limit takes a positive whole number, not '\(text)'.") }
            export.limit = n
        }
        if let shared = try SharedStoreCommands.open(inv) {
            defer { shared.close() }
            export.shared = true
            try SharedStoreCommands.checkAudit(export.filters, shared)
            try SharedStoreReadCommands.hostIndexNote(inv, history: shared, query: export.filters)
            return try write(inv, export, from: shared, to: try inv.outputFile(output), now: now)
        }
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        return try write(inv, export, from: store, to: try inv.outputFile(output), now: now)
    }

    /// Writes the file from `store` (this data folder's or the shared one), saying what it holds.
    /// Writes the file (or standard output, with the sentences on standard error) from `store`.
    static func write(_ inv: Invocation, _ export: ConnectionExport, from store: some FlowHistory, to output: OutputFile, now: Int64) throws -> Int32 {
        if inv.console.stdoutIsTerminal && output != .standardOutput {
            // Said before anything is written: what the file will hold, and what it will not.
            let preview = try export.preview(store)
            inv.console.line(ExportConnectionsPresentation.before(preview, file: output.name))
        }
        let summary = try export.write(store, to: output, output: inv.console, exportedAt: now)
        let after = ExportConnectionsPresentation.after(summary, file: output.name, format: export.format)
        if output == .standardOutput { inv.console.note("tv: " + after) } else { inv.console.line(after) }
        return 0
    }
}
