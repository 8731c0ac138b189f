import CTVShims
import LocalCA
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// The TUN's default MTU: the MTU of this host's real way out, so a program under `tv exec` or
/// `--mode tun` fragments (or is refused) exactly as it would without tv. A UDP datagram larger
/// than the egress link then reaches the TUN in fragments from the program's own kernel, which tv
/// reassembles and sends on with fragmentation allowed, as the program's kernel would have sent
/// it; a socket that forbids fragmentation (QUIC) gets EMSGSIZE locally, as without tv, and a
/// smaller MTU further out still comes back as ICMP (`UDPPathMTU`). TCP keeps its 64 KB
/// super-packets at any MTU (TSO on the TUN, `TUNDevice.wantedOffloads`).
public enum EgressMTU {
    /// Used when no route out is known (no default route, or the probes fail).
    public static let fallback = 1_500

    /// The MTU for the TUN from the routes' MTUs per family (nil: no route out in that family):
    /// the smaller of the two, `fallback` when neither is known, never below 1,280 when IPv6 runs
    /// on the TUN (RFC 8200 §5; the kernel turns IPv6 off on a smaller link) nor above 65,535.
    public static func choose(v4: Int?, v6: Int?, ipv6OnTUN: Bool) -> Int {
        let known = [v4, v6].compactMap { $0 }.filter { $0 > 0 }
        let mtu = known.min() ?? fallback
        return min(65_535, max(ipv6OnTUN ? 1_280 : 576, mtu))
    }

    /// Asks the kernel for the route MTU towards the internet in each family: a UDP socket
    /// (marked with `mark`, so `--mode tun`'s own routing is bypassed as tv's sockets bypass it)
    /// connected to a documentation address (RFC 5737, RFC 3849; connecting UDP sends nothing),
    /// then `IP_MTU` / `IPV6_MTU`.
    public static func current(mark: UInt32? = nil, ipv6OnTUN: Bool = true) -> Int {
        choose(v4: routeMTU(AF_INET, "192.0.2.1", mark: mark), v6: routeMTU(AF_INET6, "2001:db8::1", mark: mark), ipv6OnTUN: ipv6OnTUN)
    }

    /// The route MTU towards `address` in `family`; nil when there is no route (ENETUNREACH).
    static func routeMTU(_ family: Int32, _ address: String, mark: UInt32?) -> Int? {
        guard let ip = IPAddress(address) else { return nil }
        let fd = tv_socket_dgram(family)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Marking needs CAP_NET_ADMIN: without it (`--dry-run` as a user, before any of tv's rules
        // exist) the unmarked route is the same one, so it is asked unmarked (a trial's dry run
        // said 1500 as a user where root saw the route's 1400).
        if let mark { _ = tv_set_mark(fd, mark) }
        let rc = SocketAddress(ip: ip, port: 9).withSockAddr { Glibc.connect(fd, $0, $1) }
        guard rc == 0 else { return nil }
        let mtu = tv_path_mtu(fd, family)
        return mtu > 0 ? Int(mtu) : nil
    }
}
