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

    /// The symbolic name of the errors a connect(2) or send(2) reports for the network
    /// ("EHOSTUNREACH"), which a program's own error message often shows; nil for the others.
    public var name: String? {
        switch code {
        case ECONNREFUSED: return "ECONNREFUSED"
        case ENETUNREACH: return "ENETUNREACH"
        case EHOSTUNREACH: return "EHOSTUNREACH"
        case EHOSTDOWN: return "EHOSTDOWN"
        case ENONET: return "ENONET"
        case EACCES: return "EACCES"
        case EPERM: return "EPERM"
        case ETIMEDOUT: return "ETIMEDOUT"
        case EMSGSIZE: return "EMSGSIZE"
        case ECONNRESET: return "ECONNRESET"
        default: return nil
        }
    }

    /// The phrase with the name after it where there is one: "no route to host (EHOSTUNREACH)".
    public var namedPhrase: String { name.map { "\(phrase) (\($0))" } ?? phrase }
}
