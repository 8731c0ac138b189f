import Foundation

/// The policy routing of `--mode tun` (tun-nat.md shape B), per family, rules in this order:
///
///     ip rule add table main suppress_prefixlength 0 suppress_ifgroup T pref 32763   # main's specific routes
///     ip rule add fwmark M table U pref 32764                     # tv's own sockets: a copy of main's default routes
///     ip rule add ipproto tcp sport 22 table U pref 32764         # this host's servers' replies (`ServerReplyPorts`)
///     ip rule add not fwmark M table T pref 32765                 # everything else unmarked: the TUN
///     ip route add default dev TUN table T
///     ip route append DEFAULT table U                             # each of main's default routes (`MainTableRoutes`)
///     ip route append unreachable default metric 4294967295 table U
///
/// Unmarked traffic sees main's specific routes as they change (a LAN added or a link flapped
/// during the session goes on as main routes it), and never main's default route. tv's own
/// sockets (SO_MARK M) leave through a copy of main's default routes in table U, kept in step
/// with main (`MainDefaultRouteWatcher`), so what the kernel caches for them (an ICMPv6 Packet
/// Too Big's path MTU, a redirect: a /128 exception under the route they used) hangs off U's
/// routes, where no unmarked lookup goes. With wg-quick's scheme (tv's first, marked sockets on
/// main's default) such an exception was a /128 result `suppress_prefixlength 0` keeps: the
/// host's other traffic to that address left directly, unseen, for 10 minutes (a trial). Those
/// cached before the session are flushed at its start (`ip -6 route flush cache`). The TUN's
/// interface group is T (set with the device), and main's routes through it are suppressed too:
/// a route in main onto the TUN (one whose gateway only the TUN's default route reached, one a
/// user put there) no longer takes tv's own sockets back into it, a new flow each pass (a trial:
/// 17,000 failed flows in 2 s; one datagram filled the UDP table). When main has no default
/// route, U's last one (unreachable, the lowest priority) fails tv's connections at once rather
/// than letting them fall through to main, whose default may lead into the TUN.
/// A pure value: the commands to apply, to undo, and to clear what a crashed run left (the same
/// tables and priorities, so nothing else is touched).
public struct HostRoutingPlan: Sendable, Equatable {
    public var device: String
    /// The table holding the TUN's default route (T); `table + 1` holds the copies (U).
    public var table: UInt32
    public var mark: UInt32
    /// Priorities of the three rules: main without its default routes, the marked sockets' copy,
    /// the TUN.
    public var suppressPriority: UInt32 = 32_763
    public var markedPriority: UInt32 = 32_764
    public var rulePriority: UInt32 = 32_765
    public var ipv6: Bool
    /// Main's default routes, per family (`MainTableRoutes.copies(json:defaults:)`).
    public var defaults4: [MainTableRoutes.Route] = []
    public var defaults6: [MainTableRoutes.Route] = []
    /// This host's servers, whose replies keep main's default routes (`ServerReplyPorts`).
    public var serverPorts = ServerReplyPorts()

    /// One `ip` command of `apply`.
    public struct Step: Sendable, Equatable {
        public var arguments: [String]
        /// What a step the kernel may refuse is (the session goes on without it); nil for the
        /// TUN's route and the three rules, which must be made.
        public var mayFail: Optional?

        /// The steps a session can do without.
        public enum Optional: Sendable, Equatable {
            /// A copy of one of main's routes to `destination` (without it, tv's sockets take
            /// main's default route itself: they still reach everything).
            case copy(destination: String)
            /// U's last resort (`HostRoutingPlan.lastResort`).
            case lastResort
            /// The flush of IPv6 routes cached before the session.
            case cacheFlush
            /// A server-reply rule (`ServerReplyPorts`): without it, that server's replies to
            /// clients beyond the LAN go into the TUN.
            case serverReplies
        }

        public init(arguments: [String], mayFail: Optional? = nil) {
            self.arguments = arguments
            self.mayFail = mayFail
        }
    }

    public init(device: String, table: UInt32, mark: UInt32, ipv6: Bool) {
        self.device = device
        self.table = table
        self.mark = mark
        self.ipv6 = ipv6
    }

    public var families: [String] { ipv6 ? ["-4", "-6"] : ["-4"] }
    /// "IPv4" for `-4`, "IPv6" for `-6`, as messages name a family.
    public static func familyName(_ family: String) -> String { family == "-6" ? "IPv6" : "IPv4" }
    public var markText: String { "0x" + String(mark, radix: 16) }
    /// Table U: the marked sockets' copy of main's default routes.
    public var copyTable: UInt32 { table &+ 1 }

    /// The `ip` commands that route everything unmarked into the TUN, per family: the tables
    /// first, the rule into the TUN last, so nothing is sent to a table still being filled.
    public var apply: [Step] {
        families.flatMap { family -> [Step] in
            var steps: [Step] = family == "-6" ? [Step(arguments: ["-6", "route", "flush", "cache"], mayFail: .cacheFlush)] : []
            steps.append(Step(arguments: [family, "route", "add", "default", "dev", device, "table", String(table)]))
            steps += copySteps(family: family)
            let rules = ruleAdditions(family: family)
            steps += rules.dropLast().map { Step(arguments: $0) }
            steps += serverRules(family: family, serverPorts).map { Step(arguments: $0, mayFail: .serverReplies) }
            steps.append(Step(arguments: rules[rules.count - 1]))
            return steps
        }
    }

    /// The three rules' `ip rule add` arguments in `family`: main without its default routes,
    /// the marked sockets' copy, the TUN.
    public func ruleAdditions(family: String) -> [[String]] {
        [[family, "rule", "add", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", String(table), "pref", String(suppressPriority)],
         [family, "rule", "add", "fwmark", markText, "table", String(copyTable), "pref", String(markedPriority)],
         [family, "rule", "add", "not", "fwmark", markText, "table", String(table), "pref", String(rulePriority)]]
    }

    /// What the session says when `missing` (of `ruleAdditions`) were found gone in `family` and
    /// made again but for `refused`: each rule as `ip rule` shows it, and what its absence did.
    /// Pure.
    public func missingRulesSentence(family: String, missing: [[String]], refused: [[String]], withinSeconds: Int) -> String {
        let wanted = ruleAdditions(family: family)
        let words = Self.familyName(family)
        func effects(_ rules: [[String]], past: Bool) -> String {
            rules.compactMap { rule -> String? in
                switch wanted.firstIndex(of: rule) {
                case 0?: return past ? "the LAN's traffic went into the TUN" : "the LAN's traffic goes into the TUN"
                case 1?: return past ? "tv's own connections took main's routes" : "tv's own connections take main's routes"
                case 2?: return past ? "traffic went around tv, unseen" : "traffic goes around tv, unseen"
                default: return nil
                }
            }.joined(separator: ", and ")
        }
        func shown(_ rules: [[String]]) -> String { rules.map { "`" + $0.dropFirst(3).joined(separator: " ") + "`" }.joined(separator: ", ") }
        let outcome = refused.isEmpty
            ? "made again; until then (up to \(withinSeconds) s) " + effects(missing, past: true)
            : "the kernel refused to make " + shown(refused) + " again, so " + effects(refused, past: false) + " until it is back"
        return "tv's \(words) policy rule\(missing.count == 1 ? " " + shown(missing) + " was" : "s " + shown(missing) + " were") removed from outside "
            + "(a network manager reconfiguring a link, or by hand): " + outcome
    }

    /// The additions of `ruleAdditions` whose rule `json` (`ip -j FAMILY rule show`, iproute2's
    /// JSON) lacks: removed from outside during the session (systemd-networkd removes rules it
    /// did not make when it reconfigures a link, `ManageForeignRoutingPolicyRules=yes` by
    /// default; a user's `ip rule flush`), after which traffic went around tv unseen. Pure;
    /// JSON that does not parse lacks nothing (nothing is made again from a failed reading).
    public func missingRules(family: String, json: String) -> [[String]] {
        guard let data = json.data(using: .utf8), let rules = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else { return [] }
        func has(_ priority: UInt32, _ test: ([String: Any]) -> Bool) -> Bool {
            rules.contains { ($0["priority"] as? Int).map(UInt32.init) == priority && test($0) }
        }
        let wanted = ruleAdditions(family: family)
        var missing: [[String]] = []
        if !has(suppressPriority, { $0["table"] as? String == "main" && $0["suppress_prefixlen"] as? Int == 0 && $0["not"] == nil }) {
            missing.append(wanted[0])
        }
        if !has(markedPriority, { $0["fwmark"] as? String == markText && $0["table"] as? String == String(copyTable) && $0["not"] == nil }) {
            missing.append(wanted[1])
        }
        if !has(rulePriority, { $0["fwmark"] as? String == markText && $0["table"] as? String == String(table) && $0.keys.contains("not") }) {
            missing.append(wanted[2])
        }
        return missing
    }

    /// Appends of main's default routes (`defaults4` / `defaults6`) to table U, then its last
    /// resort (`unreachable`).
    public func copySteps(family: String) -> [Step] {
        (family == "-4" ? defaults4 : defaults6).map {
            Step(arguments: [family, "route", "append"] + $0.arguments(table: String(copyTable)), mayFail: .copy(destination: $0.destination))
        } + [Step(arguments: [family, "route", "append"] + Self.lastResort.arguments(table: String(copyTable)), mayFail: .lastResort)]
    }

    /// Table U's route when none of main's defaults applies: tv's connections fail (network
    /// unreachable) instead of falling through to main.
    public static let lastResort = MainTableRoutes.Route(destination: "default", arguments: ["unreachable", "default", "metric", "4294967295"])

    /// What table U should hold in `family` for main's default routes `defaults`: their copies,
    /// then `lastResort` (the watcher compares it with what U holds).
    public static func copyTableRoutes(_ defaults: [MainTableRoutes.Route]) -> [MainTableRoutes.Route] { defaults + [lastResort] }

    /// The `ip` commands that turn table U's routes `held` into `wanted` in `family`, compared as
    /// sets (the kernel lists a table in its own order): the missing appended first, then the
    /// extra deleted, so U is never without a route in between. (Flushed and made again, it was
    /// empty for an instant each time, and the host's servers' replies went into the TUN then:
    /// a trial's IPv6 sessions into the host were reset every 10 s.) Pure; empty when they agree.
    public func copyChanges(family: String, held: [MainTableRoutes.Route], wanted: [MainTableRoutes.Route]) -> [[String]] {
        let heldSet = Set(held.map(\.arguments)), wantedSet = Set(wanted.map(\.arguments))
        let additions = wanted.filter { !heldSet.contains($0.arguments) }.map { [family, "route", "append"] + $0.arguments(table: String(copyTable)) }
        let deletions = held.filter { !wantedSet.contains($0.arguments) }.map { [family, "route", "del"] + $0.arguments(table: String(copyTable)) }
        return additions + deletions
    }

    /// `ip` argument lists that undo `apply` (each may fail harmlessly if already gone): the
    /// rules first, then the tables.
    public var undo: [[String]] {
        families.flatMap { family in [
            [family, "rule", "del", "not", "fwmark", markText, "table", String(table), "pref", String(rulePriority)],
            [family, "rule", "del", "fwmark", markText, "table", String(copyTable), "pref", String(markedPriority)],
            [family, "rule", "del", "table", "main", "suppress_prefixlength", "0", "suppress_ifgroup", String(table), "pref", String(suppressPriority)],
            [family, "route", "flush", "table", String(table)],
            clearCopyTable(family: family)[0],
            clearCopyTable(family: family)[1],
        ] }
    }

    /// `ip` argument lists that empty table U in `family`: its last resort by name (`ip -6 route
    /// flush` leaves an unreachable route: iproute2 6.1), then the flush.
    public func clearCopyTable(family: String) -> [[String]] {
        [[family, "route", "del"] + Self.lastResort.arguments(table: String(copyTable)),
         [family, "route", "flush", "table", String(copyTable)]]
    }

    /// Whether `listing` (`ip rule show`'s text, one family) holds this plan's rule that sends
    /// unmarked traffic to its table (`32765:	not from all fwmark 0x7476 lookup 29814`). Pure.
    public func isApplied(in listing: String) -> Bool {
        listing.split(whereSeparator: \.isNewline).contains { line in
            line.hasPrefix("\(rulePriority):") && line.contains("fwmark \(markText)") && line.contains("lookup \(table)")
        }
    }

    /// The rules in `listing` (`ip rule show`'s text, one family, in the order the kernel tries
    /// them) that come before this plan's TUN rule and send traffic to another table than
    /// local, main, default or this plan's: a VPN's (`not from all fwmark 0xca6c lookup 51820`,
    /// wg-quick's; `from all lookup 52`, Tailscale's) takes what it matches before tv sees it (a
    /// trial's session said everything went through the TUN while nothing did). Each as listed,
    /// whitespace collapsed. Pure.
    public func rulesAhead(in listing: String) -> [String] {
        let own: Set<String> = ["local", "main", "default", String(table), String(copyTable)]
        var ahead: [String] = []
        for line in listing.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":"), let priority = UInt32(line[..<colon]) else { continue }
            if priority > rulePriority || isApplied(in: String(line)) { break }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let lookup = words.firstIndex(of: "lookup"), lookup + 1 < words.count, !own.contains(String(words[lookup + 1])) else { continue }
            ahead.append(words.joined(separator: " "))
        }
        return ahead
    }

    /// The commands as typed, for `--dry-run` and the banner.
    public var applyLines: [String] { apply.map { (["ip"] + $0.arguments).joined(separator: " ") } }
}
