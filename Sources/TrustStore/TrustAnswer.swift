/// The answer to one trust question, asked now: yes, no, or unknown with the reason.
///
/// A store that cannot be read answers `.unknown`, never `.no` ("doubt closes the door", seed 002).
public enum TrustAnswer: Sendable, Equatable, Hashable {
    case yes
    case no
    /// The question could not be answered; `because` is one sentence for people.
    case unknown(because: String)

    /// `yes`, `no` or `unknown`, for JSON and tables.
    public var word: String {
        switch self {
        case .yes: return "yes"
        case .no: return "no"
        case .unknown: return "unknown"
        }
    }
}
