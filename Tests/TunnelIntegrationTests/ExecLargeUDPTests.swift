import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 18, "a large UDP datagram must arrive as it would without tv": at the default settings
/// the TUN's MTU is the host's route out, so a program's one unconnected send of 3,000 bytes is
/// fragmented by its own kernel (as without tv), reassembled by tv, sent on, and arrives.
@Suite("tv exec: one large UDP datagram, sent once, arrives (issue 18)", .serialized, .enabled(if: LabRequirements.met, "needs root, /dev/net/tun, nginx, dnsmasq"))
final class ExecLargeUDPTests {
    let lab: OriginLab

    init() throws { lab = try OriginLab() }
    deinit { lab.close() }

    /// Sends 3,000 bytes once from an unconnected socket (no retry) per family; the origin's echo
    /// sends them back, so an answer of 3,000 bytes means the receiver got all of them. First it
    /// prints the route MTU its kernel sees through the TUN.
    static let client = """
        import socket
        out = []
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); probe.connect(("10.203.0.2", 7007))
        out.append(str(probe.getsockopt(socket.IPPROTO_IP, 14)))      # IP_MTU: the TUN's
        for fam, addr in ((socket.AF_INET, "10.203.0.2"), (socket.AF_INET6, "fd03::2")):
            s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(5)
            data = bytes((i * 7 + 3) & 255 for i in range(3000))
            s.sendto(data, (addr, 7007))
            try:
                got, _ = s.recvfrom(70000); out.append(str(len(got)) if got == data else "different")
            except OSError as e:
                out.append(type(e).__name__)
        print(" ".join(out))
        """

    @Test("3,000 bytes from an unconnected socket, sent once, IPv4 and IPv6, at the default settings: the TUN takes the route out's MTU (1500, then 1400 when the link is 1400), and all 3,000 bytes arrive")
    func oneLargeDatagramArrives() throws {
        let client = try lab.script("large-udp.py", Self.client)
        // Without tv, from the host stand-in: it arrives (the kernel fragments for the 1,500 link).
        let direct = lab.inHost(["python3", client])
        #expect(direct.out == "1500 3000 3000\n", "\(direct)")
        // A default route out through the lab's link, as a real host has.
        try Sh.must(["ip", "-n", lab.host, "route", "add", "default", "via", "10.203.0.2"])
        try Sh.must(["ip", "-n", lab.host, "-6", "route", "add", "default", "via", "fd03::2"])
        defer {
            _ = Sh.run(["ip", "-n", lab.host, "route", "del", "default"])
            _ = Sh.run(["ip", "-n", lab.host, "-6", "route", "del", "default"])
        }
        let r = lab.exec([], ["python3", client])
        #expect(r.status == 0 && r.out == "1500 3000 3000\n", "\(r)")
        // The link out at 1400: the TUN follows; the datagrams came in fragments, were reassembled,
        // and tv signalled no path MTU (the counters tv exec prints at exit).
        // Both ends of the link: a veth drops frames larger than its own MTU.
        for (ns, link) in [(lab.host, "h-\(lab.tag)"), (lab.origin, "o-\(lab.tag)")] { try Sh.must(["ip", "-n", ns, "link", "set", link, "mtu", "1400"]) }
        defer { for (ns, link) in [(lab.host, "h-\(lab.tag)"), (lab.origin, "o-\(lab.tag)")] { _ = Sh.run(["ip", "-n", ns, "link", "set", link, "mtu", "1500"]) } }
        let smaller = lab.tv(["exec", "--yes", "--", "python3", client])
        #expect(smaller.status == 0 && smaller.out == "1400 3000 3000\n", "\(smaller)")
        #expect(smaller.err.contains("2 datagrams reassembled") && !smaller.err.contains("path-MTU signal"), "\(smaller.err)")
    }
}
