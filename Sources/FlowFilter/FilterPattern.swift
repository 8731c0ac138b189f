import Foundation
import Wire

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
    /// The regex with its international labels as A-labels (`IDNA.aLabelRuns`): tv stores host
    /// names as DNS carries them, so `~d bücher` found nothing of `xn--bcher-kva.test`. Nil when
    /// the source holds nothing international (or what IDNA refuses).
    private let aLabels: Compiled?
    /// The byte search when the source is a plain ASCII literal (`LiteralSearch`), which answers
    /// as ICU does, ICU looking only where the bytes cannot tell.
    private let literal: LiteralSearch?

    /// Compiles `source`; nil when it is not a regular expression. `.` crosses line ends when
    /// `dotAll` (bodies, as mitmproxy's `re.DOTALL`).
    public init?(_ source: String, dotAll: Bool = false) {
        var options: NSRegularExpression.Options = [.caseInsensitive]
        if dotAll { options.insert(.dotMatchesLineSeparators) }
        guard let regex = try? NSRegularExpression(pattern: source, options: options) else { return nil }
        self.source = source
        self.compiled = Compiled(regex)
        aLabels = IDNA.aLabelRuns(source).flatMap { try? NSRegularExpression(pattern: $0, options: options) }.map(Compiled.init)
        literal = LiteralSearch(source)
    }

    /// Whether the regex is found anywhere in `text`; nil when `deadline` passed before the
    /// answer was known (checked where ICU reports a long match's progress, about every 0.2 ms
    /// of backtracking, measured; a literal's byte search is not cut). Without a deadline the
    /// answer is never nil.
    public func search(_ text: String, until deadline: FilterDeadline? = nil) -> Bool? {
        guard let literal else { return Self.searchICU(text, compiled.regex, until: deadline) }
        let whole = text
        var text = text
        return text.withUTF8 { bytes -> Bool? in
            switch literal.verdict(in: bytes) {
            case .found: return true
            case .absent: return false
            case .askICU(let windows):
                for window in windows {
                    let answer = Self.searchICU(String(decoding: UnsafeBufferPointer(rebasing: bytes[window]), as: UTF8.self),
                                                compiled.regex, until: deadline)
                    if answer != false { return answer }
                }
                return false
            case .askICUEverywhere:
                return Self.searchICU(whole, compiled.regex, until: deadline)
            }
        }
    }

    /// `search` through ICU alone (tests compare the two).
    func searchICU(_ text: String) -> Bool { Self.searchICU(text, compiled.regex, until: nil) ?? false }

    /// Whether `regex` is found in `text`, nil when `deadline` passed first. With a deadline,
    /// ICU calls back with `.reportProgress` during a long match attempt, and the search stops
    /// there (ICU's own time limit is not reachable through `NSRegularExpression`).
    static func searchICU(_ text: String, _ regex: NSRegularExpression, until deadline: FilterDeadline?) -> Bool? {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        guard let deadline else { return regex.firstMatch(in: text, options: [], range: range) != nil }
        if deadline.hasPassed { return nil }
        var answer: Bool? = false
        regex.enumerateMatches(in: text, options: [.reportProgress], range: range) { match, _, stop in
            if match != nil {
                answer = true
                stop.pointee = true
            } else if deadline.hasPassed {
                answer = nil
                stop.pointee = true
            }
        }
        return answer
    }

    /// Whether the regex, or its A-label form, is found in `text` (a host name or a URL: `~d`,
    /// `~u`); nil when `deadline` passed first.
    public func searchHost(_ text: String, until deadline: FilterDeadline? = nil) -> Bool? {
        let answer = search(text, until: deadline)
        guard answer == false, let aLabels else { return answer }
        return Self.searchICU(text, aLabels.regex, until: deadline)
    }

    /// The source lowercased when it begins with an IPv6 address in brackets (`[::1]`,
    /// `[fd00::2]:443`), which `~src`/`~dst` take literally: as a regex the brackets are a
    /// character class, so the README's own `~dst [::1]:443` matched nothing it named (and
    /// `127.0.0.1:443`, through "1:443"); nil otherwise.
    public var bracketedAddress: String? {
        let lower = source.lowercased()
        guard lower.hasPrefix("["), let close = lower.firstIndex(of: "]") else { return nil }
        let inside = lower[lower.index(after: lower.startIndex)..<close]
        guard inside.contains(":"), inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        let rest = lower[lower.index(after: close)...]
        guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return nil }
        return lower
    }

    public static func == (a: FilterPattern, b: FilterPattern) -> Bool { a.source == b.source }

    public var description: String { source }
}
