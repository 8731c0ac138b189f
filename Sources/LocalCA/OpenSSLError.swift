import COpenSSL
import TVHome

/// A failure inside OpenSSL, with the library's own reason strings drained from its error queue.
public struct OpenSSLError: UserFacingError, Equatable {
    /// What we were doing ("signing the leaf").
    public let operation: String
    /// OpenSSL's reason strings, oldest first (may be empty).
    public let reasons: [String]

    /// Captures (and clears) the calling thread's OpenSSL error queue.
    public init(_ operation: String) {
        self.operation = operation
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            reasons.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.reasons = reasons
    }

    public var message: String {
        let why = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
        return "OpenSSL failed while \(operation)\(why); this is unexpected, please report it with the command you ran."
    }
}
