import FlowStore
import Foundation
import HTTPReading
import Recording
import TVHome

/// How `tv turns FLOW` shows what was said inside one connection: one block per turn, in order.
///
/// A block's header line carries the turn number, the direction (arrow and words), how far into
/// the connection it began (seconds, ms resolution), and the figures: the kept size alone when
/// nothing was cut, both exact figures when something was. Under it the body — text or a hex
/// dump, capped unless `full`. After a cut turn, one line says that side stopped being recorded;
/// no per-connection total is given, because the only one derivable is a lower bound.
public struct TurnsPresentation: Sendable {
    /// One turn and its bytes, or why its bytes cannot be shown.
    public struct Item: Sendable, Equatable {
        public var turn: Turn
        /// The kept bytes; nil when they could not be read (see `unreadable`).
        public var bytes: [UInt8]?
        /// Why the bytes cannot be shown (e.g. their segment was deleted).
        public var unreadable: String?

        public init(turn: Turn, bytes: [UInt8]?, unreadable: String? = nil) {
            self.turn = turn
            self.bytes = bytes
            self.unreadable = unreadable
        }
    }

    public let flowID: Int64
    public let flow: FlowRecord?
    public let items: [Item]
    public let full: Bool
    /// Rows of the flow's turns left out as damaged (`ContentStore.damagedTurns`).
    public let damagedRows: Int

    /// - Parameters:
    ///   - flow: the flow's row, when there is one (turns can outlive it, and the reverse).
    ///   - items: the flow's turns by number.
    ///   - full: print every kept byte instead of previews.
    ///   - damagedRows: how many of its turns' index rows were left out as damaged.
    public init(flowID: Int64, flow: FlowRecord?, items: [Item], full: Bool = false, damagedRows: Int = 0) {
        self.flowID = flowID
        self.flow = flow
        self.items = items
        self.full = full
        self.damagedRows = damagedRows
    }

    /// Why there is nothing, when there is nothing (nil when there are turns).
    public var absence: ContentAbsence? {
        guard items.isEmpty else { return nil }
        // Turns were kept, but none of their rows can be trusted: not "nothing was kept".
        if damagedRows > 0 { return .damagedIndex }
        return flow.map(ContentAbsence.init(flow:)) ?? .nothingKept
    }

    /// The lines to print.
    public func lines() -> [String] {
        var out = [TurnsPresentation.title(flowID: flowID, flow: flow)]
        if let absence {
            out.append(absence.sentence(flowID: flowID))
            return out
        }
        for item in items {
            out.append("")
            out += block(item)
        }
        return out
    }

    /// `Flow 7: a.test` (the name escaped by `TerminalText.line`).
    static func title(flowID: Int64, flow: FlowRecord?) -> String {
        "Flow \(flowID)" + (flow.map { ": " + TerminalText.line($0.host ?? $0.serverAddress) } ?? "")
    }

    /// The header line and body of one turn.
    func block(_ item: Item) -> [String] {
        let turn = item.turn
        var out = ["Turn \(turn.number)  \(DirectionWords.label(turn.direction))  at \(Units.offsetSeconds(turn.startOffset))  "
                   + TurnsPresentation.figures(turn)]
        if let bytes = item.bytes {
            if bytes.isEmpty {
                out.append("  (no bytes of this turn were kept)")
            } else {
                out += BytePreview.lines(bytes, full: full)
            }
        } else {
            out.append("  " + TerminalText.line(item.unreadable ?? "The bytes of this turn cannot be read."))
        }
        if turn.startDeleted {
            out.append("  Start deleted: this turn was going on when the connection's kept content was deleted (`tv content delete`); what it held then went with it, and the bytes kept are those that came after.")
        }
        if turn.incomplete {
            out.append("  Incomplete: bytes of this turn were lost while recording (the recording queue was full, or keeping content was switched off before the turn ended).")
        }
        if turn.bodiesShortened {
            out.append("  HTTP/2 bodies past 64 KiB were left out of this turn: each stream keeps at most 64 KiB of body a direction, the rest of the connection is kept (the DATA frames that lost bytes say how many they kept).")
        }
        if let limit = turn.cutBy {
            let side = DirectionWords.words(turn.direction).replacingOccurrences(of: " ", with: "-")
            if turn.stopsSide {
                out.append("⋯ The \(side) side stopped being recorded after this turn: \(TurnsPresentation.limitWords(limit)).")
            } else {
                out.append("⋯ The rest of this turn was not kept: \(TurnsPresentation.limitWords(limit)); the \(side) side's next turn is kept again.")
            }
        }
        return out
    }

    /// `78 bytes`, or both figures when the turn was cut or lost bytes: `65,536 of 1,048,776 bytes kept`.
    public static func figures(_ turn: Turn) -> String {
        if turn.keptBytes == turn.seenBytes && !turn.truncated {
            return "\(Units.grouped(Int64(turn.keptBytes))) byte\(turn.keptBytes == 1 ? "" : "s")"
        }
        return "\(Units.grouped(Int64(turn.keptBytes))) of \(Units.grouped(Int64(turn.seenBytes))) bytes kept"
    }

    /// Why a side stopped, in words.
    static func limitWords(_ limit: BudgetLimit) -> String {
        switch limit {
        case .turnLimit: return "a turn keeps at most 64 KiB"
        case .flowBudget: return "this connection's budget per direction (content.flowBudget) was used up"
        }
    }

    /// The turns as JSON for `--json`: every kept byte, as UTF-8 text when printable, else base64.
    public func json() -> JSONValue {
        var fields: [(String, JSONValue)] = [("flow", .int(flowID)), ("status", flow.map { .string($0.status.rawValue) } ?? .null)]
        fields.append(("turns", .array(items.map { item in
            var turn: [(String, JSONValue)] = [
                ("number", .int(Int64(item.turn.number))), ("direction", .string(item.turn.direction.rawValue)),
                ("startOffset", .int(item.turn.startOffset)), ("keptBytes", .int(Int64(item.turn.keptBytes))),
                ("seenBytes", .int(Int64(item.turn.seenBytes))), ("truncated", .bool(item.turn.truncated)),
                ("cutBy", item.turn.cutBy.map { .string($0.rawValue) } ?? .null), ("incomplete", .bool(item.turn.incomplete)),
                ("startDeleted", .bool(item.turn.startDeleted)), ("bodiesShortened", .bool(item.turn.bodiesShortened)),
            ]
            if let bytes = item.bytes {
                if let text = PrintableText.text(bytes), text.utf8.count == bytes.count {
                    turn.append(("text", .string(text)))
                } else {
                    turn.append(("base64", .string(Data(bytes).base64EncodedString())))
                }
            } else {
                turn.append(("unreadable", .string(item.unreadable ?? "")))
            }
            return .object(turn)
        })))
        if let absence {
            fields.append(("absence", .object([("reason", .string(absence.code)), ("sentence", .string(absence.sentence(flowID: flowID)))])))
        } else {
            fields.append(("absence", .null))
        }
        return .object(fields)
    }
}
