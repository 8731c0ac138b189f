/// Whether an app's UDP datagram may be fragmented on its way upstream, and so which path-MTU
/// discovery mode its upstream socket uses (tun-nat.md "MTU").
///
/// The TUN's MTU is large, so the app's kernel never learns the real path's MTU by itself. tv
/// acts as the router in front of that path: a datagram the app sent whole with "don't
/// fragment" (IPv4 DF; every unfragmented IPv6 datagram, since IPv6 routers never fragment) goes
/// out with `IP_MTU_DISCOVER` / `IPV6_MTU_DISCOVER` = `PMTUDISC_DO`; when it does not fit,
/// `send` fails with EMSGSIZE and the app gets ICMP "fragmentation needed" (RFC 1191) / "packet
/// too big" (RFC 4443 §3.2) with the MTU, as from a router. Its kernel then lowers its path MTU:
/// a socket in the default mode fragments the next large datagrams itself (they arrive in
/// fragments, tv reassembles them and may fragment them again upstream), a DO socket (QUIC) gets
/// EMSGSIZE at once. When the first hop carries the datagram but a router further out cannot, its
/// ICMP reaches the upstream socket's error queue (`IP_RECVERR`) and is passed on the same way
/// (`EngineLoop.udpErrorQueue`). Datagrams that arrived in fragments or without DF may be fragmented
/// upstream (`PMTUDISC_WANT`, the kernel's default).
public enum UDPPathMTU {
    /// True when the datagram must not be fragmented upstream (its socket uses `PMTUDISC_DO`).
    /// - Parameters:
    ///   - dontFragmentBit: the IPv4 header's DF bit (ignored for IPv6).
    ///   - reassembled: the datagram reached the TUN in fragments.
    public static func forbidsFragmentation(isIPv6: Bool, dontFragmentBit: Bool, reassembled: Bool) -> Bool {
        if reassembled { return false }
        return isIPv6 || dontFragmentBit
    }
}
