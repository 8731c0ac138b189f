/// A parsed filter (see `FilterParser`): terms joined by not, and, or. `and` and `or` hold two
/// or more operands, flattened (`a & b & c` is one `and` of three).
public indirect enum FilterExpression: Sendable, Equatable, CustomStringConvertible {
    /// One operator and its argument.
    case term(FilterTerm)
    /// `!x`.
    case not(FilterExpression)
    /// `a & b …`, also written as adjacent terms.
    case and([FilterExpression])
    /// `a | b …`.
    case or([FilterExpression])

    /// Every operator the expression uses, in order of appearance, each once.
    public var operators: [FilterOperator] {
        var seen: [FilterOperator] = []
        func walk(_ e: FilterExpression) {
            switch e {
            case let .term(t): if !seen.contains(t.op) { seen.append(t.op) }
            case let .not(x): walk(x)
            case let .and(xs), let .or(xs): xs.forEach(walk)
            }
        }
        walk(self)
        return seen
    }

    /// The expression written out fully parenthesized, regexes double-quoted: `(~d "a" & !~q)`.
    public var description: String {
        switch self {
        case let .term(t): return t.description
        case let .not(x): return "!" + x.description
        case let .and(xs): return "(" + xs.map(\.description).joined(separator: " & ") + ")"
        case let .or(xs): return "(" + xs.map(\.description).joined(separator: " | ") + ")"
        }
    }
}

/// One operator with its argument, as written.
public struct FilterTerm: Sendable, Equatable, CustomStringConvertible {
    /// The operator (`~u` for a bare regex).
    public var op: FilterOperator
    /// Its argument; matches `op.argument`.
    public var argument: Value

    /// An operator's argument.
    public enum Value: Sendable, Equatable {
        case none
        case regex(FilterPattern)
        case number(Int)
    }

    public init(_ op: FilterOperator, _ argument: Value = .none) {
        self.op = op
        self.argument = argument
    }

    public var description: String {
        switch argument {
        case .none: return op.spelling
        case let .number(n): return op.spelling + " \(n)"
        case let .regex(p):
            let escaped = p.source.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return op.spelling + " \"" + escaped + "\""
        }
    }
}
