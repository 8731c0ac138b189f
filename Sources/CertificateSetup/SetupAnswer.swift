/// What one answer at a `tv setup` prompt means (a pure decision; the command reads the line).
///
/// Every prompt offers Enter (check again or try again) and `q` (not now); some offer `y` (yes)
/// and one offers `a` (do the steps for me). `n`/`no` mean "not now", like `q`: a no to "create
/// the certificate now?" must never be taken as "check again". End of input is "not now" too.
public enum SetupAnswer: Sendable, Equatable {
    case yes
    /// Enter alone: check again (or try again).
    case again
    case notNow
    /// `a`: do the trust steps for me.
    case doItForMe
    /// Anything else: said plainly, and the prompt is asked again.
    case unknown

    /// What a prompt offers besides Enter and `q`.
    public struct Offer: Sendable, Equatable {
        public var yes: Bool
        public var doItForMe: Bool
        public init(yes: Bool = false, doItForMe: Bool = false) {
            self.yes = yes
            self.doItForMe = doItForMe
        }
    }

    /// The meaning of `line` (nil at end of input) at a prompt offering `offer`.
    public init(_ line: String?, offer: Offer) {
        guard let line else { self = .notNow; return }
        // Surrounding blanks (and a terminal's \r) do not count.
        switch line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).joined(separator: " ").lowercased() {
        case "": self = .again
        case "q", "quit", "n", "no": self = .notNow
        case "y" where offer.yes, "yes" where offer.yes: self = .yes
        case "a" where offer.doItForMe: self = .doItForMe
        default: self = .unknown
        }
    }

    /// The sentence for an answer that means nothing at a prompt offering `offer`:
    /// "Type y, q, or press Enter." (the letters offered, in the prompt's order; "Type q or
    /// press Enter." when only q is).
    public static func unknownSentence(offer: Offer) -> String {
        let letters = (offer.yes ? ["y"] : []) + (offer.doItForMe ? ["a"] : []) + ["q"]
        guard letters.count > 1 else { return "Type q or press Enter." }
        return "Type " + letters.map { $0 + "," }.joined(separator: " ") + " or press Enter."
    }
}
