#if canImport(Glibc)
import Glibc
#endif

/// An errno value with its text.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    /// The errno number (EPERM, ECONNREFUSED, …).
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    /// strerror(3)'s text ("Connection refused").
    public var description: String { String(cString: strerror(code)) }
    /// Lowercase first letter, for inside a sentence ("connection refused").
    public var phrase: String {
        let text = description
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
