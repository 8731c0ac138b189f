import CommandLineParser
import TVCore

/// `tv export har FLOW… -o FILE`: the HTTP read from kept content, as HAR 1.2 (what browsers and
/// HTTP Toolkit open). This export is named for content: it carries the bodies that were kept.
enum ExportCommands {
    static let harSpec = CommandSpec(
        name: "har", summary: "Write the HTTP of kept content as HAR 1.2 (carries bodies).",
        discussion: "Reads each flow's kept turns as HTTP/1.x or HTTP/2 (the same reading as `tv turns FLOW --http`) and writes one HAR entry per request. A body the recording budget cut is written as far as it was kept, and the entry's comment says so. Content codings are undone within limits (1,000 times a body's kept size, at least 64 KiB; at most 16 MiB a body and 64 MiB for the command), and a body's comment says where one cut. The file is written whole or not at all (mode 0600).",
        options: [OptionSpec("output", short: "o", value: "FILE", help: "The HAR file to write (required).")],
        positionals: [PositionalSpec("FLOW", help: "Flow ids, as `tv flows` prints them.", variadic: true)])

    static let spec = CommandSpec(name: "export", summary: "Write what tv kept to a file another tool reads.",
                                  subcommands: [harSpec, ExportConnectionsCommand.spec])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "export har": har, "export connections": ExportConnectionsCommand.run,
    ]

    static func har(_ inv: Invocation) throws -> Int32 {
        guard let output = inv.command.value("output") else {
            throw UsageRefusal("`tv export har` needs -o FILE: HAR carries the kept bodies, so it goes to a file you name.")
        }
        guard !inv.command.positionals.isEmpty else { throw UsageRefusal("Name at least one flow id; `tv flows` lists them.") }
        var ids: [Int64] = []
        for text in inv.command.positionals {
            guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a flow id; `tv flows` lists them.") }
            if !ids.contains(id) { ids.append(id) }
        }
        try FlowCommands.askSessionToFlush(inv)
        try HARReading(flowIDs: ids, file: output, creatorVersion: TVVersion.number).run(home: try inv.existingHome(), to: inv.console)
        return 0
    }
}
