import LocalCA
import Proxy
#if canImport(Glibc)
import Glibc
#endif

extension PacketEndpoint {
    /// Calls `body` with the `sockaddr_in` / `sockaddr_in6` form.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        if address.isIPv6 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) { address.write(to: $0.baseAddress!) }
            return withUnsafePointer(to: &sin6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        withUnsafeMutableBytes(of: &sin.sin_addr) { address.write(to: $0.baseAddress!) }
        return withUnsafePointer(to: &sin) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }

    /// From a `sockaddr_storage` (accept, getsockname); IPv4-mapped IPv6 reads as IPv4.
    init?(storage: UnsafeRawPointer) {
        let family = Int32(storage.load(as: sa_family_t.self))
        if family == AF_INET {
            var sin = sockaddr_in()
            withUnsafeMutableBytes(of: &sin) { $0.copyMemory(from: UnsafeRawBufferPointer(start: storage, count: MemoryLayout<sockaddr_in>.size)) }
            let address = withUnsafeBytes(of: sin.sin_addr) { PacketAddress(reading: $0.baseAddress!, isIPv6: false) }
            self.init(address, UInt16(bigEndian: sin.sin_port))
        } else if family == AF_INET6 {
            var sin6 = sockaddr_in6()
            withUnsafeMutableBytes(of: &sin6) { $0.copyMemory(from: UnsafeRawBufferPointer(start: storage, count: MemoryLayout<sockaddr_in6>.size)) }
            var address = withUnsafeBytes(of: sin6.sin6_addr) { PacketAddress(reading: $0.baseAddress!, isIPv6: true) }
            if address.high == 0 && address.low >> 32 == 0xffff {
                address = PacketAddress(high: 0, low: address.low & 0xffff_ffff, isIPv6: false)
            }
            self.init(address, UInt16(bigEndian: sin6.sin6_port))
        } else {
            return nil
        }
    }

    /// The proxy's address type.
    var socketAddress: SocketAddress { SocketAddress(ip: IPAddress(bytes: address.bytes)!, port: port) }
    /// The flow record's endpoint type.
    var endpoint: Endpoint { Endpoint(address: address.description, port: port) }

    init(_ address: SocketAddress) {
        self.init(PacketAddress(bytes: address.ip.bytes)!, address.port)
    }
}

extension PacketAddress {
    var family: Int32 { isIPv6 ? AF_INET6 : AF_INET }

    /// Multicast (224.0.0.0/4, ff00::/8), limited broadcast or unspecified: never forwarded.
    var isUnforwardable: Bool {
        if isIPv6 { return high >> 56 == 0xff || (high == 0 && low == 0) }
        let v = UInt32(truncatingIfNeeded: low)
        return v >> 28 == 0xe || v == 0xffff_ffff || v == 0
    }
}
