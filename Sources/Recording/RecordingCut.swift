import FlowTerms
import Wire

/// What of each chunk of one flow is kept: the turn rules (`TurnRecorder`), and, once the
/// client's first bytes open HTTP/2 (`HTTP2FrameScanner.opensWithPreface`, RFC 9113 §3.4), the
/// per-stream body limit (`HTTP2BodyLimit`, at the budget's turn limit) in place of the turn
/// limit. Pure; one per flow, fed every chunk of it in order.
///
/// The server's bytes before the client's first (an HTTP/2 server's SETTINGS may arrive first)
/// are kept under the turn rules and walked by the body limit meanwhile, so its frames stay in
/// step if the client then opens HTTP/2 (no DATA can come before a request opens a stream).
/// A flow whose recording starts after its first bytes (content switched on mid-connection)
/// is kept under the turn rules: its frames cannot be found.
public struct RecordingCut: Sendable {
    /// The turns so far, and the budget they are kept under.
    public internal(set) var turns: TurnRecorder
    /// HTTP/2's limit while the connection is or may be HTTP/2; nil once it is known not to be.
    private var bodyLimit: HTTP2BodyLimit?
    /// The client's first bytes were seen (HTTP/2 or not is known).
    private var decided = false
    /// The rewritten bytes of the last chunk the body limit changed (reused).
    private var rewritten: [UInt8] = []

    public init(budget: RecordingBudget = RecordingBudget()) {
        turns = TurnRecorder(budget: budget)
        bodyLimit = HTTP2BodyLimit(limit: budget.turnLimit)
    }

    /// Whether the flow is read as HTTP/2 (its bodies limited, its turns not).
    public var limitsBodies: Bool { decided && bodyLimit != nil }

    /// Takes one chunk of `bytes` read from `direction` at `offset` (µs since the flow's first
    /// byte). When it ends a turn or keeps bytes, `write` gets the turn it ended (final figures),
    /// the open turn the kept bytes belong to (nil when none are kept), and the kept bytes
    /// (valid during the call only); `write` answers false when they did not reach the store,
    /// and the turn is marked incomplete.
    /// - Returns: `TurnRecorder.isDone` after the chunk.
    public mutating func take(_ direction: Direction, at offset: Int64, _ bytes: UnsafeRawBufferPointer,
                              write: (_ ended: Turn?, _ open: Turn?, _ kept: UnsafeRawBufferPointer) -> Bool) -> Bool {
        var offered: Int?
        var changed = false
        if !decided {
            if direction == .clientToServer {
                decided = true
                if !HTTP2FrameScanner.opensWithPreface(bytes) { bodyLimit = nil }
            } else if bodyLimit != nil {
                // Walked only, to stay in step; nothing is left out before HTTP/2 is known.
                _ = bodyLimit!.cut(bytes, direction, into: &rewritten)
            }
        }
        if decided, bodyLimit != nil {
            changed = bodyLimit!.cut(bytes, direction, into: &rewritten)
            offered = changed ? rewritten.count : bytes.count
        }
        let verdict = turns.take(direction, at: offset, count: bytes.count, offered: offered)
        let open = verdict.keep > 0 ? turns.openTurn : nil
        guard verdict.ended != nil || open != nil else { return turns.isDone }
        let keep = open == nil ? 0 : verdict.keep
        let reached = changed
            ? rewritten.withUnsafeBytes { write(verdict.ended, open, UnsafeRawBufferPointer(rebasing: $0[..<keep])) }
            : write(verdict.ended, open, UnsafeRawBufferPointer(rebasing: bytes[..<keep]))
        if !reached { turns.dropped(keep) }
        return turns.isDone
    }

    /// The turns `chunks` make under `budget`, with the bytes kept of each: what the live path
    /// writes, computed in one go (tests, fixtures, and reading a chunk capture).
    public static func turns(from chunks: [Chunk], budget: RecordingBudget = RecordingBudget()) -> [RecordedTurn] {
        var cut = RecordingCut(budget: budget)
        var done: [RecordedTurn] = []
        var bytes: [UInt8] = []
        for chunk in chunks {
            _ = chunk.bytes.withUnsafeBytes { raw in
                cut.take(chunk.direction, at: chunk.offset, raw) { ended, _, kept in
                    if let ended {
                        done.append(RecordedTurn(turn: ended, bytes: bytes))
                        bytes = []
                    }
                    bytes += kept
                    return true
                }
            }
        }
        if let last = cut.turns.finish() { done.append(RecordedTurn(turn: last, bytes: bytes)) }
        return done
    }
}
