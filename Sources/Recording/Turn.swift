import FlowTerms

/// One turn of a flow: a maximal run of consecutive chunks in one direction, as recorded.
///
/// Only change of side ends a turn (no time-gap splitting). The two figures are exact:
/// `seenBytes` counts every byte of the run, including those after a cut; `keptBytes` counts what
/// was written. No per-flow total exists beyond the sum of what the turns say.
public struct Turn: Sendable, Equatable {
    /// 1-based number among the flow's recorded turns, in the order they started.
    public var number: Int
    /// Which way the bytes went.
    public var direction: Direction
    /// When the turn's first chunk was read: µs since the flow's first byte.
    public var startOffset: Int64
    /// Bytes written to the content store.
    public var keptBytes: Int
    /// Bytes the run carried on the wire (plaintext), kept or not.
    public var seenBytes: Int
    /// The limit that cut this turn, if any: the rest of the turn was not kept. A turn the flow
    /// budget cut is the last one recorded on its side; after the turn limit's, the side's
    /// next turn is recorded again.
    public var cutBy: BudgetLimit?
    /// True when bytes meant to be kept were lost (the recording queue was full, or the content
    /// switch went off before the turn ended); `keptBytes` is then what actually reached disk.
    public var incomplete: Bool
    /// True when the turn was going on as its flow's content was deleted (`tv content delete`):
    /// what it held so far went with the rest, and `keptBytes` are the bytes that came after
    /// (from a chunk's start). Only a flow's first kept turn can be one. Not a loss of the
    /// recording's (`incomplete` says those), so its sentence is its own.
    public var startDeleted: Bool

    public init(number: Int, direction: Direction, startOffset: Int64, keptBytes: Int, seenBytes: Int,
                cutBy: BudgetLimit? = nil, incomplete: Bool = false, startDeleted: Bool = false) {
        self.number = number
        self.direction = direction
        self.startOffset = startOffset
        self.keptBytes = keptBytes
        self.seenBytes = seenBytes
        self.cutBy = cutBy
        self.incomplete = incomplete
        self.startDeleted = startDeleted
    }

    /// True when a limit cut the turn: the rest of it was not kept.
    public var truncated: Bool { cutBy != nil }

    /// True when its side was not recorded after this turn (the flow budget cut it).
    public var stopsSide: Bool { cutBy == .flowBudget }

    /// True when HTTP/2 bodies in this turn were shortened by `HTTP2BodyLimit` (the only way a
    /// turn keeps fewer bytes than it saw without being cut, losing bytes or starting deleted);
    /// its side goes on being recorded.
    public var bodiesShortened: Bool { keptBytes < seenBytes && cutBy == nil && !incomplete && !startDeleted }
}
