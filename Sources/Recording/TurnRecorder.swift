import FlowTerms

/// Chunks → turns under a byte budget, as a pure value (no I/O, no clock).
///
/// Feed it every chunk of one flow in the order they were read, from both legs, with `take`:
/// it answers how many bytes of the chunk to keep, which turn they belong to, and — on a change
/// of side — the final figures of the turn that just ended. `finish` ends the last turn.
///
/// Rules (DESIGN.md §5, issue 5):
/// - A turn is a maximal run of consecutive chunks in one direction; the only boundary is the
///   change of side.
/// - A turn keeps at most `budget.turnLimit` bytes (on an HTTP/2 connection each stream's body
///   does instead, `HTTP2BodyLimit`, and the turn is not limited); a direction keeps at most
///   `budget.flowBudget` bytes over the whole flow. The budget cuts before writing: a chunk that
///   would cross a limit is cut to fit, written, and marked, and the rest of its turn is not
///   recorded — so the truncated chunk is the last one written of that turn. The turn limit
///   cuts only its turn: the side's next turn is recorded again (a keep-alive connection's
///   responses after one past 64 KiB were all lost: trial 42). The flow budget, once spent,
///   stops its side for the rest of the flow.
/// - The turn that was cut goes on counting `seenBytes` until its side changes, so both figures
///   are exact. Later runs of a stopped side are not recorded and get no number; they still end
///   the other side's turns.
/// - Empty chunks are ignored.
public struct TurnRecorder: Sendable, Equatable {
    /// The budget this recorder applies.
    public let budget: RecordingBudget

    /// The run in progress; `number` is nil when its side is no longer recorded.
    private struct Run: Sendable, Equatable {
        var number: Int?
        var direction: Direction
        var startOffset: Int64
        /// Bytes the budget kept (what the limits count).
        var kept = 0
        /// Of those, bytes that did not reach the store (`dropped`).
        var dropped = 0
        var seen = 0
        var cutBy: BudgetLimit?
        var incomplete = false
    }

    /// One value per side, inline (two arrays here cost a bounds and a uniqueness check per
    /// chunk on the loop: `take` 180 → 153 instructions a chunk with these, callgrind h1 row,
    /// i27-rec).
    private struct Sides<Value: Sendable & Equatable>: Sendable, Equatable {
        var clientToServer: Value
        var serverToClient: Value

        subscript(_ direction: Direction) -> Value {
            get { direction == .clientToServer ? clientToServer : serverToClient }
            set {
                if direction == .clientToServer { clientToServer = newValue } else { serverToClient = newValue }
            }
        }
    }

    private var run: Run?
    private var keptPerSide = Sides(clientToServer: 0, serverToClient: 0)
    private var stoppedBy = Sides<BudgetLimit?>(clientToServer: nil, serverToClient: nil)
    private var numbered = 0

    public init(budget: RecordingBudget = RecordingBudget()) {
        self.budget = budget
    }

    /// Takes one chunk of `count` bytes read from `direction` at `offset` (µs since the flow's
    /// first byte) and decides what of it is kept.
    /// - Parameter offered: on an HTTP/2 connection, the bytes of the chunk that `HTTP2BodyLimit`
    ///   leaves to keep (its bodies are limited instead of its turns): the verdict's `keep` is
    ///   then a prefix of those, under the flow budget alone. Nil: the chunk's own bytes, under
    ///   both limits.
    public mutating func take(_ direction: Direction, at offset: Int64, count: Int, offered: Int? = nil) -> ChunkVerdict {
        guard count > 0 else { return ChunkVerdict(turn: nil, keep: 0) }
        var ended: Turn?
        if let current = run, current.direction != direction {
            ended = finish()
        }
        if run == nil {
            var number: Int?
            if stoppedBy[direction] == nil {
                numbered += 1
                number = numbered
            }
            run = Run(number: number, direction: direction, startOffset: offset)
        }
        run!.seen += count
        guard let number = run!.number, run!.cutBy == nil else {
            return ChunkVerdict(turn: run!.number, keep: 0, ended: ended)
        }
        let wanted = offered ?? count
        let turnRoom = offered == nil ? budget.turnLimit - run!.kept : Int.max
        let flowRoom = budget.flowBudget - keptPerSide[direction]
        if wanted <= min(turnRoom, flowRoom) {
            run!.kept += wanted
            keptPerSide[direction] += wanted
            return ChunkVerdict(turn: number, keep: wanted, ended: ended)
        }
        let keep = max(0, min(turnRoom, flowRoom))
        let limit: BudgetLimit = flowRoom <= turnRoom ? .flowBudget : .turnLimit
        run!.kept += keep
        run!.cutBy = limit
        keptPerSide[direction] += keep
        // The turn limit cuts its turn only: the side's next turn (HTTP/1's next request or
        // response) is kept again. A flow budget spent stops the side.
        if limit == .flowBudget { stoppedBy[direction] = limit }
        return ChunkVerdict(turn: number, keep: keep, cut: true, ended: ended)
    }

    /// Marks the open turn incomplete: bytes `take` said to keep did not reach the store (the
    /// recording queue was full, or recording was switched off before the turn ended).
    public mutating func markIncomplete() {
        if run?.number != nil { run!.incomplete = true }
    }

    /// The `count` bytes `take` just said to keep of the open turn did not reach the store (the
    /// recording queue was full): the turn is incomplete and its kept figure leaves them out, so
    /// it is the number of bytes the store holds. The budget still counts them (what is kept
    /// later does not depend on the queue).
    public mutating func dropped(_ count: Int) {
        guard run?.number != nil else { return }
        run!.dropped += count
        run!.incomplete = true
    }

    /// Ends the open run (the flow closed, or recording stopped).
    /// - Returns: the final figures of the open turn, or nil when none was open or its side was
    ///   not recorded.
    public mutating func finish() -> Turn? {
        defer { run = nil }
        return openTurn
    }

    /// The figures of the open turn so far, or nil when no recorded turn is open.
    public var openTurn: Turn? {
        guard let run, let number = run.number else { return nil }
        return Turn(number: number, direction: run.direction, startOffset: run.startOffset,
                    keptBytes: run.kept - run.dropped, seenBytes: run.seen, cutBy: run.cutBy, incomplete: run.incomplete)
    }

    /// The limit that stopped `direction`, or nil while it is still recorded.
    public func stopped(_ direction: Direction) -> BudgetLimit? {
        stoppedBy[direction]
    }

    /// Bytes kept so far for `direction`, over all its turns.
    public func kept(_ direction: Direction) -> Int {
        keptPerSide[direction]
    }

    /// True when nothing more will be recorded: both sides are stopped and no recorded turn is
    /// still counting its seen bytes.
    public var isDone: Bool {
        stoppedBy.clientToServer != nil && stoppedBy.serverToClient != nil && openTurn == nil
    }

    /// The turns `chunks` make under `budget`, with the bytes kept of each
    /// (`RecordingCut.turns(from:budget:)`: HTTP/2's body limit included, as the live path keeps them).
    public static func turns(from chunks: [Chunk], budget: RecordingBudget = RecordingBudget()) -> [RecordedTurn] {
        RecordingCut.turns(from: chunks, budget: budget)
    }
}
