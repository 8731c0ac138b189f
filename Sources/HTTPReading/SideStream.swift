import Recording
import FlowTerms

/// One direction of a flow as one byte stream: its turns' kept bytes joined in order, with where
/// each turn starts, and how the stream ends.
///
/// A turn that lost bytes while recording (`incomplete`) has a hole somewhere inside, so the
/// stream stops before it (`end = .gap`). A turn the flow budget cut is a true prefix of what was
/// said, so the stream keeps it and ends there (`end = .cut`). A turn the turn limit cut is a
/// true prefix too, and the side's next turn was recorded again: the stream goes on, in
/// segments (`segment(at:)`), a reader resuming at the next one's start.
struct SideStream {
    enum End: Equatable {
        /// Every byte of every turn of this side is here.
        case complete
        /// The budget cut this side in `turn`.
        case cut(turn: Int)
        /// `turn` lost bytes while recording; nothing from it on is in the stream.
        case gap(turn: Int)
    }

    /// Where a turn the turn limit cut ends in `bytes`, and its number.
    struct TurnCut: Equatable {
        var end: Int
        var turn: Int
    }

    /// A run of bytes said without a break: up to `end`, where a turn was cut (`cut`) or the
    /// stream ends (nil).
    struct Segment: Equatable {
        var end: Int
        var cut: TurnCut?
    }

    struct Mark {
        var start: Int
        var turn: Int
        var offset: Int64
    }

    let direction: Direction
    private(set) var bytes: [UInt8] = []
    private(set) var marks: [Mark] = []
    private(set) var end: End = .complete
    /// The turns the turn limit cut, in order.
    private(set) var turnCuts: [TurnCut] = []

    init(direction: Direction) { self.direction = direction }

    /// The stream of `direction` in `turns`.
    init(_ turns: [RecordedTurn], direction: Direction) {
        self.direction = direction
        for turn in turns where turn.turn.direction == direction {
            guard append(turn) else { break }
        }
    }

    /// Appends one turn of this side. - Returns: false when the stream has ended (gap or cut) and
    /// takes nothing more.
    @discardableResult
    mutating func append(_ turn: RecordedTurn) -> Bool {
        guard end == .complete else { return false }
        if turn.turn.incomplete {
            end = .gap(turn: turn.turn.number)
            return false
        }
        marks.append(Mark(start: bytes.count, turn: turn.turn.number, offset: turn.turn.startOffset))
        bytes += turn.bytes
        switch turn.turn.cutBy {
        case .flowBudget?: end = .cut(turn: turn.turn.number)
        case .turnLimit?: turnCuts.append(TurnCut(end: bytes.count, turn: turn.turn.number))
        case nil: break
        }
        return true
    }

    /// The segment holding byte `position`: bytes from there on are one run of what was said
    /// up to its `end`.
    func segment(at position: Int) -> Segment {
        guard let cut = turnCuts.first(where: { $0.end > position }) else { return Segment(end: bytes.count, cut: nil) }
        return Segment(end: cut.end, cut: cut)
    }

    /// How a body that ran out of bytes at the end of `segment` is incomplete.
    func shortfall(kept: Int, expected: Int?, in segment: Segment) -> BodyCompleteness {
        segment.cut == nil ? shortfall(kept: kept, expected: expected) : .cutByBudget(kept: kept, expected: expected)
    }

    /// The turn holding byte `position` (the last turn when past the end) and its start offset.
    func turn(at position: Int) -> (turn: Int, offset: Int64) {
        guard let first = marks.first else { return (0, 0) }
        // The last mark starting at or before `position` (binary search: marks are sorted).
        var low = 0
        var high = marks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if marks[middle].start <= position { low = middle } else { high = middle - 1 }
        }
        let mark = marks[low].start <= position ? marks[low] : first
        return (mark.turn, mark.offset)
    }

    /// The number of the last turn in the stream, or of the gap/cut turn.
    var lastTurn: Int {
        switch end {
        case .complete: return marks.last?.turn ?? 0
        case let .cut(turn), let .gap(turn): return turn
        }
    }

    /// How a body that ran out of bytes here is incomplete.
    func shortfall(kept: Int, expected: Int?) -> BodyCompleteness {
        switch end {
        case .cut: return .cutByBudget(kept: kept, expected: expected)
        case .gap: return .missingBytes(kept: kept)
        case .complete: return .endedEarly(kept: kept, expected: expected)
        }
    }

    /// A sentence for a message this side could not finish, or nil when it simply ended.
    func endReason(_ what: String) -> String? {
        switch end {
        case let .cut(turn):
            return "\(what) is cut: the recording budget stopped this side in turn \(turn)."
        case let .gap(turn):
            return "\(what) cannot be read on: turn \(turn) lost bytes while recording (the recording queue was full)."
        case .complete:
            return nil
        }
    }
}
