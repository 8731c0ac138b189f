/// How long decrypted content is kept (`content.expiry`): one hour, one day (the default) or one
/// week. There is deliberately no "forever".
public enum ContentExpiry: String, Sendable, Equatable, CaseIterable {
    case oneHour = "1h"
    case oneDay = "1d"
    case oneWeek = "1w"

    /// The factory value: one day.
    public static let `default` = ContentExpiry.oneDay

    /// Reads `1h`, `1d` or `1w` (also `1 hour`, `1 day`, `1 week`, any case); nil otherwise.
    public init?(text: String) {
        switch text.lowercased().replacingOccurrences(of: " ", with: "") {
        case "1h", "1hour", "hour": self = .oneHour
        case "1d", "1day", "day": self = .oneDay
        case "1w", "1week", "week": self = .oneWeek
        default: return nil
        }
    }

    /// The value as it is stored and typed: `1h`, `1d`, `1w`.
    public var text: String { rawValue }

    /// The span in microseconds.
    public var microseconds: Int64 {
        switch self {
        case .oneHour: return 3_600_000_000
        case .oneDay: return 86_400_000_000
        case .oneWeek: return 604_800_000_000
        }
    }

    /// For people: `1 hour`, `1 day`, `1 week`.
    public var words: String {
        switch self {
        case .oneHour: return "1 hour"
        case .oneDay: return "1 day"
        case .oneWeek: return "1 week"
        }
    }
}
