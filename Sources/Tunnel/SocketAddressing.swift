import LocalCA
import Proxy
#if canImport(Glibc)
import Glibc
#endif

extension PacketEndpoint {
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
