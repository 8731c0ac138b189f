import LocalCA
#if canImport(Glibc)
import Glibc
#endif

/// A numeric socket address (IPv4 or IPv6 and a port).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public let ip: IPAddress
    public let port: UInt16

    public init(ip: IPAddress, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// From a numeric host (`127.0.0.1`, `::1`, `[::1]`); nil for a name.
    public init?(numericHost: String, port: UInt16) {
        guard let ip = IPAddress(numericHost) else { return nil }
        self.init(ip: ip, port: port)
    }

    /// AF_INET or AF_INET6.
    public var family: Int32 { ip.isIPv4 ? AF_INET : AF_INET6 }

    /// Calls `body` with the `sockaddr` form.
    public func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        if ip.isIPv4 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin.sin_addr) { $0.copyBytes(from: ip.bytes) }
            return withUnsafePointer(to: &sin) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        var sin6 = sockaddr_in6()
        sin6.sin6_family = sa_family_t(AF_INET6)
        sin6.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: ip.bytes) }
        return withUnsafePointer(to: &sin6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
    }

    /// Reads a `sockaddr_storage` filled by accept/getsockname/getaddrinfo.
    public init?(storage: UnsafeRawPointer) {
        let family = Int32(storage.load(as: sa_family_t.self))
        if family == AF_INET {
            let sin = storage.load(as: sockaddr_in.self)
            let bytes = withUnsafeBytes(of: sin.sin_addr) { Array($0) }
            self.init(ip: IPAddress(bytes: bytes)!, port: UInt16(bigEndian: sin.sin_port))
        } else if family == AF_INET6 {
            let sin6 = storage.load(as: sockaddr_in6.self)
            let bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
            // An IPv4-mapped address (::ffff:a.b.c.d) reads as IPv4.
            self.init(ip: IPAddress(bytes: bytes)!.unmapped, port: UInt16(bigEndian: sin6.sin6_port))
        } else {
            return nil
        }
    }

    public var endpoint: Endpoint { Endpoint(address: ip.description, port: port) }
    public var description: String { endpoint.description }
}
