import CommandLineParser
import TVCore

/// `tv turns FLOW`: what was said inside one connection, turn by turn; `--http` reads it as
/// HTTP/1 or HTTP/2 messages; `--turn N --raw` hands over one whole kept turn, byte for byte.
enum TurnsCommand {
    static let spec = CommandSpec(
        name: "turns", summary: "Show what was said inside one connection, turn by turn (decrypted content).",
        discussion: "A turn is everything one side said before the other answered. Each block gives the turn's number, direction, when it began (seconds from the connection's first byte) and how many bytes were kept; a cut turn gives both figures (after a turn the 64 KiB limit cut, its side's next turn is kept again; after the flow budget's, the side was not recorded further); on HTTP/2 each stream's body keeps at most 64 KiB instead (the turn says when bodies in it were shortened). Bodies are text when they read as text, else a hex dump; previews are capped, --full prints everything that was kept. With --http, content codings are undone within limits (1,000 times a body's kept size, at least 64 KiB; at most 16 MiB a body and 64 MiB for the command), and a sentence says where one cut. --turn N --raw writes one whole kept turn byte for byte, for sharing one turn at a time.",
        options: [OptionSpec("turn", value: "N", help: "Only turn N (printed in full)."),
                  OptionSpec("raw", help: "With --turn: the turn's kept bytes exactly, nothing else."),
                  OptionSpec("output", short: "o", value: "FILE", help: "With --raw: write the bytes to FILE (mode 0600) instead of standard output (- is standard output)."),
                  OptionSpec("full", help: "Print every kept byte instead of previews."),
                  OptionSpec("http", help: "Read the turns as HTTP/1.x or HTTP/2 messages."),
                  OptionSpec("json", help: "Print as JSON (every kept byte, as text or base64).")],
        positionals: [PositionalSpec("FLOW", help: "The flow's id, as `tv flows` prints it.")])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["turns": turns]

    static func turns(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        let text = c.positionals[0]
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a flow id; `tv flows` lists them.") }
        var only: Int?
        if let n = c.value("turn") {
            guard let number = Int(n), number > 0 else { throw UsageRefusal("--turn takes a turn number (1, 2, …), not '\(n)'.") }
            only = number
        }
        if c.has("raw") && only == nil { throw UsageRefusal("--raw writes one turn; add --turn N (the numbers are in `tv turns \(id)`).") }
        if c.has("output") && !c.has("raw") { throw UsageRefusal("-o FILE goes with --turn N --raw.") }
        if c.has("raw") && (c.has("http") || c.has("json")) { throw UsageRefusal("--raw prints the bytes alone; leave out --http and --json.") }

        let shape: TurnsReading.Shape
        if c.has("raw"), let only {
            shape = .raw(turn: only, file: try c.value("output").flatMap { try inv.outputFile($0).path })
        } else {
            shape = .shown(turn: only, full: c.has("full"), http: c.has("http"), json: inv.json)
        }
        try FlowCommands.askSessionToFlush(inv)
        try TurnsReading(flowID: id, shape: shape).run(home: try inv.existingHome(), to: inv.console)
        return 0
    }
}
