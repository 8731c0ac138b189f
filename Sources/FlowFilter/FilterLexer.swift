/// Splits a filter into tokens, each with its 1-based column, by mitmproxy's rules: `!`, `&`,
/// `|`, `(`, `)` stand alone; `~name` is an operator; a regex is a word that runs until white
/// space or one of `( ) ~ ' "` (so `~d a|b` is one regex), or a quoted string (`'…'` or `"…"`,
/// where `\'`, `\"` and `\\` stand for the character and any other backslash stays, for the regex).
struct FilterLexer {
    /// One token.
    enum Token: Equatable {
        case not, and, or, open, close
        /// `~name` (the name without `~`).
        case op(String)
        /// A regex or number, quotes removed.
        case word(String)

        /// The token as the user wrote it, for error sentences.
        var text: String {
            switch self {
            case .not: return "!"
            case .and: return "&"
            case .or: return "|"
            case .open: return "("
            case .close: return ")"
            case let .op(name): return "~" + name
            case let .word(w): return w
            }
        }
    }

    /// A token and where it starts.
    struct Located: Equatable {
        var token: Token
        var column: Int
    }

    /// The tokens of `text`.
    /// - Throws: `FilterSyntaxError` (`.bareTilde`, `.unclosedQuote`).
    static func tokens(_ text: String) throws -> [Located] {
        let chars = Array(text)
        var out: [Located] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
                continue
            }
            switch c {
            case "!": out.append(Located(token: .not, column: column)); i += 1
            case "&": out.append(Located(token: .and, column: column)); i += 1
            case "|": out.append(Located(token: .or, column: column)); i += 1
            case "(": out.append(Located(token: .open, column: column)); i += 1
            case ")": out.append(Located(token: .close, column: column)); i += 1
            case "~":
                var j = i + 1
                while j < chars.count, chars[j].isLetter || chars[j].isNumber { j += 1 }
                guard j > i + 1 else { throw FilterSyntaxError(.bareTilde, column: column + 1) }
                out.append(Located(token: .op(String(chars[(i + 1)..<j])), column: column))
                i = j
            case "'", "\"":
                var j = i + 1
                var word = ""
                var closed = false
                while j < chars.count {
                    if chars[j] == "\\", j + 1 < chars.count, chars[j + 1] == c || chars[j + 1] == "\\" {
                        word.append(chars[j + 1])
                        j += 2
                    } else if chars[j] == c {
                        closed = true
                        j += 1
                        break
                    } else {
                        word.append(chars[j])
                        j += 1
                    }
                }
                guard closed else { throw FilterSyntaxError(.unclosedQuote(c), column: column) }
                out.append(Located(token: .word(word), column: column))
                i = j
            default:
                var j = i
                while j < chars.count, !chars[j].isWhitespace, !"()~'\"".contains(chars[j]) { j += 1 }
                out.append(Located(token: .word(String(chars[i..<j])), column: column))
                i = j
            }
        }
        return out
    }
}
