import COpenSSL
import Foundation
import TVHome

/// The one user name and password the explicit and SOCKS5 proxies require when `tv run` is
/// given `--proxy-auth USER:PASSFILE`: HTTP Basic in `Proxy-Authorization` (RFC 9110 §11.7.1,
/// RFC 7617) or SOCKS5 username/password (RFC 1929).
///
/// Only the SHA-256 of `user:password` is kept; a client's credentials are hashed the same way
/// and the two 32-byte digests compared with `CRYPTO_memcmp`, so the comparison takes the same
/// time whatever the bytes, and their lengths do not show.
public struct ProxyCredentials: Sendable, Equatable {
    /// The user name clients must give.
    public let user: String
    private let digest: [UInt8]

    /// What a client's credentials came to.
    public enum Verdict: Sendable, Equatable {
        /// The client gave none (no `Proxy-Authorization`, or a SOCKS5 client that does not offer 0x02).
        case missing
        /// The client gave credentials that do not match; `user` is the name it gave (nil when
        /// the header was not `Basic base64(user:password)`). The password is never kept.
        case wrong(user: String?)
        /// The credentials match.
        case accepted
    }

    /// - Parameter password: the password's bytes (UTF-8 as read from the file).
    public init(user: String, password: [UInt8]) {
        self.user = user
        digest = Self.sha256(Array(user.utf8) + [UInt8(ascii: ":")] + password)
    }

    /// Whether `user` and `password` (bytes as the client sent them) are the expected ones,
    /// compared in constant time over SHA-256 digests.
    public func matches(user: [UInt8], password: [UInt8]) -> Bool {
        let given = Self.sha256(user + [UInt8(ascii: ":")] + password)
        return given.withUnsafeBytes { a in digest.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, 32) == 0 } }
    }

    /// Judges a `Proxy-Authorization` field value (nil: the field is absent): `Basic` (any case)
    /// and base64 of `user:password` (RFC 7617 §2: the user name ends at the first colon).
    public func judge(proxyAuthorization value: String?) -> Verdict {
        guard let value else { return .missing }
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return .wrong(user: nil) }
        let bytes = Array(decoded)
        let split = colon - decoded.startIndex
        let name = Array(bytes[..<split]), password = Array(bytes[(split + 1)...])
        return matches(user: name, password: password) ? .accepted : .wrong(user: String(decoding: name, as: UTF8.self))
    }

    /// Judges RFC 1929 username/password bytes.
    public func judge(user: [UInt8], password: [UInt8]) -> Verdict {
        matches(user: user, password: password) ? .accepted : .wrong(user: String(decoding: user, as: UTF8.self))
    }

    /// Reads `USER:PASSFILE`: the password is PASSFILE's first line (without its line end), the
    /// file trusted as a secret file (`SecretFile.readFirstLine`: yours, not a link, mode 0600).
    /// - Throws: `ProxyCredentialsError`.
    public static func load(_ spec: String) throws(ProxyCredentialsError) -> ProxyCredentials {
        guard let colon = spec.firstIndex(of: ":") else { throw .notUserColonFile(spec) }
        let user = String(spec[..<colon]), path = String(spec[spec.index(after: colon)...])
        guard !user.isEmpty, !path.isEmpty else { throw .notUserColonFile(spec) }
        // RFC 7617 §2 and RFC 1929: a colon cannot be in the user name; 255 bytes at most.
        guard user.utf8.count <= 255 else { throw .userTooLong }
        let line: [UInt8]
        do throws(SecretFile.Failure) { line = try SecretFile.readFirstLine(path) } catch {
            throw .unreadable(path: path, error)
        }
        guard !line.isEmpty else { throw .emptyPassword(path: path) }
        guard line.count <= 255 else { throw .passwordTooLong(path: path) }
        return ProxyCredentials(user: user, password: line)
    }

    private static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &out, &length, EVP_sha256(), nil) }
        return out
    }

    /// Same user and same digest.
    public static func == (a: ProxyCredentials, b: ProxyCredentials) -> Bool { a.user == b.user && a.digest == b.digest }
}

/// Why `--proxy-auth USER:PASSFILE` could not be used.
public enum ProxyCredentialsError: UserFacingError, Equatable {
    /// The value is not `USER:PASSFILE` (both parts non-empty).
    case notUserColonFile(String)
    /// The user name is over 255 bytes (RFC 1929's limit).
    case userTooLong
    /// The password file was refused (not yours, open to others, a link) or could not be read.
    case unreadable(path: String, SecretFile.Failure)
    /// The password file's first line is empty.
    case emptyPassword(path: String)
    /// The password is over 255 bytes (RFC 1929's limit).
    case passwordTooLong(path: String)

    /// One sentence: what is wrong with `--proxy-auth` and what to do.

    public var message: String {
        switch self {
        case .notUserColonFile(let text):
            return "--proxy-auth takes USER:PASSFILE (the password is PASSFILE's first line, never on the command line), not '\(text)'."
        case .userTooLong: return "--proxy-auth's user name is longer than 255 bytes, which SOCKS5 cannot carry; use a shorter one."
        case let .unreadable(path, .refused(problem)):
            return "--proxy-auth's password file \(path) \(problem.clause); make it yours and 0600 (`chmod 600 \(path)`)."
        case let .unreadable(path, .cannotOpen(reason)):
            return "--proxy-auth's password file \(path) cannot be read (\(reason)); give a file whose first line is the password."
        case let .unreadable(path, .tooManyOpenFiles(scope)):
            return TooManyOpenFiles(opening: "--proxy-auth's password file \(path)", scope: scope).message
        case .emptyPassword(let path): return "--proxy-auth's password file \(path) has an empty first line; put the password on it."
        case .passwordTooLong(let path): return "--proxy-auth's password in \(path) is longer than 255 bytes, which SOCKS5 cannot carry; use a shorter one."
        }
    }
}
