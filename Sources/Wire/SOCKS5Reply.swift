/// The SOCKS5 server's reply to a request (RFC 1928 §6):
/// `VER(5) REP RSV(0) ATYP BND.ADDR BND.PORT`.
public struct SOCKS5Reply: Sendable, Hashable {
    /// The REP field (RFC 1928 §6).
    public enum Code: UInt8, Sendable, Hashable, CaseIterable {
        /// 0x00 succeeded.
        case succeeded = 0x00
        /// 0x01 general SOCKS server failure.
        case generalFailure = 0x01
        /// 0x02 connection not allowed by ruleset.
        case connectionNotAllowed = 0x02
        /// 0x03 network unreachable.
        case networkUnreachable = 0x03
        /// 0x04 host unreachable.
        case hostUnreachable = 0x04
        /// 0x05 connection refused.
        case connectionRefused = 0x05
        /// 0x06 TTL expired.
        case ttlExpired = 0x06
        /// 0x07 command not supported.
        case commandNotSupported = 0x07
        /// 0x08 address type not supported.
        case addressTypeNotSupported = 0x08
    }

    /// REP.
    public var code: Code
    /// BND.ADDR: the address the proxy connected from (0.0.0.0 when it does not say).
    public var boundAddress: SOCKS5Address
    /// BND.PORT, host byte order (0 when it does not say).
    public var boundPort: UInt16

    /// Creates a reply; the bound address defaults to 0.0.0.0 port 0.
    public init(_ code: Code, boundAddress: SOCKS5Address = .ipv4([0, 0, 0, 0]), boundPort: UInt16 = 0) {
        self.code = code
        self.boundAddress = boundAddress
        self.boundPort = boundPort
    }

    /// The reply bytes to send, e.g. `05 00 00 01 7F 00 00 01 D4 31` for success bound to
    /// 127.0.0.1:54321, or `05 05 00 01 00 00 00 00 00 00` for connection refused.
    public var encoded: [UInt8] {
        [5, code.rawValue, 0] + boundAddress.encoded + [UInt8(boundPort >> 8), UInt8(boundPort & 0xFF)]
    }

    /// Success bytes with the proxy's bound address and port.
    public static func success(boundAddress: SOCKS5Address, boundPort: UInt16) -> [UInt8] {
        SOCKS5Reply(.succeeded, boundAddress: boundAddress, boundPort: boundPort).encoded
    }

    /// Failure bytes for `code`, bound address 0.0.0.0:0.
    public static func failure(_ code: Code) -> [UInt8] {
        SOCKS5Reply(code).encoded
    }
}
