/// What a row (a flow, an exchange, a HAR entry) offers the filter. Each answer is nil when
/// this row cannot tell (a flow row has no method; headers were not kept): the operator then
/// matches nothing and `FilterMatcher` counts it as unanswered, so the command can say so once.
public protocol FilterSubject {
    /// The texts `field` holds, each searched on its own: one for most fields, one
    /// `name: value` line per header, none when the row has none (no response yet).
    func texts(_ field: FilterField) -> [String]?
    /// A yes-or-no fact about the row.
    func flag(_ flag: FilterFlag) -> Bool?
}

/// A plain value of the fields, for rows assembled in memory (and tests): a field left out of
/// `texts`, or a flag left out of `flags`, is one the row cannot tell.
public struct FilterFields: FilterSubject, Sendable, Equatable {
    public var texts: [FilterField: [String]]
    public var flags: [FilterFlag: Bool]

    public init(texts: [FilterField: [String]] = [:], flags: [FilterFlag: Bool] = [:]) {
        self.texts = texts
        self.flags = flags
    }

    public func texts(_ field: FilterField) -> [String]? { texts[field] }
    public func flag(_ flag: FilterFlag) -> Bool? { flags[flag] }
}

/// `ADDRESS:PORT`, the IPv6 address in brackets (`[::1]:443`), as mitmproxy writes addresses
/// for `~src` and `~dst`.
public func filterAddress(_ address: String, port: Int) -> String {
    address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
}
