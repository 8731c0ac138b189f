import TVHome

/// A filtered page that stopped because its time limit passed (`--time-limit`, tv web's lists):
/// how far it looked, and the row whose search the limit cut. The page's next cursor goes on
/// after the last row looked at, so the cut row is not looked at again.
public struct FilterTimeLimitReached: Sendable, Equatable {
    /// The limit.
    public var limit: Duration
    /// Rows looked at on this page, the cut one included.
    public var looked: Int
    /// Rows shown (matched) on this page.
    public var matched: Int
    /// The flow or request whose search the limit cut: neither shown nor looked at again.
    public var cut: Int64?

    public init(limit: Duration, looked: Int, matched: Int, cut: Int64?) {
        self.limit = limit
        self.looked = looked
        self.matched = matched
        self.cut = cut
    }

    /// The sentence for the terminal and the web (`rows` says what was looked at).
    public func sentence(_ rows: FilterNotice.Rows) -> String {
        let noun = rows == .flows ? "flow" : "request"
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        let limitText = seconds == seconds.rounded() ? "\(Int64(seconds)) s" : "\(seconds) s"
        var text = "The filter stopped looking after \(limitText) (its time limit): \(Units.grouped(Int64(looked))) \(noun)\(looked == 1 ? "" : "s") looked at, "
            + "\(Units.grouped(Int64(matched))) matched; the next page goes on from there."
        if let cut {
            text += " The search in \(noun) \(cut) ran out of time, so it is not shown: its regex backtracks or its texts are long; "
                + "`tv \(noun) \(cut)` shows it."
        }
        return text
    }

    /// `{"limitSeconds", "looked", "matched", "cut", "sentence"}` for `--json`.
    public func json(_ rows: FilterNotice.Rows) -> JSONValue {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        return .object([("limitSeconds", .double(seconds)), ("looked", .int(Int64(looked))), ("matched", .int(Int64(matched))),
                        ("cut", cut.map { .int($0) } ?? .null), ("sentence", .string(sentence(rows)))])
    }
}
