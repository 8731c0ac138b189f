import CommandLineParser
import FlowStore
import Foundation
import HTTPReading
import Recording
import TVCore
import TVHome

/// `tv turns FLOW`: what was said inside one connection, turn by turn; `--http` reads it as
/// HTTP/1 or HTTP/2 messages; `--turn N --raw` hands over one whole kept turn, byte for byte.
enum TurnsCommand {
    static let spec = CommandSpec(
        name: "turns", summary: "Show what was said inside one connection, turn by turn (decrypted content).",
        discussion: "A turn is everything one side said before the other answered. Each block gives the turn's number, direction, when it began (seconds from the connection's first byte) and how many bytes were kept; a cut turn gives both figures, and the side it belongs to was not recorded after it. Bodies are text when they read as text, else a hex dump; previews are capped, --full prints everything that was kept. With --http, content codings are undone within limits (1,000 times a body's kept size, at least 64 KiB; at most 16 MiB a body and 64 MiB for the command), and a sentence says where one cut. --turn N --raw writes one whole kept turn byte for byte, for sharing one turn at a time.",
        options: [OptionSpec("turn", value: "N", help: "Only turn N (printed in full)."),
                  OptionSpec("raw", help: "With --turn: the turn's kept bytes exactly, nothing else."),
                  OptionSpec("output", short: "o", value: "FILE", help: "With --raw: write the bytes to FILE (mode 0600) instead of standard output."),
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

        let home = try inv.existingHome()
        let flows = try FlowStore(readingHome: home)
        defer { flows.close() }
        let content = try ContentStore(readingHome: home)
        defer { content.close() }
        let record = try flows.flow(id: id)
        var indexed = try content.turns(flow: id)
        let damaged = try content.damagedTurns(flow: id)
        for row in damaged { inv.console.note("tv: " + row.sentence) }
        if record == nil && indexed.isEmpty && damaged.isEmpty {
            throw UsageRefusal("There is no flow \(id) in this data folder; `tv flows` lists the ones there are.", exitCode: 1)
        }
        if let only {
            guard let turn = indexed.first(where: { $0.turn.number == only }) else {
                let known = indexed.isEmpty ? "no turns are kept for it" : "its turns are 1 to \(indexed.last!.turn.number)"
                throw UsageRefusal("Flow \(id) has no turn \(only); \(known).", exitCode: 1)
            }
            indexed = [turn]
            if c.has("raw") { return try raw(inv, turn: turn, content: content) }
        }
        let items = indexed.map { turn -> TurnsPresentation.Item in
            do {
                return .init(turn: turn.turn, bytes: try content.bytes(of: turn))
            } catch let error as UserFacingError {
                return .init(turn: turn.turn, bytes: nil, unreadable: error.message)
            } catch {
                return .init(turn: turn.turn, bytes: nil, unreadable: "\(error)")
            }
        }
        let full = c.has("full") || only != nil
        let plain = TurnsPresentation(flowID: id, flow: record, items: items, full: full)
        if c.has("http") {
            let recorded = items.compactMap { item in item.bytes.map { RecordedTurn(turn: item.turn, bytes: $0) } }
            let http = HTTPPresentation(flowID: id, flow: record, result: HTTPReader.read(recorded), full: full)
            // Bodies are decoded one at a time, within one budget for the command, as they are printed.
            let reader = BoundedBodyReader()
            if inv.json {
                var text = ""
                http.writeJSON(reader: reader) { piece in
                    text += piece
                    if text.utf8.count >= 65_536 {
                        inv.console.out(text)
                        text = ""
                    }
                }
                inv.console.line(text)
                return 0
            }
            if items.isEmpty {
                for line in plain.lines() { inv.console.line(line) }
                return 0
            }
            inv.console.lines { line in http.write(reader: reader, line) }
            if case .notHTTP = http.result {
                for line in plain.lines().dropFirst() { inv.console.line(line) }
            }
            return 0
        }
        if inv.json {
            inv.console.line(plain.json().serialized(pretty: true))
        } else {
            for line in plain.lines() { inv.console.line(line) }
        }
        return 0
    }

    /// One whole kept turn, byte for byte, to `-o FILE` or standard output.
    static func raw(_ inv: Invocation, turn: IndexedTurn, content: ContentStore) throws -> Int32 {
        let bytes = try content.bytes(of: turn)
        let figures = TurnsPresentation.figures(turn.turn)
        if let output = inv.command.value("output") {
            try FileModes.writeAtomically(bytes, to: output, mode: 0o600)
            inv.console.note("Wrote turn \(turn.turn.number) of flow \(turn.flowID) to \(output) (\(figures)).")
            return 0
        }
        // Text goes to a terminal as it is only when it cannot drive or reorder it (bidi controls
        // pass `PrintableText`); CR and LF of HTTP lines, and tabs, are fine.
        let terminalSafe = PrintableText.text(bytes).map { text in
            !text.unicodeScalars.contains { TerminalText.isEscaped($0) && $0 != "\n" && $0 != "\r" && $0 != "\t" }
        } ?? false
        if inv.console.stdoutIsTerminal && !terminalSafe {
            throw UsageRefusal("Turn \(turn.turn.number) is binary or holds control characters, and standard output is a terminal; write it with -o FILE or redirect it.", exitCode: 1)
        }
        inv.console.bytes(bytes)
        if turn.turn.truncated || turn.turn.incomplete {
            inv.console.note("tv: this is what was kept of turn \(turn.turn.number): \(figures).")
        }
        return 0
    }
}
