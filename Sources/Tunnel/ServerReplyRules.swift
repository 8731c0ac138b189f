import Foundation
import ProgramLookup
#if canImport(Glibc)
import Glibc
#endif

/// The ports whose replies `--mode tun` leaves on main's default routes: this host's own
/// servers. Their replies to a client beyond the LAN followed the default route into the TUN,
/// where the engine had no flow for them and answered with a reset: an SSH session into a host
/// running `tv run --mode tun` was cut the moment tv started, and no new one could open (the
/// same holds for wg-quick's full tunnel). A rule per port range (`HostRoutingPlan.serverRules`,
/// `ipproto tcp sport 22 lookup U`, after main's specific routes) sends them through tv's copy
/// of main's default routes instead, as the client reached them; tv does not see them.
///
/// A server is a TCP listener, or a UDP socket bound below the ephemeral range (a client's
/// socket is bound above it), on an address other than loopback and the TUN's own networks
/// (tv's listeners there answer into the TUN). A port served in one family is ruled in both
/// (an IPv6 socket without `IPV6_V6ONLY` serves IPv4 too).
///
/// The ports named with `--server-ports` (`DeclaredServerPorts`) are ruled too, bound or not,
/// merged with those found (a named range and a server's port next to it make one rule).
///
/// At most `maximumRanges` ranges per protocol, those holding a named port first, then the
/// lowest ports: every lookup of the host's unmarked traffic passes these rules before the
/// TUN's, and an unconnected UDP socket looks its route up per datagram; the ports left out are
/// counted and said.
public struct ServerReplyPorts: Sendable, Equatable {
    public var tcp: [ClosedRange<UInt16>] = []
    public var udp: [ClosedRange<UInt16>] = []
    /// Ports served but given no rule (past `maximumRanges`; never a named one).
    public var leftOut = 0
    /// Unconnected UDP sockets' ports in the ephemeral range, taken for clients' and given no
    /// rule (the first 8; none named with `--server-ports`): a server among them (WireGuard's
    /// 51820, mosh's 60000–61000) is not reachable from beyond the LAN while tv runs, and says so.
    public var ephemeralUDP: [UInt16] = []

    /// Ranges per protocol at most.
    public static let maximumRanges = 64

    public init(tcp: [ClosedRange<UInt16>] = [], udp: [ClosedRange<UInt16>] = [], leftOut: Int = 0) {
        self.tcp = tcp
        self.udp = udp
        self.leftOut = leftOut
    }

    /// The ports named alone, for when the sockets cannot be read.
    public init(declared: DeclaredServerPorts) {
        self.init([], ephemeralStart: .max, excluding: { _ in true }, declared: declared)
    }

    public var isEmpty: Bool { tcp.isEmpty && udp.isEmpty }

    /// The ports `sockets` serve on, and those `declared`. Pure.
    /// - Parameters:
    ///   - ephemeralStart: the first port of `net.ipv4.ip_local_port_range` (32768 by default).
    ///   - excluded: addresses whose sockets are not this host's servers (the TUN's networks).
    ///   - stillConnected: TCP ports served before whose listener is gone but whose accepted
    ///     connections still carry data: kept, so a stopped or restarting server's open sessions
    ///     are not reset (a trial's `systemctl stop ssh` cut every session within 2 s).
    ///   - declared: the ports named with `--server-ports`, ruled whatever the sockets.
    public init(_ sockets: [ServingSockets.Entry], ephemeralStart: UInt16, excluding excluded: (PacketAddress) -> Bool,
                stillConnected: Set<UInt16> = [], declared: DeclaredServerPorts = DeclaredServerPorts()) {
        var tcpPorts = stillConnected, udpPorts = Set<UInt16>(), ephemeral = Set<UInt16>()
        for entry in sockets {
            let socket = entry.socket
            guard socket.sourcePort != 0, let address = Self.address(socket.source) else { continue }
            if address.isLoopback || excluded(address) { continue }
            if entry.proto == UInt8(IPPROTO_TCP) {
                tcpPorts.insert(socket.sourcePort)
            } else if entry.proto == UInt8(IPPROTO_UDP) {
                if socket.sourcePort < ephemeralStart { udpPorts.insert(socket.sourcePort) } else { ephemeral.insert(socket.sourcePort) }
            }
        }
        ephemeralUDP = Array(ephemeral.filter { !declared.holdsUDP($0) }.sorted().prefix(8))
        let tcpLeftOut: Int, udpLeftOut: Int
        (tcp, tcpLeftOut) = Self.capped(Self.ranges(tcpPorts), declared: declared.tcp)
        (udp, udpLeftOut) = Self.capped(Self.ranges(udpPorts), declared: declared.udp)
        leftOut = tcpLeftOut + udpLeftOut
    }

    /// `found` merged with `declared`, at most `maximumRanges` ranges: each holding a declared
    /// port (the parser allows no more than `maximumRanges` of them), then the others lowest
    /// first, sorted; and how many ports the ranges left out hold. Pure.
    static func capped(_ found: [ClosedRange<UInt16>], declared: [ClosedRange<UInt16>]) -> (ranges: [ClosedRange<UInt16>], leftOut: Int) {
        let all = DeclaredServerPorts.merged(found + declared)
        let isNamed = { (range: ClosedRange<UInt16>) in declared.contains { range.overlaps($0) } }
        let named = all.filter(isNamed), others = all.filter { !isNamed($0) }
        let room = max(0, Self.maximumRanges - named.count)
        let kept = (named + others.prefix(room)).sorted { $0.lowerBound < $1.lowerBound }
        return (kept, others.dropFirst(room).reduce(0) { $0 + Int($1.upperBound - $1.lowerBound) + 1 })
    }

    /// A socket's local address; an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2)
    /// as IPv4.
    static func address(_ bytes: [UInt8]) -> PacketAddress? {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return PacketAddress(bytes: Array(bytes[12...]))
        }
        return PacketAddress(bytes: bytes)
    }

    /// `ports` sorted and merged into ranges of consecutive ports. Pure.
    public static func ranges(_ ports: Set<UInt16>) -> [ClosedRange<UInt16>] {
        var out: [ClosedRange<UInt16>] = []
        for port in ports.sorted() {
            if let last = out.last, last.upperBound &+ 1 == port, last.upperBound != .max {
                out[out.count - 1] = last.lowerBound...port
            } else {
                out.append(port...port)
            }
        }
        return out
    }

    /// `22`, `8000-8010`: a range as `ip rule`'s `sport` takes it.
    public static func text(_ range: ClosedRange<UInt16>) -> String {
        range.lowerBound == range.upperBound ? String(range.lowerBound) : "\(range.lowerBound)-\(range.upperBound)"
    }

    /// "TCP 22, 80; UDP 53" for the banner; nil when empty.
    public var summary: String? {
        guard !isEmpty || leftOut > 0 else { return nil }
        var parts: [String] = []
        if !tcp.isEmpty { parts.append("TCP " + tcp.map(Self.text).joined(separator: ", ")) }
        if !udp.isEmpty { parts.append("UDP " + udp.map(Self.text).joined(separator: ", ")) }
        if leftOut > 0 {
            parts.append("\(leftOut) more port\(leftOut == 1 ? "" : "s") given no rule (at most \(Self.maximumRanges) ranges per protocol): their replies to clients beyond the LAN go into the TUN")
        }
        return parts.joined(separator: "; ")
    }

    /// What the ephemeral-range UDP sockets mean, for the banner and `tv status`, and the option
    /// that keeps a server among them reachable (at tv's next start: a session keeps the ports
    /// it was started with); nil when none.
    public var ephemeralSentence: String? {
        guard !ephemeralUDP.isEmpty else { return nil }
        return "UDP sockets bound in the ephemeral range (" + ephemeralUDP.map(String.init).joined(separator: ", ")
            + ") are taken for clients' and given no rule: a server among them (WireGuard, mosh) is not reachable from beyond the LAN while tv runs; "
            + "name the servers' ports among them when tv starts to keep them reachable: \(DeclaredServerPorts.option) " + ephemeralUDP.map { "udp:\($0)" }.joined(separator: ",")
    }

    /// Whether `other` holds the same ranges, in any order (the kernel lists rules of one
    /// priority in the order they were added; `leftOut` and `ephemeralUDP` are not rules). Pure.
    public func sameRanges(as other: ServerReplyPorts) -> Bool {
        Set(tcp) == Set(other.tcp) && Set(udp) == Set(other.udp)
    }

    /// Every TCP port of `tcp`.
    public var tcpPorts: Set<UInt16> { Set(tcp.flatMap { Array($0) }) }

    /// Reads this namespace's servers (`ServingSockets`), the ephemeral range
    /// (`readEphemeralRange`), and which TCP ports of `previous` lost their listener but still
    /// have connections (`ServingSockets.connectedTCPPorts`), with the ports `declared`; nil when
    /// sock_diag cannot be asked.
    public static func read(excluding excluded: (PacketAddress) -> Bool, declared: DeclaredServerPorts = DeclaredServerPorts(),
                            previous: ServerReplyPorts = ServerReplyPorts()) -> ServerReplyPorts? {
        guard case .success(let sockets) = ServingSockets.read() else { return nil }
        let ephemeralStart = readEphemeralRange().lowerBound
        let now = ServerReplyPorts(sockets, ephemeralStart: ephemeralStart, excluding: excluded, declared: declared)
        let gone = previous.tcpPorts.subtracting(now.tcpPorts)
        guard !gone.isEmpty else { return now }
        let connected = ServingSockets.connectedTCPPorts(gone.sorted())
        guard !connected.isEmpty else { return now }
        return ServerReplyPorts(sockets, ephemeralStart: ephemeralStart, excluding: excluded, stillConnected: connected, declared: declared)
    }

    /// This namespace's `net.ipv4.ip_local_port_range`, the ports the kernel gives clients'
    /// sockets; Linux's default, 32768–60999, when it cannot be read.
    public static func readEphemeralRange() -> ClosedRange<UInt16> {
        let words = (NetworkConfigurator.read("net.ipv4.ip_local_port_range") ?? "").split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let first = UInt16(words[0]), let last = UInt16(words[1]), first <= last else { return 32_768...60_999 }
        return first...last
    }
}

extension PacketAddress {
    /// 127.0.0.0/8 or ::1.
    var isLoopback: Bool {
        isIPv6 ? self == PacketAddress("::1")! : isIn(PacketAddress("127.0.0.0")!, prefixLength: 8)
    }
}

/// The server-reply rules of a `HostRoutingPlan` (`ServerReplyPorts`): made, compared with what
/// the kernel holds, and removed.
extension HostRoutingPlan {
    /// One rule's selector and place: `FAMILY rule VERB ipproto PROTO sport RANGE table U pref P`.
    public func serverRule(_ verb: String, family: String, proto: String, _ range: ClosedRange<UInt16>) -> [String] {
        [family, "rule", verb, "ipproto", proto, "sport", ServerReplyPorts.text(range), "table", String(copyTable), "pref", String(markedPriority)]
    }

    /// The rules adding `ports` in `family`.
    public func serverRules(family: String, _ ports: ServerReplyPorts) -> [[String]] {
        ports.tcp.map { serverRule("add", family: family, proto: "tcp", $0) } + ports.udp.map { serverRule("add", family: family, proto: "udp", $0) }
    }

    /// The server-reply rules in `json` (`ip -j FAMILY rule show table U`): those at this plan's
    /// marked priority with an `ipproto` and a `sport` (or `sport_start`/`sport_end`), as ports.
    /// Pure; empty for what does not parse.
    public func serverRules(inJSON json: String) -> ServerReplyPorts {
        guard let data = json.data(using: .utf8), let rules = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else {
            return ServerReplyPorts()
        }
        var held = ServerReplyPorts()
        for rule in rules {
            guard (rule["priority"] as? Int).map(UInt32.init) == markedPriority, rule["table"] as? String == String(copyTable),
                  let proto = rule["ipproto"] as? String else { continue }
            let range: ClosedRange<UInt16>
            if let port = (rule["sport"] as? Int).flatMap(UInt16.init(exactly:)) {
                range = port...port
            } else if let low = (rule["sport_start"] as? Int).flatMap(UInt16.init(exactly:)),
                      let high = (rule["sport_end"] as? Int).flatMap(UInt16.init(exactly:)), low <= high {
                range = low...high
            } else {
                continue
            }
            if proto == "tcp" { held.tcp.append(range) } else if proto == "udp" { held.udp.append(range) }
        }
        return held
    }

    /// The `ip` commands that turn `held` into `wanted` in `family`: additions first, so a
    /// port whose range changes (22 → 22-23 when 23 starts) is never without a rule (its
    /// replies would meet the engine's reset in between). Pure.
    public func serverRuleChanges(family: String, held: ServerReplyPorts, wanted: ServerReplyPorts) -> [[String]] {
        var deletions: [[String]] = [], additions: [[String]] = []
        for (proto, have, want) in [("tcp", held.tcp, wanted.tcp), ("udp", held.udp, wanted.udp)] {
            deletions += have.filter { !want.contains($0) }.map { serverRule("del", family: family, proto: proto, $0) }
            additions += want.filter { !have.contains($0) }.map { serverRule("add", family: family, proto: proto, $0) }
        }
        return additions + deletions
    }

    /// Reads the server-reply rules the kernel holds in `family`; nil when `ip` fails.
    public func heldServerRules(family: String) -> ServerReplyPorts? {
        guard let (code, output) = try? ChildProcess.run(["ip", "-j", family, "rule", "show", "table", String(copyTable)]), code == 0 else { return nil }
        return serverRules(inJSON: output)
    }

    /// Runs `undo`, then removes every server-reply rule of this plan's table and priority
    /// (those this session made as its servers came and went, or a killed one left).
    public func remove(using config: inout NetworkConfigurator) {
        for command in undo { _ = config.tryIP(command) }
        for family in families {
            guard let held = heldServerRules(family: family) else { continue }
            for command in serverRuleChanges(family: family, held: held, wanted: ServerReplyPorts()) { _ = config.tryIP(command) }
        }
    }
}
