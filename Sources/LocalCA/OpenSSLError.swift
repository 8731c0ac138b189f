import COpenSSL
import CTVShims
import TVHome

/// A failure inside OpenSSL, with the library's own reason strings drained from its error queue.
public struct OpenSSLError: UserFacingError, Equatable {
    /// What we were doing ("signing the leaf").
    public let operation: String
    /// OpenSSL's reason strings, oldest first (may be empty).
    public let reasons: [String]
    /// The errno of the first system call OpenSSL reported failing (an `ERR_LIB_SYS` entry:
    /// fopen(3) of a file it was given), nil when none did.
    public let systemErrno: Int32?

    /// Captures (and clears) the calling thread's OpenSSL error queue.
    public init(_ operation: String) {
        self.operation = operation
        var reasons: [String] = []
        var systemErrno: Int32?
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if systemErrno == nil, tv_err_lib(code) == ERR_LIB_SYS { systemErrno = tv_err_reason(code) }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            reasons.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        self.reasons = reasons
        self.systemErrno = systemErrno
    }

    public var message: String {
        let why = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
        return "OpenSSL failed while \(operation)\(why); this is unexpected, please report it with the command you ran."
    }
}
