/// The `HTTP-version` of a request line: `"HTTP/" DIGIT "." DIGIT` (RFC 9112 §2.3).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// Major version digit, 0...9 (only 1 is accepted by `HTTP1HeadParser`).
    public var major: Int
    /// Minor version digit, 0...9.
    public var minor: Int

    /// Creates a version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http10 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http11 = HTTPVersion(major: 1, minor: 1)

    /// The wire form, e.g. "HTTP/1.1".
    public var description: String { "HTTP/\(major).\(minor)" }
}
