import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// The destination a client meant before an nftables/iptables `REDIRECT` (or `DNAT`) rule sent
/// its connection to our listener: netfilter's conntrack keeps the original tuple and answers
/// `getsockopt(SOL_IP, SO_ORIGINAL_DST)` (IPv4) / `getsockopt(SOL_IPV6, IP6T_SO_ORIGINAL_DST)`.
enum TransparentDestination {
    /// The original destination of the accepted connection `fd`, or nil when there is none that
    /// we may use: no conntrack entry (ENOENT: the connection was not NATed), or the original
    /// destination is the socket's own local address (a client that connected straight to tv: relaying
    /// it would connect to ourselves in a loop).
    static func read(_ fd: Int32) -> SocketAddress? {
        guard let local = Socket.localAddress(fd) else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc: Int32
        if local.ip.isIPv4 {
            rc = tv_original_dst(fd, &storage, &length)
        } else {
            rc = tv_original_dst6(fd, &storage, &length)
        }
        guard rc == 0, let original = withUnsafeBytes(of: &storage, { SocketAddress(storage: $0.baseAddress!) }) else { return nil }
        guard original != local else { return nil }
        return original
    }
}
