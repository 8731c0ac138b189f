import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome

/// `tv turns FLOW` from the stores to what is printed: the flow's record and kept turns are read,
/// damaged rows are named, the view asked for is chosen (plain, read as HTTP, JSON, one turn
/// raw), and turns that do not read as HTTP fall back to the plain view. The command parses its
/// options into a `Shape` and hands over its console; everything it prints comes from here.
///
/// Memory: the kept bytes of the flow's turns are read whole (a turn keeps at most 64 KiB and a
/// flow its budget per direction); bodies read as HTTP are decoded one at a time through one
/// `BoundedBodyReader`, whose budget bounds the whole command, and are streamed to the output as
/// they are decoded.
public struct TurnsReading: KeptContentReading {
    /// What the command was asked to print.
    public enum Shape: Sendable, Equatable {
        /// Every turn, or only turn `turn` (then printed in full); `full` prints every kept byte
        /// instead of previews, `http` reads the turns as HTTP/1.x or HTTP/2, `json` prints JSON.
        case shown(turn: Int?, full: Bool, http: Bool, json: Bool)
        /// Turn `turn`'s kept bytes exactly: to standard output, or to `file` (mode 0600) when given.
        case raw(turn: Int, file: String?)
    }

    /// The flow's id.
    public let flowID: Int64
    /// What to print.
    public let shape: Shape

    public init(flowID: Int64, shape: Shape) {
        self.flowID = flowID
        self.shape = shape
    }

    /// Writes the flow's turns to `output`: first a note for each damaged row of its turns, then the
    /// view `shape` names.
    /// - Throws: `ContentRefusal.noFlow` when nothing of the flow is there, `.noTurn` when the
    ///   turn asked for is not kept, `.unsafeForTerminal` for raw bytes a terminal would obey;
    ///   `FlowStoreError` when a store cannot be read; for a raw turn, `ContentError` when its
    ///   bytes cannot be read and `FileWriteError` when its file cannot be written.
    public func run(flows: FlowStore, content: ContentStore, to output: some CommandOutput) throws {
        let record = try flows.flow(id: flowID)
        let indexed = try content.turns(flow: flowID)
        let damaged = try content.damagedTurns(flow: flowID)
        for row in damaged { output.note("tv: " + row.sentence) }
        if record == nil && indexed.isEmpty && damaged.isEmpty { throw ContentRefusal.noFlow(flowID) }
        switch shape {
        case let .raw(number, file):
            try writeRaw(try pick(number, from: indexed), content: content, file: file, to: output)
        case let .shown(only, full, http, json):
            let chosen = try only.map { [try pick($0, from: indexed)] } ?? indexed
            let items = chosen.map { turn -> TurnsPresentation.Item in
                do {
                    return .init(turn: turn.turn, bytes: try content.bytes(of: turn))
                } catch let error as UserFacingError {
                    return .init(turn: turn.turn, bytes: nil, unreadable: error.message)
                } catch {
                    return .init(turn: turn.turn, bytes: nil, unreadable: "\(error)")
                }
            }
            let plain = TurnsPresentation(flowID: flowID, flow: record, items: items, full: full || only != nil, damagedRows: damaged.count)
            if http {
                writeHTTP(plain, json: json, to: output)
            } else if json {
                output.line(plain.json().serialized(pretty: true))
            } else {
                for line in plain.lines() { output.line(line) }
            }
        }
    }

    /// The indexed turn numbered `number`.
    /// - Throws: `ContentRefusal.noTurn` when there is none.
    func pick(_ number: Int, from indexed: [IndexedTurn]) throws(ContentRefusal) -> IndexedTurn {
        guard let turn = indexed.first(where: { $0.turn.number == number }) else {
            throw ContentRefusal.noTurn(flow: flowID, turn: number, last: indexed.last?.turn.number)
        }
        return turn
    }

    /// `--http`: the turns read as HTTP, bodies decoded one at a time within one budget for the
    /// command as they are written; the plain view when nothing is kept, and after the reason
    /// when the turns do not read as HTTP. With `json`, the document is handed over in pieces of
    /// at least 64 KiB (the last one shorter, with a newline).
    func writeHTTP(_ plain: TurnsPresentation, json: Bool, to output: some CommandOutput) {
        let recorded = plain.items.compactMap { item in item.bytes.map { RecordedTurn(turn: item.turn, bytes: $0) } }
        let http = HTTPPresentation(flowID: flowID, flow: plain.flow, result: HTTPReader.read(recorded), full: plain.full)
        let reader = BoundedBodyReader()
        if json {
            var text = ""
            http.writeJSON(reader: reader) { piece in
                text += piece
                if text.utf8.count >= 65_536 {
                    output.out(text)
                    text = ""
                }
            }
            output.line(text)
            return
        }
        if plain.items.isEmpty {
            for line in plain.lines() { output.line(line) }
            return
        }
        output.lines { line in http.write(reader: reader, line) }
        if http.result.notHTTPReason != nil {
            for line in plain.lines().dropFirst() { output.line(line) }
        }
    }

    /// `--turn N --raw`: the turn's kept bytes to `file` (then a note saying so), or to standard
    /// output when it is not a terminal or the bytes cannot drive one (then a note when the turn
    /// was cut or lost bytes).
    func writeRaw(_ turn: IndexedTurn, content: ContentStore, file: String?, to output: some CommandOutput) throws {
        let bytes = try content.bytes(of: turn)
        let figures = TurnsPresentation.figures(turn.turn)
        if let file {
            try FileModes.writeAtomically(bytes, to: file, mode: 0o600)
            output.note("Wrote turn \(turn.turn.number) of flow \(turn.flowID) to \(file) (\(figures)).")
            return
        }
        if output.stdoutIsTerminal && !TurnsReading.isTerminalSafe(bytes) {
            throw ContentRefusal.unsafeForTerminal(turn: turn.turn.number)
        }
        output.bytes(bytes)
        if turn.turn.truncated || turn.turn.incomplete || turn.turn.bodiesShortened {
            output.note("tv: this is what was kept of turn \(turn.turn.number): \(figures).")
        }
    }

    /// Whether `bytes` can go to a terminal as they are: text (`PrintableText`, so no bidi
    /// controls) whose only controls are CR and LF of HTTP lines, and tabs.
    static func isTerminalSafe(_ bytes: [UInt8]) -> Bool {
        PrintableText.text(bytes).map { text in
            !text.unicodeScalars.contains { TerminalText.isEscaped($0) && $0 != "\n" && $0 != "\r" && $0 != "\t" }
        } ?? false
    }
}
