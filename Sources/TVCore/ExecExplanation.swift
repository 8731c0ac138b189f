import TVHome
import Tunnel

/// What `tv exec` says before it changes anything (the seed's "explain first" rule for the VPN
/// permission): what it makes, what it changes, what stays untouched, how it ends.
public struct ExecExplanation: Sendable, Equatable {
    public var command: [String]
    public var plan: TunnelAddressPlan
    public var mtu: Int?

    public init(command: [String], plan: TunnelAddressPlan, mtu: Int?) {
        self.command = command
        self.plan = plan
        self.mtu = mtu
    }

    public var lines: [String] {
        let name = command.first ?? "the command"
        // Each nameserver the file names (the IPv6 one was left out: a trial).
        let nameservers = ([plan.dns4] + (plan.address6 == nil ? [] : [plan.dns6])).map { "\"nameserver \($0)\"" }
        return [
            // Quoted as a shell would take it: `sh -c read x; echo got:$x` hid where the words were (a trial).
            "tv exec will run \(command.map(ShellWord.quote).joined(separator: " ")) with all its traffic through tv:",
            "  • a new, private network namespace with a TUN device \(plan.deviceName) (\(plan.cidr4)\(plan.cidr6.map { ", " + $0 } ?? "")) as its default route, MTU \(mtu ?? plan.mtu);",
            "  • its TCP goes through tv's proxy (inspected only as `tv inspect` / --inspect say), its UDP and DNS are forwarded from this host; each connection is recorded;",
            "  • inside, /etc/resolv.conf reads \(Units.listed(nameservers)) (a private mount namespace: this host's file is untouched);",
            "  • proxy variables (http_proxy, …) are removed from \(name)'s environment.",
            "Nothing else on this host changes: no routes, rules or interfaces outside. When \(name) exits, everything is removed and its exit code is tv's.",
        ]
    }
}
