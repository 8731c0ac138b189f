import CTVShims
import Proxy
#if canImport(Glibc)
import Glibc
#endif
import FlowTerms

/// The listening sockets the NAT redirects TCP to: one per family, bound to the TUN's own
/// address (`C`) on a port the kernel picks, bound to the TUN device (SO_BINDTODEVICE) so that
/// nothing arriving on another interface can reach it (tun-nat.md "Listener exposure").
/// Create them on the thread that is in the TUN's namespace.
public struct TunnelListeners: Sendable {
    public var v4: (fd: Int32, port: UInt16)
    public var v6: (fd: Int32, port: UInt16)?

    /// - Throws: `TunnelError.cannotListen`.
    public static func open(plan: TunnelAddressPlan) throws -> TunnelListeners {
        let v4 = try listen(PacketEndpoint(plan.address4, 0), device: plan.deviceName)
        var v6: (fd: Int32, port: UInt16)?
        if let address6 = plan.address6 {
            do { v6 = try listen(PacketEndpoint(address6, 0), device: plan.deviceName) } catch {
                Glibc.close(v4.fd)
                throw error
            }
        }
        return TunnelListeners(v4: v4, v6: v6)
    }

    /// Closes both.
    public func close() {
        Glibc.close(v4.fd)
        if let v6 { Glibc.close(v6.fd) }
    }

    static func listen(_ endpoint: PacketEndpoint, device: String) throws -> (fd: Int32, port: UInt16) {
        let family = endpoint.address.family
        let fd = tv_socket_stream(family)
        guard fd >= 0 else { throw TunnelError.cannotListen(reason: Errno(errno).phrase) }
        _ = tv_set_reuse(fd, 0)
        if family == AF_INET6 { _ = tv_set_v6only(fd, 1) }
        // The address may still be settling (IPv6); FREEBIND lets the bind happen regardless.
        _ = tv_set_freebind(fd, family)
        let bindDevice = tv_bind_to_device(fd, device)
        guard bindDevice == 0 else {
            Glibc.close(fd)
            throw TunnelError.cannotListen(reason: "SO_BINDTODEVICE \(device): \(Errno(-bindDevice).phrase)")
        }
        let rc = endpoint.socketAddress.withSockAddr { bind(fd, $0, $1) }
        guard rc == 0, Glibc.listen(fd, 4096) == 0 else {
            let err = errno
            Glibc.close(fd)
            throw TunnelError.cannotListen(reason: "\(endpoint): \(Errno(err).phrase)")
        }
        // Accepted sockets start in delayed-ACK mode: the ACK of the app's first request rides on
        // the answer instead of crossing the TUN alone (one packet fewer each way per connection
        // through the engine; bulk transfers still get an ACK every second segment).
        _ = tv_set_quickack(fd, 0)
        return (fd, Socket.localAddress(fd)?.port ?? 0)
    }
}
