/// What is kept of one flow's content: enough to say "how much was saved" without reading bytes.
public struct ContentSummary: Sendable, Equatable {
    /// Turns in the index.
    public var turns: Int
    /// Sum of their kept bytes.
    public var keptBytes: Int64
    /// Sum of their seen bytes (the turns' own figures, not a per-flow total).
    public var seenBytes: Int64
    /// True when some turn was cut by the budget.
    public var truncated: Bool
    /// True when some turn lost kept bytes (queue full, switch off).
    public var incomplete: Bool
    /// Of `keptBytes`, those in segment files that are no longer in the content folder (deleted
    /// or moved by hand): the turns' figures stay, their bytes cannot be read (a trial's flow
    /// said "saved … tv turns shows it" with its segment gone).
    public var goneBytes: Int64 = 0

    public init(turns: Int = 0, keptBytes: Int64 = 0, seenBytes: Int64 = 0, truncated: Bool = false, incomplete: Bool = false) {
        self.turns = turns
        self.keptBytes = keptBytes
        self.seenBytes = seenBytes
        self.truncated = truncated
        self.incomplete = incomplete
    }
}
