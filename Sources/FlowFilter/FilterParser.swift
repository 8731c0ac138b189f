/// Parses a filter expression in mitmproxy's language (docs.mitmproxy.org, "Filter
/// expressions"; its grammar in `mitmproxy/flowfilter.py`):
///
///     sequence := or { or }                 adjacent expressions: and, the lowest precedence
///     or       := and { "|" and }
///     and      := not { "&" not }
///     not      := "!" not | primary
///     primary  := "(" sequence ")" | ~op | ~op regex | ~c int | regex (a bare regex is ~u)
///
/// so `!` binds tightest, then `&`, then `|`, and `~d a | ~d b ~m GET` means
/// `(~d a | ~d b) & ~m GET`, as in mitmproxy (which allows adjacent terms only outside
/// parentheses; tv allows them inside too). Pure: text in, an expression or the first mistake out.
public enum FilterParser {
    /// The deepest nesting of `(` and `!` taken: each level is a recursive call here and in the
    /// matcher, and a trial's 17,000 parentheses overflowed the stack (signal 11). mitmproxy's
    /// own parser (pyparsing) stops at Python's recursion limit.
    public static let maximumDepth = 100

    /// The expression `text` writes.
    /// - Throws: `FilterSyntaxError`, with the column of the first mistake.
    public static func parse(_ text: String) throws -> FilterExpression {
        var parser = State(tokens: try FilterLexer.tokens(text), end: text.count + 1)
        let expression = try parser.sequence(after: nil)
        if let extra = parser.peek {
            // Only a ')' can stop a sequence early.
            throw FilterSyntaxError(.unopenedParenthesis, column: extra.column)
        }
        return expression
    }

    private struct State {
        let tokens: [FilterLexer.Located]
        /// The column one past the text's end.
        let end: Int
        var index = 0
        /// The `(` and `!` open around the token being read.
        var depth = 0

        /// Counts one more level at `column`, refused past `maximumDepth`.
        mutating func deeper(at column: Int) throws {
            depth += 1
            if depth > FilterParser.maximumDepth { throw FilterSyntaxError(.tooDeep(FilterParser.maximumDepth), column: column) }
        }

        var peek: FilterLexer.Located? { index < tokens.count ? tokens[index] : nil }

        mutating func next() -> FilterLexer.Located? {
            defer { index += 1 }
            return peek
        }

        /// Whether the next token can begin an expression (so adjacent terms join with and).
        var startsExpression: Bool {
            switch peek?.token {
            case .not, .open, .op, .word: return true
            default: return false
            }
        }

        mutating func sequence(after: String?) throws -> FilterExpression {
            var parts = [try infix(.or, after: after)]
            while startsExpression { parts.append(try infix(.or, after: nil)) }
            return Self.join(parts, FilterExpression.and)
        }

        /// The two infix operators, loosest first.
        enum Infix {
            case or, and
            var token: FilterLexer.Token { self == .or ? .or : .and }
            func make(_ parts: [FilterExpression]) -> FilterExpression { self == .or ? .or(parts) : .and(parts) }
        }

        /// `operand { OP operand }`, where an operand is the next tighter level.
        mutating func infix(_ level: Infix, after: String?) throws -> FilterExpression {
            var parts = [try operand(of: level, after: after)]
            while peek?.token == level.token {
                _ = next()
                parts.append(try operand(of: level, after: level.token.text))
            }
            return Self.join(parts, level.make)
        }

        mutating func operand(of level: Infix, after: String?) throws -> FilterExpression {
            level == .or ? try infix(.and, after: after) : try not(after: after)
        }

        mutating func not(after: String?) throws -> FilterExpression {
            if let located = peek, located.token == .not {
                _ = next()
                try deeper(at: located.column)
                defer { depth -= 1 }
                return .not(try not(after: "!"))
            }
            return try primary(after: after)
        }

        mutating func primary(after: String?) throws -> FilterExpression {
            guard let located = peek else {
                throw FilterSyntaxError(.expectedExpression(after: after, found: nil), column: end)
            }
            switch located.token {
            case .open:
                _ = next()
                try deeper(at: located.column)
                defer { depth -= 1 }
                let inner = try sequence(after: "(")
                guard peek?.token == .close else { throw FilterSyntaxError(.unclosedParenthesis, column: located.column) }
                _ = next()
                return inner
            case let .op(name):
                _ = next()
                guard let op = FilterOperator(rawValue: name) else {
                    throw FilterSyntaxError(.unknownOperator("~" + name), column: located.column)
                }
                return .term(try argument(for: op))
            case let .word(word):
                _ = next()
                return .term(FilterTerm(.url, .regex(try Self.pattern(word, for: .url, column: located.column))))
            case .close, .and, .or, .not:
                throw FilterSyntaxError(.expectedExpression(after: after, found: located.token.text), column: located.column)
            }
        }

        mutating func argument(for op: FilterOperator) throws -> FilterTerm {
            guard op.argument != .none else { return FilterTerm(op) }
            guard let located = peek, case let .word(word) = located.token else {
                throw FilterSyntaxError(.missingArgument(op), column: peek?.column ?? end)
            }
            _ = next()
            if op.argument == .number {
                guard !word.isEmpty, word.allSatisfy(\.isASCII), word.allSatisfy(\.isNumber), let n = Int(word) else {
                    throw FilterSyntaxError(.notANumber(op, word), column: located.column)
                }
                return FilterTerm(op, .number(n))
            }
            return FilterTerm(op, .regex(try Self.pattern(word, for: op, column: located.column)))
        }

        static func pattern(_ text: String, for op: FilterOperator, column: Int) throws -> FilterPattern {
            let bodies: Set<FilterOperator> = [.body, .requestBody, .responseBody]
            guard let pattern = FilterPattern(text, dotAll: bodies.contains(op)) else {
                throw FilterSyntaxError(.badRegex(text), column: column)
            }
            return pattern
        }

        /// One part alone, else the parts under `make`, flattening nested ones of the same kind.
        static func join(_ parts: [FilterExpression], _ make: ([FilterExpression]) -> FilterExpression) -> FilterExpression {
            guard parts.count > 1 else { return parts[0] }
            var flat: [FilterExpression] = []
            for part in parts {
                switch (part, make([])) {
                case let (.and(xs), .and): flat += xs
                case let (.or(xs), .or): flat += xs
                default: flat.append(part)
                }
            }
            return make(flat)
        }
    }
}
