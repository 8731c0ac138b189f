import Proxy
import Testing
@testable import TVCore

/// The REDIRECT rules `tv run --mode transparent` prints: of the listener's family, and for both
/// when it listens on every IPv6 address (which takes IPv4 too).
struct TransparentRulesTests {
    @Test("a listener on [::] gets rules for both families (a trial's IPv4 traffic passed by IPv6-only rules, unrecorded); a specific IPv6 address its family alone; IPv4 its own")
    func familiesFollowTheListener() {
        let both = TransparentRules.lines(listen: Endpoint(address: "::", port: 8443), marked: false)
        #expect(both == [
            "Send traffic here with a REDIRECT rule (tv changes no rules itself). For machines that use this one as their gateway:",
            "  nft add table inet tv",
            "  nft add chain inet tv prerouting '{ type nat hook prerouting priority dstnat; }'",
            "  nft add rule inet tv prerouting iifname != \"lo\" tcp dport '{ 80, 443 }' redirect to :8443",
            "  or: iptables -t nat -A PREROUTING ! -i lo -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports 8443, and ip6tables -t nat -A PREROUTING ! -i lo -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports 8443",
            "Listen on an address the redirected traffic can reach (--listen [::]:8443 for a gateway). Remove the rules with: nft delete table inet tv",
        ])
        let six = TransparentRules.lines(listen: Endpoint(address: "::1", port: 8443), marked: true)
        #expect(six[1] == "  nft add table ip6 tv" && six[4].hasPrefix("  or: ip6tables -t nat -A PREROUTING") && !six[4].contains(", and "))
        #expect(six[6] == "  nft add chain ip6 tv output '{ type nat hook output priority -100; }'")
        #expect(six[8] == "  or: ip6tables -t nat -A OUTPUT -m mark ! --mark 0x7476 -p tcp -m multiport --dports 80,443 -j REDIRECT --to-ports 8443")
        #expect(six.dropLast().last == "Listen on an address the redirected traffic can reach (--listen [::]:8443 for a gateway). Remove the rules with: nft delete table ip6 tv")
        #expect(six.last == "These rules send IPv6 only: IPv4 connections pass tv by, unrecorded; listen on [::]:8443 to take both (rules for both families then follow).")
        let four = TransparentRules.lines(listen: Endpoint(address: "127.0.0.1", port: 8443), marked: false)
        #expect(four[1] == "  nft add table ip tv" && four[4].hasPrefix("  or: iptables -t nat"))
        #expect(four.dropLast().last == "Listen on an address the redirected traffic can reach (--listen 0.0.0.0:8443 for a gateway). Remove the rules with: nft delete table ip tv")
        // An IPv4 listener's rules say IPv6 passes tv by (a trial's `curl -6` went around them).
        #expect(four.last == "These rules send IPv4 only: IPv6 connections pass tv by, unrecorded; listen on [::]:8443 to take both (rules for both families then follow).")
    }
}
