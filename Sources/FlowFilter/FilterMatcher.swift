/// Evaluates one expression over rows, one at a time, and counts what it could not look at:
/// for each operator, the rows where its answer was needed and every field it reads was
/// unanswered (nil). Such a term
/// matches nothing (so `!~h x` matches a row without kept headers, as in mitmproxy, where a
/// missing header never matches).
public struct FilterMatcher: Sendable {
    /// The expression.
    public let expression: FilterExpression
    /// Rows evaluated so far.
    public private(set) var rows = 0
    /// Per operator: rows where it had nothing to look at.
    public private(set) var unanswered: [FilterOperator: Int] = [:]

    public init(_ expression: FilterExpression) {
        self.expression = expression
    }

    /// Whether `subject` matches; counts the row and what went unanswered in it.
    public mutating func matches(_ subject: some FilterSubject) -> Bool {
        rows += 1
        var missing: Set<FilterOperator> = []
        let result = Self.evaluate(expression, subject, &missing)
        for op in missing { unanswered[op, default: 0] += 1 }
        return result
    }

    /// Whether `subject` matches `expression`, without counting. `&` and `|` stop at the first
    /// operand that decides, so `missing` names only the operators whose answer was needed.
    public static func evaluate(_ expression: FilterExpression, _ subject: some FilterSubject,
                                _ missing: inout Set<FilterOperator>) -> Bool {
        switch expression {
        case let .term(term): return evaluate(term, subject, &missing)
        case let .not(inner): return !evaluate(inner, subject, &missing)
        case let .and(parts):
            for part in parts where !evaluate(part, subject, &missing) { return false }
            return true
        case let .or(parts):
            for part in parts where evaluate(part, subject, &missing) { return true }
            return false
        }
    }

    static func evaluate(_ term: FilterTerm, _ subject: some FilterSubject, _ missing: inout Set<FilterOperator>) -> Bool {
        let flag: FilterFlag?
        switch term.op {
        case .all: return true
        case .request, .response: flag = .hasResponse
        case .error: flag = .failed
        case .tcp: flag = .tcp
        case .udp: flag = .udp
        default: flag = nil
        }
        if let flag {
            guard let value = subject.flag(flag) else {
                missing.insert(term.op)
                return false
            }
            return term.op == .request ? !value : value
        }
        let answers = term.op.fields.compactMap { subject.texts($0) }
        guard !answers.isEmpty else {
            missing.insert(term.op)
            return false
        }
        let texts = answers.joined()
        switch term.argument {
        case let .regex(pattern):
            if term.op == .source || term.op == .destination, let literal = pattern.bracketedAddress {
                // The address with its port names one endpoint; without, any port of it.
                let whole = literal.contains("]:")
                return texts.contains { whole ? $0.lowercased() == literal : $0.lowercased().hasPrefix(literal + ":") }
            }
            if term.op == .domain || term.op == .url { return texts.contains { pattern.searchHost($0) } }
            return texts.contains { pattern.search($0) }
        case let .number(n): return texts.contains { Int($0) == n }
        case .none: return false
        }
    }
}
