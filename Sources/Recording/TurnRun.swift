import FlowStore
import FlowTerms

/// One row of the turns index (`content_turn_runs`, FlowSchema migration 19): the turns of one
/// flow that one batch wrote to one segment, packed into `turns` (`TurnRunText`). A batch of
/// small requests writes one row per flow, not one per turn.
struct TurnRun: Equatable {
    /// The flow's id.
    var flowID: Int64
    /// The lowest turn number in the run (the row's key with `flowID`).
    var firstTurn: Int
    /// The segment holding every turn's bytes.
    var segment: Int
    /// When the run was written, µs since the epoch (expiry counts from here).
    var recordedAt: Int64
    /// Turns in `turns`.
    var turnCount: Int
    /// Their kept bytes, summed.
    var keptBytes: Int64
    /// The packed turns, ASCII (`TurnRunText`).
    var turns: [UInt8]

    /// The runs `rows` make, one per (flow, segment, recorded_at), in the order each first
    /// appears; within a run the turns keep their order. Pure.
    static func runs(_ rows: [IndexedTurn]) -> [TurnRun] {
        var runs: [TurnRun] = []
        var runOf: [Int64: Int] = [:]
        runOf.reserveCapacity(rows.count)
        for row in rows {
            let index: Int
            // The last run first: a flow's turns mostly follow one another in a batch, and the
            // table's hash then costs nothing.
            let last = runs.count - 1
            let found = last >= 0 && runs[last].flowID == row.flowID ? last : runOf[row.flowID]
            if let found, runs[found].segment == row.segment, runs[found].recordedAt == row.recordedAt {
                index = found
                runs[index].firstTurn = min(runs[index].firstTurn, row.turn.number)
                runs[index].turns.append(TurnRunText.turnSeparator)
            } else {
                index = runs.count
                runOf[row.flowID] = index
                runs.append(TurnRun(flowID: row.flowID, firstTurn: row.turn.number, segment: row.segment,
                                    recordedAt: row.recordedAt, turnCount: 0, keptBytes: 0, turns: []))
                runs[index].turns.reserveCapacity(40)
            }
            runs[index].turnCount += 1
            runs[index].keptBytes += Int64(row.turn.keptBytes)
            TurnRunText.append(row, to: &runs[index].turns)
        }
        return runs
    }
}

/// The text of `content_turn_runs.turns`: each turn as
/// `turn,direction,start_offset,kept_bytes,seen_bytes,truncated,cut_by,incomplete,segment_offset`
/// — the columns of the old per-turn rows, decimal; direction `c` (client_to_server) or `s`
/// (server_to_client); cut_by empty (none), `t` (turn_limit) or `f` (flow_budget); incomplete
/// `0`, `1` (bytes lost while recording), `2` (`Turn.startDeleted`: its start was deleted while
/// it went on) or `3` (both) — turns separated by `;`. Text rather than binary so that FlowSchema's SQL migration can write it from
/// the old rows. Pure.
enum TurnRunText {
    static let turnSeparator = UInt8(ascii: ";")
    static let fieldSeparator = UInt8(ascii: ",")
    /// Fields per turn.
    static let fieldCount = 9

    /// The longest text of one turn: five decimal fields of at most 20 bytes (`-` and 19
    /// digits), four one-byte fields and eight separators.
    static let longestTurn = 5 * 20 + 4 + 8

    /// Appends `row`'s turn (no separator before it): formatted backward, from its last field,
    /// into a buffer on the stack (a number written from its last digit needs no digit count
    /// first) and appended in one copy (an append per byte cost ~1,000 instructions a turn;
    /// counting the digits first, then writing them forward, 612; backward, 344 with the copy;
    /// callgrind, `Scripts/bench-callgrind` h1 row, i27-rec).
    static func append(_ row: IndexedTurn, to text: inout [UInt8]) {
        let turn = row.turn
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longestTurn) { buffer in
            let end = buffer.baseAddress! + longestTurn
            var at = decimal(row.segmentOffset, endingAt: end)
            at -= 3
            at[0] = fieldSeparator
            at[1] = UInt8(ascii: "0") + (turn.incomplete ? 1 : 0) + (turn.startDeleted ? 2 : 0)
            at[2] = fieldSeparator
            switch turn.cutBy {
            case nil: break
            case .turnLimit?: at -= 1; at[0] = UInt8(ascii: "t")
            case .flowBudget?: at -= 1; at[0] = UInt8(ascii: "f")
            }
            at -= 3
            at[0] = fieldSeparator
            at[1] = turn.truncated ? UInt8(ascii: "1") : UInt8(ascii: "0")
            at[2] = fieldSeparator
            at = decimal(Int64(turn.seenBytes), endingAt: at) - 1
            at[0] = fieldSeparator
            at = decimal(Int64(turn.keptBytes), endingAt: at) - 1
            at[0] = fieldSeparator
            at = decimal(turn.startOffset, endingAt: at) - 3
            at[0] = fieldSeparator
            at[1] = turn.direction == .clientToServer ? UInt8(ascii: "c") : UInt8(ascii: "s")
            at[2] = fieldSeparator
            at = decimal(Int64(turn.number), endingAt: at)
            text.append(contentsOf: UnsafeBufferPointer(start: at, count: end - at))
        }
    }

    /// Appends `value` in decimal ASCII.
    static func decimal(_ value: Int64, to text: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            let end = buffer.baseAddress! + 20
            let start = decimal(value, endingAt: end)
            text.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// "00", "01" … "99": two digits a step.
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Writes `value` in decimal ASCII so that it ends just before `end` (room for 20 bytes
    /// before it: `-` and 19 digits).
    /// - Returns: where the text starts.
    ///
    /// From the last digit back, two at a time from `digitPairs`: one division by 100 per two
    /// digits, and no count of the digits first (counting by comparison cost ~40 instructions a
    /// 10-digit number; by tens, two divisions per digit, 558 a turn, i25-rec).
    @inline(__always)
    static func decimal(_ value: Int64, endingAt end: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var at = end
        var rest = value.magnitude
        let pairs = digitPairs.utf8Start
        while rest >= 100 {
            let pair = Int(truncatingIfNeeded: rest % 100) &* 2
            rest /= 100
            at -= 2
            at[0] = pairs[pair]
            at[1] = pairs[pair + 1]
        }
        if rest >= 10 {
            let pair = Int(truncatingIfNeeded: rest) &* 2
            at -= 2
            at[0] = pairs[pair]
            at[1] = pairs[pair + 1]
        } else {
            at -= 1
            at[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        if value < 0 {
            at -= 1
            at[0] = UInt8(ascii: "-")
        }
        return at
    }

    /// The turns of one row, each checked as the old per-turn rows were (`TurnIndex.row`): a
    /// turn holding a value no writer writes, or text that is not nine fields, is a `DamagedRow`.
    /// - Parameters:
    ///   - flow: the row's `flow_id`.
    ///   - segment, recordedAt: the row's columns as stored (checked for every turn).
    ///   - text: the row's `turns`.
    static func turns(flow: Int64, segment: SQLiteValue, recordedAt: SQLiteValue,
                      text: String) -> [Result<IndexedTurn, DamagedRow>] {
        var results: [Result<IndexedTurn, DamagedRow>] = []
        for record in text.utf8.split(separator: turnSeparator, omittingEmptySubsequences: false) {
            let fields = record.split(separator: fieldSeparator, omittingEmptySubsequences: false)
            guard fields.count == fieldCount else {
                let shown = String(decoding: record, as: UTF8.self)
                results.append(.failure(DamagedRow(row: "a turn of flow \(flow)", column: "turns", value: .text(shown))))
                continue
            }
            let direction: SQLiteValue = switch String(decoding: fields[1], as: UTF8.self) {
            case "c": .text(Direction.clientToServer.rawValue)
            case "s": .text(Direction.serverToClient.rawValue)
            case let other: .text(other)
            }
            let cutBy: SQLiteValue = switch String(decoding: fields[6], as: UTF8.self) {
            case "": .null
            case "t": .text(BudgetLimit.turnLimit.rawValue)
            case "f": .text(BudgetLimit.flowBudget.rawValue)
            case let other: .text(other)
            }
            // In `TurnIndex.names` order.
            let values: [SQLiteValue] = [.integer(flow), value(fields[0]), direction, value(fields[2]), value(fields[3]),
                                         value(fields[4]), value(fields[5]), cutBy, value(fields[7]), segment,
                                         value(fields[8]), recordedAt]
            do throws(DamagedRow) {
                results.append(.success(try TurnIndex.row(values)))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// A field as the column value it stands for: a decimal integer (optionally negative) that
    /// fits 64 bits as an integer, anything else as text.
    static func value(_ field: Substring.UTF8View) -> SQLiteValue {
        let text = String(decoding: field, as: UTF8.self)
        if let number = Int64(text), text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return .integer(number)
        }
        return .text(text)
    }
}
