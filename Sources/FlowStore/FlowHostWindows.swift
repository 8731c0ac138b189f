/// How a `tv flows --host TEXT` page is read once the names holding the text are known
/// (`FlowNameMatches`). Pure: values in, windows out.
///
/// A name's flows come from its column's index in time order, but several names (a domain
/// shared by many hosts) cannot be merged by SQLite without sorting all their flows. So the page
/// is read in time windows, newest first: each window asks every name's index for its flows in
/// the window only (one seek per name) and sorts those few; the first window is an hour wide and
/// each next one at least twice as wide, until the page is full or the history ends. Once a
/// window found rows, the next is as wide as the rows still missing need at the density seen so
/// far, with half again for margin (`found(_:missing:)`; at most 64 times the last width), so a
/// filter that keeps one flow in four (`--status inspected`) costs one more round of seeks, not
/// three. A popular name fills
/// the page in the first hour; a name seen once a week costs a dozen windows of a few seeks.
/// A window's seeks are one per (day, name) (`FlowDays`): no window is wider than lets its
/// seeks stay within `mostSeeks` (`mostWidth(lookups:)`), so a text of many names reads a long
/// history in more windows, not in one of many thousand seeks.
/// When the text matches more names than `mostLookups` (a text as common as `com`), a window's
/// seeks would cost more than reading the flows themselves: the page walks
/// `flows_by_start_time` newest first instead, keeping the flows of those names (a common text
/// fills the page within a few hundred rows).
public struct FlowHostWindows: Sendable, Equatable {
    /// The first window's width: one hour (µs).
    public static let firstWidth: Int64 = 3_600_000_000
    /// Above this many (name, column) lookups a page walks the time index instead.
    public static let mostLookups = 512

    /// How many entries of `flows_by_status_time` a `--host TEXT --status S` page walks before
    /// its windows (`walksFirst`): a walk entry costs a row read (its names are in the row), a
    /// window a seek per name and a row read per kept flow.
    public static let walkedEntries = 1_024

    /// Whether a page of `query` (a host text the names index answers) first walks its status's
    /// index for `walkedEntries` entries, then reads windows from where the walk stopped: with
    /// a status, the walk reads only that status's flows and needs no seek per name; a text
    /// common among them (`--host github --status inspected`) fills its page there.
    public static func walksFirst(_ query: FlowQuery) -> Bool {
        query.status != nil
    }

    /// Whether a page over `names` reads windows (else it walks the time index).
    public static func readsWindows(_ names: FlowNameMatches) -> Bool {
        names.lookups <= mostLookups
    }

    /// The most (day, name) seeks a window should cost (`mostWidth(lookups:)`).
    public static let mostSeeks = 2_048

    /// The widest window (µs) whose seeks over `lookups` (name, column) pairs stay within
    /// `seeks`: a window touches at most its width in whole days plus one. At least a day.
    public static func mostWidth(lookups: Int, seeks: Int = mostSeeks) -> Int64 {
        Int64(max(1, seeks / max(lookups, 1) - 1)) * FlowDays.micros
    }

    /// The next window ends here (exclusive, µs).
    public private(set) var upper: Int64
    /// No window starts before this (inclusive, µs).
    public let lower: Int64
    /// The next window's width (µs), before `mostWidth`.
    public private(set) var width: Int64
    /// No window is wider than this (µs).
    public let mostWidth: Int64
    /// The widths of the windows given so far, summed (µs).
    public private(set) var widthRead: Int64 = 0
    /// The rows those windows held.
    public private(set) var rowsFound = 0
    /// The most a window grows over the one before it (`found(_:missing:)`).
    public static let mostGrowth: Int64 = 64

    /// Windows from `upper` (exclusive) back to `lower` (inclusive), newest first, none wider
    /// than `mostWidth` (µs).
    public init(upper: Int64, lower: Int64, firstWidth: Int64 = FlowHostWindows.firstWidth, mostWidth: Int64 = .max) {
        self.upper = upper
        self.lower = lower
        self.mostWidth = max(mostWidth, 1)
        width = max(firstWidth, 1)
    }

    /// The windows for `query` over a history whose flows started from `oldest` to `newest`
    /// (µs, inclusive): from the newest flow, the `to` filter or the cursor's flow (whichever
    /// is earliest; the cursor's own start time is in its window, the keyset condition keeps
    /// out what came before), back to the oldest flow or the `from` / `since` filter.
    /// - Throws: `FlowStoreError.badCursor` when `query.after` is not a cursor tv gave out.
    public init(query: FlowQuery, oldest: Int64, newest: Int64, mostWidth: Int64 = .max) throws {
        var upper = newest + 1
        if let to = query.to { upper = min(upper, to) }
        if let after = query.after { upper = min(upper, try FlowCursor(after).startTime + 1) }
        let lower = [oldest, query.from, query.since].compactMap { $0 }.max() ?? oldest
        self.init(upper: upper, lower: lower, mostWidth: mostWidth)
    }

    /// The next window (`lower..<upper` of start times), or nil when the history is read.
    public mutating func next() -> Range<Int64>? {
        guard upper > lower else { return nil }
        let (start, overflow) = upper.subtractingReportingOverflow(min(width, mostWidth))
        let from = overflow ? lower : max(lower, start)
        defer {
            widthRead = widthRead.addingReportingOverflow(upper - from).overflow ? Int64.max : widthRead + (upper - from)
            upper = from
            width = width > Int64.max / 2 ? Int64.max : width * 2
        }
        return from..<upper
    }

    /// Told after each window: it held `rows` rows, and the page still misses `missing`. The
    /// next window is then as wide as `missing` rows take at the density of every window so far
    /// (rows found over width read), times 1.5; never narrower than twice the last window (the
    /// default), never wider than `mostGrowth` times it. With no row found yet, the default.
    /// E.g. a first hour that held 20 rows of 52 needed: the next window is 2.25 hours, not 2.
    public mutating func found(_ rows: Int, missing: Int) {
        rowsFound += max(rows, 0)
        guard rowsFound > 0, missing > 0, widthRead > 0 else { return }
        let last = width / 2
        let wanted = Double(widthRead) / Double(rowsFound) * Double(missing) * 1.5
        let most = last > Int64.max / FlowHostWindows.mostGrowth ? Int64.max : last * FlowHostWindows.mostGrowth
        width = max(width, wanted >= Double(most) ? most : Int64(wanted))
    }
}
