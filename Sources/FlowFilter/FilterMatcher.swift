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

    /// When it stops looking (nil: never).
    public let deadline: FilterDeadline?

    public init(_ expression: FilterExpression, deadline: FilterDeadline? = nil) {
        self.expression = expression
        self.deadline = deadline
    }

    /// Whether `subject` matches; counts the row and what went unanswered in it. A row the
    /// deadline stopped (`decide`) does not match.
    public mutating func matches(_ subject: some FilterSubject) -> Bool { decide(subject) == .match }

    /// The row's answer, or that the deadline passed. The first row is always looked at, so a
    /// page that stops still moves on by one row; a row cut mid-search counts as looked at and
    /// adds nothing to `unanswered`.
    public mutating func decide(_ subject: some FilterSubject) -> FilterDecision {
        if rows > 0, let deadline, deadline.hasPassed { return .outOfTime(cut: false) }
        rows += 1
        var evaluation = Evaluation(deadline: deadline)
        let result = Self.evaluate(expression, subject, &evaluation)
        if evaluation.outOfTime { return .outOfTime(cut: true) }
        for op in evaluation.missing { unanswered[op, default: 0] += 1 }
        return result ? .match : .noMatch
    }

    /// One row's evaluation: the operators that had nothing to look at, and whether a search
    /// ran out of time (then the answer means nothing and evaluation stops).
    struct Evaluation {
        var missing: Set<FilterOperator> = []
        let deadline: FilterDeadline?
        var outOfTime = false
    }

    /// Whether `subject` matches `expression`, without counting or a deadline. `&` and `|` stop
    /// at the first operand that decides, so `missing` names only the operators whose answer
    /// was needed.
    public static func evaluate(_ expression: FilterExpression, _ subject: some FilterSubject,
                                _ missing: inout Set<FilterOperator>) -> Bool {
        var evaluation = Evaluation(deadline: nil)
        let result = evaluate(expression, subject, &evaluation)
        missing = evaluation.missing
        return result
    }

    static func evaluate(_ expression: FilterExpression, _ subject: some FilterSubject, _ evaluation: inout Evaluation) -> Bool {
        switch expression {
        case let .term(term): return evaluate(term, subject, &evaluation)
        case let .not(inner): return !evaluate(inner, subject, &evaluation)
        case let .and(parts):
            for part in parts where !evaluate(part, subject, &evaluation) || evaluation.outOfTime { return false }
            return true
        case let .or(parts):
            for part in parts where evaluate(part, subject, &evaluation) || evaluation.outOfTime { return !evaluation.outOfTime }
            return false
        }
    }

    static func evaluate(_ term: FilterTerm, _ subject: some FilterSubject, _ evaluation: inout Evaluation) -> Bool {
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
                evaluation.missing.insert(term.op)
                return false
            }
            return term.op == .request ? !value : value
        }
        let answers = term.op.fields.compactMap { subject.texts($0) }
        guard !answers.isEmpty else {
            evaluation.missing.insert(term.op)
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
            let host = term.op == .domain || term.op == .url
            for text in texts {
                switch host ? pattern.searchHost(text, until: evaluation.deadline) : pattern.search(text, until: evaluation.deadline) {
                case true?: return true
                case false?: continue
                case nil:
                    evaluation.outOfTime = true
                    return false
                }
            }
            return false
        case let .number(n): return texts.contains { Int($0) == n }
        case .none: return false
        }
    }
}
