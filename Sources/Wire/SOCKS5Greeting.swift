/// The SOCKS5 client's first message (RFC 1928 §3): `VER(5) NMETHODS METHODS…`, and the
/// server's method-selection answer `VER(5) METHOD`.
public struct SOCKS5Greeting: Sendable, Hashable {
    /// The authentication methods offered, in order: 0x00 no authentication, 0x01 GSSAPI,
    /// 0x02 username/password, …
    public var methods: [UInt8]

    /// Creates a greeting from its method list.
    public init(methods: [UInt8]) {
        self.methods = methods
    }

    /// Method 0x00, "NO AUTHENTICATION REQUIRED".
    public static let noAuthentication: UInt8 = 0x00
    /// Method 0x02, "USERNAME/PASSWORD" (RFC 1929).
    public static let usernamePasswordMethod: UInt8 = 0x02
    /// The answer selecting username/password: `05 02`.
    public static let passwordReply: [UInt8] = [5, usernamePasswordMethod]
    /// RFC 1929 §2's answer to accepted credentials: `01 00` (version 1, status success).
    public static let credentialsAccepted: [UInt8] = [1, 0]
    /// RFC 1929 §2's answer to refused credentials: `01 01` (any non-zero status); then close.
    public static let credentialsRefused: [UInt8] = [1, 1]
    /// Method 0xFF, "NO ACCEPTABLE METHODS".
    public static let noAcceptableMethods: UInt8 = 0xFF

    /// Whether the client offers method 0x00, the only one this proxy accepts.
    public var offersNoAuthentication: Bool { methods.contains(Self.noAuthentication) }

    /// The answer selecting no authentication: `05 00`.
    public static let acceptReply: [UInt8] = [5, noAuthentication]
    /// The answer refusing every offered method: `05 FF`; the client then closes (RFC 1928 §3).
    public static let refuseReply: [UInt8] = [5, noAcceptableMethods]
}
