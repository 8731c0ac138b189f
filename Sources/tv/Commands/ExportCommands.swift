import CommandLineParser
import FlowStore
import Foundation
import HTTPReading
import Recording
import TVCore
import TVHome

/// `tv export har FLOW… -o FILE`: the HTTP read from kept content, as HAR 1.2 (what browsers and
/// HTTP Toolkit open). This export is named for content: it carries the bodies that were kept.
enum ExportCommands {
    static let harSpec = CommandSpec(
        name: "har", summary: "Write the HTTP of kept content as HAR 1.2 (carries bodies).",
        discussion: "Reads each flow's kept turns as HTTP/1.x or HTTP/2 (the same reading as `tv turns FLOW --http`) and writes one HAR entry per request. A body the recording budget cut is written as far as it was kept, and the entry's comment says so. Content codings are undone within limits (1,000 times a body's kept size, at least 64 KiB; at most 16 MiB a body and 64 MiB for the command), and a body's comment says where one cut. The file is written whole or not at all (mode 0600).",
        options: [OptionSpec("output", short: "o", value: "FILE", help: "The HAR file to write (required).")],
        positionals: [PositionalSpec("FLOW", help: "Flow ids, as `tv flows` prints them.", variadic: true)])

    static let spec = CommandSpec(name: "export", summary: "Write what tv kept to a file another tool reads.",
                                  subcommands: [harSpec])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["export har": har]

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
        let home = try inv.existingHome()
        let flows = try FlowStore(readingHome: home)
        defer { flows.close() }
        let content = try ContentStore(readingHome: home)
        defer { content.close() }
        var harFlows: [HARFlow] = []
        var skipped: [String] = []
        for id in ids {
            guard let record = try flows.flow(id: id) else {
                throw UsageRefusal("There is no flow \(id) in this data folder; `tv flows` lists the ones there are.", exitCode: 1)
            }
            let turns = try content.recordedTurns(flow: id)
            for row in try content.damagedTurns(flow: id) { inv.console.note("tv: " + row.sentence) }
            guard !turns.isEmpty else {
                skipped.append("flow \(id): " + ContentAbsence(flow: record).sentence(flowID: id))
                continue
            }
            switch HTTPReader.read(turns) {
            case let .conversation(conversation):
                harFlows.append(HARFlow(id: id, startTime: record.startTime, scheme: record.status == .notEncrypted ? "http" : "https",
                                        host: record.host, serverAddress: record.serverAddress, serverPort: record.serverPort,
                                        conversation: conversation))
            case let .notHTTP(reason):
                skipped.append("flow \(id): not read as HTTP — \(TerminalText.line(reason))")
            }
        }
        for line in skipped { inv.console.note("tv: left out " + line) }
        let entries = harFlows.reduce(0) { $0 + $1.conversation.exchanges.filter { $0.request != nil }.count }
        guard entries > 0 else {
            throw UsageRefusal("None of these flows holds kept HTTP, so nothing was written.", exitCode: 1)
        }
        // Bodies are decoded one at a time, within one budget for the command, straight into the file.
        try FileModes.writeAtomically(to: output, mode: 0o600) { write in
            HARExport.write(harFlows, creatorVersion: TVVersion.number, reader: BoundedBodyReader()) { write(Array($0.utf8)) }
            write([0x0A])
        }
        inv.console.line("Wrote \(entries) HAR entr\(entries == 1 ? "y" : "ies") from \(harFlows.count) flow\(harFlows.count == 1 ? "" : "s") to \(output); it holds the kept bodies, so share it with care.")
        return 0
    }
}
