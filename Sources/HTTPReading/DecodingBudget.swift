import TVHome

/// How far one command decodes content-coded bodies (issue 12 §1: a 27-byte body can decode to
/// 16 MiB, and a flow can hold thousands of them). Pure: the reader asks `limit(kept:)` before a
/// body and reports what it decoded with `spend(_:)` after.
///
/// A body is decoded to at most `ratio` times its kept (still encoded) size, but never less than
/// `floor` bytes, and never past `bodyCap`; all bodies of one command together decode to at most
/// `commandCap` bytes — counting what a decoder decoded without handing it out (libbrotli fills
/// its window before it hands anything out), so the budget bounds the work too. Whichever is
/// smallest cuts, and the cut is said (`DecodingCut`).
public struct DecodingBudget: Sendable, Equatable {
    /// The limits every command uses: 1,000 times the kept size, at least 64 KiB, at most
    /// 16 MiB a body, 64 MiB a command.
    public static let standard = DecodingBudget(ratio: 1_000, floor: 65_536, bodyCap: 16 * 1_048_576,
                                                commandCap: 64 * 1_048_576)

    /// Decoded bytes allowed per kept byte of a body.
    public var ratio: Int
    /// Decoded bytes a body may always reach, however small it is kept.
    public var floor: Int
    /// Decoded bytes one body never goes past.
    public var bodyCap: Int
    /// Decoded bytes all bodies of one command never go past together.
    public var commandCap: Int
    /// Decoded bytes spent so far by this command.
    public private(set) var spent = 0

    /// A budget with nothing spent yet; all figures in bytes except `ratio` (decoded bytes per kept byte).
    public init(ratio: Int, floor: Int, bodyCap: Int, commandCap: Int) {
        self.ratio = ratio
        self.floor = floor
        self.bodyCap = bodyCap
        self.commandCap = commandCap
    }

    /// Decoded bytes this command may still spend.
    public var remaining: Int { max(0, commandCap - spent) }

    /// The most a body of `kept` encoded bytes may decode to now, and the rule that sets it.
    /// On a tie the body's own rule is named (ratio before the body cap before the command's).
    public func limit(kept: Int) -> DecodingLimit {
        let (product, overflow) = max(0, kept).multipliedReportingOverflow(by: ratio)
        let byRatio = max(floor, overflow ? Int.max : product)
        if byRatio <= bodyCap && byRatio <= remaining { return DecodingLimit(bytes: byRatio, rule: .ratio) }
        if bodyCap <= remaining { return DecodingLimit(bytes: bodyCap, rule: .bodyCap) }
        return DecodingLimit(bytes: remaining, rule: .commandBudget)
    }

    /// Counts `decoded` bytes (all a body's decoders decoded) against the command's budget.
    public mutating func spend(_ decoded: Int) {
        spent += max(0, decoded)
    }
}

/// The most one body may decode to (`bytes`) and which rule of `DecodingBudget` set it.
public struct DecodingLimit: Sendable, Equatable {
    /// The rules of `DecodingBudget`.
    public enum Rule: Sendable, Equatable {
        /// `ratio` times the kept size (or `floor`).
        case ratio
        /// `bodyCap`.
        case bodyCap
        /// What is left of `commandCap`.
        case commandBudget
    }

    /// Decoded bytes allowed.
    public var bytes: Int
    /// The rule that allowed no more.
    public var rule: Rule

    /// `bytes` allowed by `rule`.
    public init(bytes: Int, rule: Rule) {
        self.bytes = bytes
        self.rule = rule
    }
}

/// A body whose decoding a `DecodingLimit` stopped: what was decoded from what, and which rule
/// stopped it. `sentence` is what every view (terminal, JSON, HAR) says about it.
public struct DecodingCut: Sendable, Equatable {
    /// The limit that stopped decoding (`bytes` is 0 when nothing was decoded at all).
    public var limit: DecodingLimit
    /// The codings undone, in the order they were applied (`["br"]`).
    public var codings: [String]
    /// Encoded bytes kept of the body.
    public var kept: Int
    /// The budget whose rule stopped it (for its figures).
    public var budget: DecodingBudget

    /// The cut of a body of `kept` encoded bytes with `codings`, stopped by `limit` of `budget`.
    public init(limit: DecodingLimit, codings: [String], kept: Int, budget: DecodingBudget) {
        self.limit = limit
        self.codings = codings
        self.kept = kept
        self.budget = budget
    }

    /// One sentence: how far decoding went, from how many kept bytes, which limit stopped it,
    /// and what is shown. E.g. "Decoded 64.0 KiB from 27 bytes of br and stopped: tv decodes a
    /// body to at most 1,000 times its kept size (at least 64.0 KiB); the decoded body ends there."
    public var sentence: String {
        let coding = codings.joined(separator: ", ")
        let from = ByteWords.bytes(kept)
        if limit.bytes == 0 {
            return "Not decoded: this command has already decoded \(ByteWords.binary(Int64(budget.commandCap))), the most it decodes in all;"
                + " shown: the \(from) of \(coding) as transferred (ask for fewer flows or bodies at a time to see it decoded)."
        }
        let decoded = ByteWords.binary(Int64(limit.bytes))
        let why: String
        switch limit.rule {
        case .ratio:
            why = "tv decodes a body to at most \(ByteWords.grouped(Int64(budget.ratio))) times its kept size (at least \(ByteWords.binary(Int64(budget.floor))))"
        case .bodyCap:
            why = "tv decodes a body to at most \(ByteWords.binary(Int64(budget.bodyCap)))"
        case .commandBudget:
            why = "this command decodes at most \(ByteWords.binary(Int64(budget.commandCap))) in all"
        }
        return "Decoded \(decoded) from \(from) of \(coding) and stopped: \(why); the decoded body ends there."
    }
}
