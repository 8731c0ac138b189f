/// The policy routing of `--mode tun` (tun-nat.md shape B), per family:
///
///     ip route add default dev TUN table T
///     ip route add SUBNET dev TUN table T    # the TUN's own network (10.77.0.0/24)
///     ip route append ROUTE table T          # each of main's other routes (`MainTableRoutes`)
///     ip rule add not fwmark M table T pref 32765
///
/// Unmarked traffic looks up T only: the LAN and connected networks of main (as they were when
/// the session started) go as main sends them, everything else into the TUN. tv's own upstream
/// sockets carry SO_MARK M and keep using main, so whatever the kernel caches for them there (a
/// path MTU, a redirect) never reaches the host's other traffic (`MainTableRoutes` says why
/// main is not looked up with `suppress_prefixlength 0`, wg-quick's scheme). A network added to
/// main later is not in T: its traffic goes into the TUN, and tv reaches it through main.
/// A pure value: the commands to apply, to undo, and to clear what a crashed run left (same
/// table and priority, so nothing else is touched).
public struct HostRoutingPlan: Sendable, Equatable {
    public var device: String
    public var table: UInt32
    public var mark: UInt32
    /// Priority of the rule sending unmarked traffic to `table`.
    public var rulePriority: UInt32 = 32_765
    public var ipv6: Bool
    /// The TUN's own networks (`10.77.0.0/24`, `fd77::/64`), routed to it in `table` as main
    /// routes them: a copied route covering them (`10.0.0.0/8 via` a LAN router) would otherwise
    /// send the listener's answers to the TUN's addresses out to the LAN. nil: not routed apart.
    public var subnet4: String?
    public var subnet6: String?
    /// Main's routes but its default ones, per family (`MainTableRoutes.copies`).
    public var mainRoutes4: [MainTableRoutes.Route] = []
    public var mainRoutes6: [MainTableRoutes.Route] = []

    /// One `ip` command of `apply`.
    public struct Step: Sendable, Equatable {
        public var arguments: [String]
        /// The destination of the main route this step copies, nil for the TUN's route and the
        /// rule. A copy the kernel refuses leaves its traffic to the TUN (tv reaches it through
        /// main), never around it, so the session goes on and says so.
        public var copyOf: String?

        public init(arguments: [String], copyOf: String? = nil) {
            self.arguments = arguments
            self.copyOf = copyOf
        }
    }

    public init(device: String, table: UInt32, mark: UInt32, ipv6: Bool) {
        self.device = device
        self.table = table
        self.mark = mark
        self.ipv6 = ipv6
    }

    var families: [String] { ipv6 ? ["-4", "-6"] : ["-4"] }
    public var markText: String { "0x" + String(mark, radix: 16) }

    /// The `ip` commands that route everything unmarked into the TUN, per family: the table
    /// first (the TUN's default route and network, main's other routes), its rule last, so nothing is sent
    /// to a table still being filled.
    public var apply: [Step] {
        families.flatMap { family in
            [Step(arguments: [family, "route", "add", "default", "dev", device, "table", String(table)])]
            + ((family == "-4" ? subnet4 : subnet6).map { [Step(arguments: [family, "route", "add", $0, "dev", device, "table", String(table)])] } ?? [])
            + (family == "-4" ? mainRoutes4 : mainRoutes6).map {
                Step(arguments: [family, "route", "append"] + $0.arguments(table: String(table)), copyOf: $0.destination)
            }
            + [Step(arguments: [family, "rule", "add", "not", "fwmark", markText, "table", String(table), "pref", String(rulePriority)])]
        }
    }

    /// `ip` argument lists that undo `apply` (each may fail harmlessly if already gone): the
    /// rule first, then the table.
    public var undo: [[String]] {
        families.flatMap { family in [
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
    public var applyLines: [String] { apply.map { (["ip"] + $0.arguments).joined(separator: " ") } }
}
