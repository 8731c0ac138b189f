import Foundation
import TVHome

/// The ports `tv run --mode tun --server-ports` names as this host's servers': what is sent from
/// them leaves through tv's copy of main's default routes for the whole session, whether or not a
/// socket is bound there now (a rule per range, as `ServerReplyPorts`'s, and merged with them).
///
/// The socket table cannot tell a UDP server bound in the ephemeral range (WireGuard's 51820,
/// mosh's 60000–61000) from a client's unconnected socket, so such a server never gets a rule of
/// its own (`ServerReplyPorts.ephemeralUDP`) and its replies to clients beyond the LAN go into
/// the TUN; a port named here gets one. A TCP port named here is ruled before its server listens
/// too (its first replies otherwise wait up to `MainDefaultRouteWatcher.serverCheckSeconds`).
///
/// Written `PROTO:PORT` or `PROTO:FIRST-LAST`, comma-separated, PROTO `tcp` or `udp`
/// (`udp:51820,udp:60000-61000,tcp:8443`); the option may be given more than once. At most
/// `ServerReplyPorts.maximumRanges` ranges per protocol once merged: they count toward that cap
/// (it bounds the rules every unmarked route lookup passes, whoever named them) and are ruled
/// first, so a port named is never left out. Pure.
public struct DeclaredServerPorts: Sendable, Equatable {
    /// Sorted, overlapping and adjacent ranges merged.
    public private(set) var tcp: [ClosedRange<UInt16>] = []
    public private(set) var udp: [ClosedRange<UInt16>] = []

    /// The option's name, as messages spell it.
    public static let option = "--server-ports"

    /// No port named.
    public init() {}

    /// `tcp` and `udp` as given, merged (tests, and callers holding ranges).
    public init(tcp: [ClosedRange<UInt16>] = [], udp: [ClosedRange<UInt16>] = []) {
        self.tcp = Self.merged(tcp)
        self.udp = Self.merged(udp)
    }

    /// Reads each of `texts` (one per `--server-ports` given), every comma-separated entry.
    /// - Throws: `ServerPortsError`: an empty entry, no protocol, an unknown protocol, a port
    ///   that is not 1…65535, a range whose first port is above its last, more than
    ///   `ServerReplyPorts.maximumRanges` ranges per protocol.
    public init(parsing texts: [String]) throws(ServerPortsError) {
        var tcp: [ClosedRange<UInt16>] = [], udp: [ClosedRange<UInt16>] = []
        for text in texts {
            for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = entry.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty else { throw .emptyEntry(text) }
                guard let colon = trimmed.firstIndex(of: ":") else { throw .noProtocol(trimmed) }
                let proto = trimmed[..<colon].lowercased(), ports = trimmed[trimmed.index(after: colon)...]
                guard proto == "tcp" || proto == "udp" else { throw .unknownProtocol(trimmed) }
                let range = try Self.range(ports, entry: trimmed)
                if proto == "tcp" { tcp.append(range) } else { udp.append(range) }
            }
        }
        self.init(tcp: tcp, udp: udp)
        for (name, ranges) in [("TCP", self.tcp), ("UDP", self.udp)] where ranges.count > ServerReplyPorts.maximumRanges {
            throw .tooManyRanges(protocolName: name, count: ranges.count)
        }
    }

    /// `PORT` or `FIRST-LAST` of `entry`.
    private static func range(_ text: Substring, entry: String) throws(ServerPortsError) -> ClosedRange<UInt16> {
        let bounds = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        var ports: [UInt16] = []
        for bound in bounds {
            guard !bound.isEmpty, bound.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let port = UInt16(bound) else {
                throw .notAPort(entry)
            }
            guard port > 0 else { throw .portZero(entry) }
            ports.append(port)
        }
        let first = ports[0], last = ports[ports.count - 1]
        guard first <= last else { throw .reversedRange(entry, first: first, last: last) }
        return first...last
    }

    public var isEmpty: Bool { tcp.isEmpty && udp.isEmpty }

    /// Whether `port` is in one of the UDP ranges.
    public func holdsUDP(_ port: UInt16) -> Bool { udp.contains { $0.contains(port) } }

    /// "TCP 8443; UDP 51820, 60000-61000"; nil when none is named.
    public var summary: String? {
        guard !isEmpty else { return nil }
        var parts: [String] = []
        if !tcp.isEmpty { parts.append("TCP " + tcp.map(ServerReplyPorts.text).joined(separator: ", ")) }
        if !udp.isEmpty { parts.append("UDP " + udp.map(ServerReplyPorts.text).joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }

    /// The ports of `udp` inside `ephemeral` (`net.ipv4.ip_local_port_range`), which the kernel
    /// also gives clients' sockets.
    public func udpPortsInRange(_ ephemeral: ClosedRange<UInt16>) -> Int {
        udp.reduce(0) { total, range in
            guard range.overlaps(ephemeral) else { return total }
            return total + Int(min(range.upperBound, ephemeral.upperBound)) - Int(max(range.lowerBound, ephemeral.lowerBound)) + 1
        }
    }

    /// What the ports named mean, for the dry run, the banner and `tv status`: where what is sent
    /// from them leaves, for how long, and what a UDP range inside the ephemeral range also takes
    /// (a client's socket given one of its ports: a rule takes everything sent from its port).
    /// Nil when none is named. Pure.
    /// - Parameters:
    ///   - copyTable: table U of `HostRoutingPlan`.
    ///   - ephemeral: `net.ipv4.ip_local_port_range` (32768–60999 by default).
    public func sentence(copyTable: UInt32, ephemeral: ClosedRange<UInt16>) -> String? {
        guard let summary else { return nil }
        var said = "\(Self.option) \(summary): what this host sends from these ports leaves through table \(copyTable) for the whole session, "
            + "whether or not a server is bound there, unseen by tv"
        let taken = udpPortsInRange(ephemeral)
        if taken > 0 {
            said += "; \(taken) of \(taken == 1 ? "them is" : "them are") in the ephemeral range (\(ServerReplyPorts.text(ephemeral))), "
                + "so a client's UDP socket the kernel gives \(taken == 1 ? "that port" : "one of those ports") goes around tv too"
        }
        return said
    }

    /// `ranges` sorted, with overlapping and adjacent ranges merged into one. Pure.
    public static func merged(_ ranges: [ClosedRange<UInt16>]) -> [ClosedRange<UInt16>] {
        var out: [ClosedRange<UInt16>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, last.upperBound == .max || range.lowerBound <= last.upperBound + 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                out.append(range)
            }
        }
        return out
    }
}

/// Why `--server-ports` cannot be read: one sentence each, what was wrong and what to write.
public enum ServerPortsError: UserFacingError, Equatable {
    /// An empty entry in the value (`udp:51820,,tcp:22`, a trailing comma, an empty value).
    case emptyEntry(String)
    /// An entry without `PROTO:` (`51820`).
    case noProtocol(String)
    /// A protocol other than tcp or udp (`sctp:9899`).
    case unknownProtocol(String)
    /// A port that is not a whole number up to 65535 (`udp:wg`, `udp:70000`, `udp:1-2-3`).
    case notAPort(String)
    /// Port 0 (`udp:0`, `udp:0-100`): no server's; a socket bound to 0 is given a port.
    case portZero(String)
    /// A range whose first port is above its last (`udp:61000-60000`).
    case reversedRange(String, first: UInt16, last: UInt16)
    /// More ranges of one protocol than `ServerReplyPorts.maximumRanges` once merged.
    case tooManyRanges(protocolName: String, count: Int)

    public var message: String {
        let option = DeclaredServerPorts.option
        switch self {
        case .emptyEntry(let text):
            return "\(option) '\(TerminalText.line(text))' has an empty entry; write PROTO:PORT or PROTO:FIRST-LAST, separated by single commas (udp:51820,tcp:8443)."
        case .noProtocol(let entry):
            return "\(option) \(TerminalText.line(entry)) names no protocol; write \(Self.withProtocol(entry))."
        case .unknownProtocol(let entry):
            return "\(option) \(TerminalText.line(entry)): the protocol is tcp or udp; write udp:PORT or tcp:PORT (udp:51820)."
        case .notAPort(let entry):
            return "\(option) \(TerminalText.line(entry)): a port is a whole number from 1 to 65535, and a range two of them joined by a dash (udp:60000-61000)."
        case .portZero(let entry):
            return "\(option) \(TerminalText.line(entry)): port 0 is no server's port; name ports from 1 to 65535."
        case .reversedRange(let entry, let first, let last):
            return "\(option) \(TerminalText.line(entry)): a range goes from its lower port to its higher; write \(TerminalText.line(entry.prefix { $0 != ":" }.lowercased())):\(last)-\(first)."
        case .tooManyRanges(let name, let count):
            return "\(option) names \(count) \(name) port ranges, and at most \(ServerReplyPorts.maximumRanges) per protocol get rules; join neighbouring ports into ranges (udp:60000-61000)."
        }
    }

    public var exitCode: Int32 { 2 }

    /// What to write for `entry`, which names no protocol: `51820/udp` (as /etc/services
    /// writes it) as `udp:51820`; ports alone with either protocol; else the form.
    static func withProtocol(_ entry: String) -> String {
        let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
        let isPorts = { (text: Substring) in !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") } }
        if parts.count == 2, isPorts(parts[0]), ["tcp", "udp"].contains(parts[1].lowercased()) { return parts[1].lowercased() + ":" + parts[0] }
        if parts.count == 1, isPorts(parts[0]) { return "udp:\(entry) or tcp:\(entry)" }
        return "PROTO:PORT, PROTO tcp or udp (udp:51820)"
    }
}
