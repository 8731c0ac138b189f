import Foundation

/// One `--ignore-hosts` / `--allow-hosts` regular expression, compiled once.
///
/// mitmproxy's rule: the pattern is searched (not anchored), case-insensitively, in `host:port`;
/// we also search the bare host, so `^example\.com$` works as people expect.
public struct HostPattern: Sendable, CustomStringConvertible {
    /// The pattern as the user wrote it.
    public let source: String
    /// `@unchecked Sendable` box: an NSRegularExpression is immutable after init and documented
    /// as safe to use from several threads at once (Foundation's thread-safety summary lists it
    /// among the thread-safe immutable classes).
    private final class Compiled: @unchecked Sendable {
        let regex: NSRegularExpression
        init(_ regex: NSRegularExpression) { self.regex = regex }
    }
    private let compiled: Compiled

    /// - Throws: `ProxyError.invalidHostPattern` when the text is not a regular expression.
    public init(_ source: String) throws {
        do {
            compiled = Compiled(try NSRegularExpression(pattern: source, options: [.caseInsensitive]))
        } catch {
            throw ProxyError.invalidHostPattern(source)
        }
        self.source = source
    }

    /// Whether the pattern is found in `host:port` or in `host`.
    public func matches(host: String, port: UInt16) -> Bool {
        search("\(host):\(port)") || search(host)
    }

    private func search(_ text: String) -> Bool {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return compiled.regex.firstMatch(in: text, options: [], range: range) != nil
    }

    public var description: String { source }
}
