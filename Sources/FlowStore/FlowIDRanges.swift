/// Flow ids when several programs write one data folder at once (`tv run` beside `tv exec`, two
/// `tv exec`s): each flow writer takes a range of `size` ids at registration
/// (`FlowWriterRegistry`, in its `BEGIN IMMEDIATE` transaction, kept in `flow_writers`), from
/// above every id used here (`FlowIDFloor`) and above every live writer's range. A writer alone
/// goes on from the largest id used, as one session always did; a writer starting beside others
/// starts past their ranges. Before, two `tv exec`s each went on from the same largest id: the
/// second one's flows took the first one's ids, and each row mixed two connections (a new-user
/// trial: six connections kept as three flows). A pure policy.
public enum FlowIDRanges {
    /// Ids one writer may hand out: 2^32, more than one session makes (4.3 billion flows; the
    /// history's insert rate is ~50,000 flows/s at best).
    public static let size: Int64 = 1 << 32

    /// The first id of a new writer's range.
    /// - Parameters:
    ///   - highestUsed: the largest id ever used in the file (`FlowIDFloor.highestSQL`; 0: none).
    ///   - liveEnds: the end (exclusive) of each live writer's range; nil for a writer an older tv
    ///     registered without one (its ids go on from where it started: a whole range is left
    ///     above the largest id used for it).
    public static func first(highestUsed: Int64, liveEnds: [Int64?]) -> Int64 {
        var first = max(highestUsed, 0) + 1
        for end in liveEnds {
            first = max(first, end ?? max(highestUsed, 0) + 1 + size)
        }
        return first
    }
}
