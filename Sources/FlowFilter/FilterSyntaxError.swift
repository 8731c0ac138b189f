import TVHome

/// Why a filter did not parse, and the 1-based column (in characters) where the mistake is;
/// rendered as one sentence that names the column.
public struct FilterSyntaxError: UserFacingError, Equatable {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// An expression was expected (after `after`, or at the start when nil) and `found` came
        /// instead (nil: the text ended).
        case expectedExpression(after: String?, found: String?)
        /// `~NAME` is not an operator tv knows.
        case unknownOperator(String)
        /// A `~` with no operator name after it.
        case bareTilde
        /// The operator needs a regex or a number and the text ended or an operator came.
        case missingArgument(FilterOperator)
        /// `~c` was given something that is not a whole number.
        case notANumber(FilterOperator, String)
        /// The regex does not compile.
        case badRegex(String)
        /// A quote opened here is not closed.
        case unclosedQuote(Character)
        /// A `(` opened here is not closed.
        case unclosedParenthesis
        /// A `(` or `!` here nests deeper than `FilterParser.maximumDepth` (each level is a call
        /// in the parser and the matcher: 17,000 parentheses overflowed the stack, a trial).
        case tooDeep(Int)
        /// A `)` with no `(` before it.
        case unopenedParenthesis
    }

    /// What went wrong.
    public let kind: Kind
    /// Where: the column of the offending character, or one past the end when the text ended early.
    public let column: Int

    public init(_ kind: Kind, column: Int) {
        self.kind = kind
        self.column = column
    }

    public var message: String {
        let at = "at column \(column)"
        switch kind {
        case let .expectedExpression(after, found):
            let after = after.map { " after '\($0)'" } ?? ""
            let found = found.map { ", not '\($0)'" } ?? ""
            return "Expected an expression\(after) \(at)\(found)."
        case let .unknownOperator(name):
            return "Unknown operator '\(TerminalText.line(name))' \(at); the operators are "
                + FilterOperator.allCases.map(\.spelling).joined(separator: " ") + "."
        case .bareTilde:
            return "Expected an operator name after '~' \(at), such as ~d or ~u."
        case let .missingArgument(op):
            return op.argument == .number
                ? "Expected a status code (a number such as 404) after '\(op.spelling)' \(at)."
                : "Expected a regex after '\(op.spelling)' \(at); quote it if it starts with ( ) ~ or a quote."
        case let .notANumber(op, text):
            return "'\(TerminalText.line(text))' \(at) is not a status code; '\(op.spelling)' takes a number such as 404."
        case let .badRegex(text):
            return "The regex '\(TerminalText.line(text))' \(at) does not compile; put a backslash before a special character to match it literally."
        case let .unclosedQuote(quote):
            return "The quote \(quote) \(at) is not closed; end the regex with another \(quote)."
        case .unclosedParenthesis:
            return "The '(' \(at) is not closed; add a ')'."
        case let .tooDeep(limit):
            return "The expression nests deeper than \(limit) parentheses and '!' \(at); write it with fewer levels."
        case .unopenedParenthesis:
            return "The ')' \(at) closes nothing; remove it or add a '(' before it."
        }
    }

    public var exitCode: Int32 { 2 }
}
