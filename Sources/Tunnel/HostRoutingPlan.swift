/// The policy routing of `--mode tun` (tun-nat.md shape B, wg-quick's scheme), per family:
///
///     ip route add default dev TUN table T
///     ip rule add not fwmark M table T pref 32765        # unmarked traffic → the TUN
///     ip rule add table main suppress_prefixlength 0 pref 32764   # …except connected/LAN routes
///
/// tv's own upstream sockets carry SO_MARK M and so keep using the main table. A pure value:
/// the commands to apply, to undo, and to clear what a crashed run left (same table and
/// priorities, so nothing else is touched).
public struct HostRoutingPlan: Sendable, Equatable {
    public var device: String
    public var table: UInt32
    public var mark: UInt32
    /// Priorities of the two rules (the `not fwmark` rule, then the suppressing one before it).
    public var rulePriority: UInt32 = 32_765
    public var suppressPriority: UInt32 = 32_764
    public var ipv6: Bool

    public init(device: String, table: UInt32, mark: UInt32, ipv6: Bool) {
        self.device = device
        self.table = table
        self.mark = mark
        self.ipv6 = ipv6
    }

    var families: [String] { ipv6 ? ["-4", "-6"] : ["-4"] }
    public var markText: String { "0x" + String(mark, radix: 16) }

    /// `ip` argument lists that route everything unmarked into the TUN.
    public var apply: [[String]] {
        families.flatMap { family in [
            [family, "route", "add", "default", "dev", device, "table", String(table)],
            [family, "rule", "add", "not", "fwmark", markText, "table", String(table), "pref", String(rulePriority)],
            [family, "rule", "add", "table", "main", "suppress_prefixlength", "0", "pref", String(suppressPriority)],
        ] }
    }

    /// `ip` argument lists that undo `apply` (each may fail harmlessly if already gone).
    public var undo: [[String]] {
        families.flatMap { family in [
            [family, "rule", "del", "table", "main", "suppress_prefixlength", "0", "pref", String(suppressPriority)],
            [family, "rule", "del", "not", "fwmark", markText, "table", String(table), "pref", String(rulePriority)],
            [family, "route", "flush", "table", String(table)],
        ] }
    }

    /// Whether `listing` (`ip rule show`'s text, one family) holds this plan's rule that sends
    /// unmarked traffic to its table (`32765:	not from all fwmark 0x7476 lookup 29814`). Pure.
    public func isApplied(in listing: String) -> Bool {
        listing.split(whereSeparator: \.isNewline).contains { line in
            line.hasPrefix("\(rulePriority):") && line.contains("fwmark \(markText)") && line.contains("lookup \(table)")
        }
    }

    /// The commands as typed, for `--dry-run` and the banner.
    public var applyLines: [String] { apply.map { (["ip"] + $0).joined(separator: " ") } }
}
