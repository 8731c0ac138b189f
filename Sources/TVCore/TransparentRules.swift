import CTVShims
import Proxy
#if canImport(Glibc)
import Glibc
#endif

/// The nftables and iptables lines that send connections to a `--mode transparent` listener
/// (REDIRECT keeps the original destination for SO_ORIGINAL_DST). Pure text; tv applies none.
public enum TransparentRules {
    /// The SO_MARK tv puts on its own upstream sockets in transparent mode ("tv" in ASCII), so an
    /// OUTPUT-chain rule can leave them alone instead of sending them back to tv.
    public static let mark: UInt32 = 0x7476

    /// Whether this process may set SO_MARK (CAP_NET_ADMIN).
    public static var canMark: Bool {
        let fd = tv_socket_stream(AF_INET)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return tv_set_mark(fd, mark) == 0
    }

    /// What to type: connections from other machines (PREROUTING, tv as their gateway) and, when
    /// tv marks its own sockets, this machine's own (OUTPUT). A listener on every IPv6 address
    /// (`[::]`) takes IPv4 too, so its rules are for both families (nftables' `inet`, or
    /// iptables and ip6tables): IPv6 ones alone let IPv4 traffic pass tv by, unrecorded (a trial).
    public static func lines(listen: Endpoint, marked: Bool) -> [String] {
        let port = listen.port
        let v6 = listen.address.contains(":")
        let bothFamilies = v6 && listen.address.allSatisfy { $0 == ":" || $0 == "0" }
        let family = bothFamilies ? "inet" : v6 ? "ip6" : "ip"
        let tables = bothFamilies ? ["iptables", "ip6tables"] : [v6 ? "ip6tables" : "iptables"]
        func either(_ rule: String) -> String { "  or: " + tables.map { "\($0) \(rule)" }.joined(separator: ", and ") }
        let markHex = "0x" + String(mark, radix: 16)
        var out = [
            "Send traffic here with a REDIRECT rule (tv changes no rules itself). For machines that use this one as their gateway:",
            "  nft add table \(family) tv",
            "  nft add chain \(family) tv prerouting '{ type nat hook prerouting priority dstnat; }'",
            "  nft add rule \(family) tv prerouting iifname != \"lo\" tcp dport '{ 80, 443 }' redirect to :\(port)",
            either("-t nat -A PREROUTING ! -i lo -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports \(port)"),
        ]
        if marked {
            out += [
                "For this machine's own connections (tv's own are marked \(markHex) and skipped):",
                "  nft add chain \(family) tv output '{ type nat hook output priority -100; }'",
                "  nft add rule \(family) tv output meta mark != \(markHex) tcp dport '{ 80, 443 }' redirect to :\(port)",
                either("-t nat -A OUTPUT -m mark ! --mark \(markHex) -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports \(port)"),
            ]
        }
        let gateway = v6 ? "--listen [::]:\(port)" : "--listen 0.0.0.0:\(port)"
        out.append("Listen on an address the redirected traffic can reach (\(gateway) for a gateway). Remove the rules with: nft delete table \(family) tv")
        // One family's listener takes that family only: the other's connections pass tv by,
        // unrecorded, and nothing said so (a tun trial's `curl -6` went around the IPv4 rules).
        if !bothFamilies {
            out.append("These rules send \(v6 ? "IPv6" : "IPv4") only: \(v6 ? "IPv4" : "IPv6") connections pass tv by, unrecorded; listen on [::]:\(port) to take both (rules for both families then follow).")
        }
        return out
    }
}
