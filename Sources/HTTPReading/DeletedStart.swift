import FlowTerms
import Recording

/// What is kept of a flow begins after its connection did: its first turns were kept and then
/// deleted while the connection stayed open (`tv content delete`, or their expiry), and when
/// `firstTurnCut`, so was what the first turn kept now held at the deletion (it was going on:
/// what is kept of it came after, `Turn.startDeleted`). Turn numbers are the flow's own from its
/// first byte and a recording budget only ever stops later turns, so a first kept turn past 1 is
/// the sign. Every sentence about it is rendered here. Pure.
public struct DeletedStart: Sendable, Equatable {
    /// The first turn kept now.
    public var firstKeptTurn: Int
    /// When it started, µs since the flow's first byte: what was said before it is gone.
    public var firstKeptOffset: Int64
    /// The first kept turn's own start went too (it was going on at `tv content delete`).
    public var firstTurnCut: Bool

    public init(firstKeptTurn: Int, firstKeptOffset: Int64, firstTurnCut: Bool = false) {
        self.firstKeptTurn = firstKeptTurn
        self.firstKeptOffset = firstKeptOffset
        self.firstTurnCut = firstTurnCut
    }

    /// The deleted start of the flow whose kept turns are `turns` (in number order); nil when
    /// they begin with its first turn, whole (or there are none).
    public init?(_ turns: [Turn]) {
        guard let first = turns.min(by: { $0.number < $1.number }), first.number > 1 || first.startDeleted else { return nil }
        self.init(firstKeptTurn: first.number, firstKeptOffset: first.startOffset, firstTurnCut: first.startDeleted)
    }

    /// Whether `row` was made before what is kept of its flow begins, so its bytes went with the
    /// deleted start (`ExchangeRowMatch` says why the times compare exactly). A request whose
    /// turn was still going on at the deletion (`firstTurnCut`) reads as made after: when the
    /// deletion came is not kept.
    public func precedes(_ row: ExchangeRecord, flowStart: Int64) -> Bool {
        row.requestTime < flowStart + firstKeptOffset
    }

    /// What went, as a clause: "the start of this connection's kept content was deleted (turns
    /// 1–4, by `tv content delete` or as it expired)". A cut turn proves `tv content delete`
    /// (expiry takes whole turns).
    public var clause: String {
        let before = firstKeptTurn - 1
        let turns = before == 0 ? "" : before == 1 ? "turn 1" : "turns 1–\(before)"
        let what: String
        if firstTurnCut {
            let cut = "the beginning of turn \(firstKeptTurn)"
            what = (turns.isEmpty ? cut : turns + " and " + cut) + ", by `tv content delete` while the connection was open"
        } else {
            what = turns + ", by `tv content delete` while the connection was open, or as it expired"
        }
        return "the start of this connection's kept content was deleted (\(what))"
    }

    /// Why the kept turns are not read as HTTP, one sentence: HTTP/2 (`http2`) cannot be read from
    /// the middle, its header compression state (RFC 7541 §2.3.2) having gone with the start.
    public func unreadable(http2: Bool) -> String {
        let clause = self.clause
        let head = clause.prefix(1).uppercased() + clause.dropFirst()
        return head + (http2
            ? ", so its HTTP/2 cannot be read from the middle: header compression state is lost with it."
            : ", and what is left does not start with a request, so it cannot be read as HTTP from the middle.")
    }

    /// The note of a conversation read from turn `turn`, the first request kept whole after the
    /// deleted start.
    public func readingStarts(at turn: Int) -> String {
        let clause = self.clause
        let head = clause.prefix(1).uppercased() + clause.dropFirst()
        return head + "; reading as HTTP starts at turn \(turn), the first request kept whole."
    }
}
