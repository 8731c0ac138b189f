/// A SOCKS5 request (RFC 1928 §4): `VER(5) CMD RSV ATYP DST.ADDR DST.PORT`.
public struct SOCKS5Request: Sendable, Hashable {
    /// CMD 0x01, CONNECT: the only command this proxy serves.
    public static let connectCommand: UInt8 = 0x01
    /// CMD 0x02, BIND.
    public static let bindCommand: UInt8 = 0x02
    /// CMD 0x03, UDP ASSOCIATE.
    public static let udpAssociateCommand: UInt8 = 0x03

    /// The CMD byte; `SOCKS5HandshakeParser` only returns requests whose command is CONNECT.
    public var command: UInt8
    /// DST.ADDR.
    public var destination: SOCKS5Address
    /// DST.PORT, host byte order.
    public var port: UInt16

    /// Creates a request from its fields.
    public init(command: UInt8 = SOCKS5Request.connectCommand, destination: SOCKS5Address, port: UInt16) {
        self.command = command
        self.destination = destination
        self.port = port
    }

    /// The destination as a host and port (an IPv6 host without brackets).
    public var hostPort: HostPort { HostPort(host: destination.description, port: port) }

    /// The wire form of this request.
    public var encoded: [UInt8] { [5, command, 0] + destination.encoded + [UInt8(port >> 8), UInt8(port & 0xFF)] }
}
