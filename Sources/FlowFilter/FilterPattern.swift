import Foundation

/// One regex of a filter, compiled once: searched (not anchored) and case-insensitive, as
/// mitmproxy's are; ICU syntax (`NSRegularExpression`), which agrees with Python's for the
/// usual `. * + ? [] () | ^ $ \d \w \s {m,n}`. Equal when written the same.
public struct FilterPattern: Sendable, Equatable, CustomStringConvertible {
    /// The regex as the user wrote it (quotes removed).
    public let source: String
    /// `@unchecked Sendable` box: an NSRegularExpression is immutable after init and documented
    /// as safe to use from several threads at once (Foundation's thread-safety summary lists it
    /// among the thread-safe immutable classes).
    private final class Compiled: @unchecked Sendable {
        let regex: NSRegularExpression
        init(_ regex: NSRegularExpression) { self.regex = regex }
    }
    private let compiled: Compiled

    /// Compiles `source`; nil when it is not a regular expression. `.` crosses line ends when
    /// `dotAll` (bodies, as mitmproxy's `re.DOTALL`).
    public init?(_ source: String, dotAll: Bool = false) {
        var options: NSRegularExpression.Options = [.caseInsensitive]
        if dotAll { options.insert(.dotMatchesLineSeparators) }
        guard let regex = try? NSRegularExpression(pattern: source, options: options) else { return nil }
        self.source = source
        self.compiled = Compiled(regex)
    }

    /// Whether the regex is found anywhere in `text`.
    public func search(_ text: String) -> Bool {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return compiled.regex.firstMatch(in: text, options: [], range: range) != nil
    }

    public static func == (a: FilterPattern, b: FilterPattern) -> Bool { a.source == b.source }

    public var description: String { source }
}
