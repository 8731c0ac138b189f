/// Why the tunnel dropped a packet it read; each reason has its own counter.
public enum PacketDrop: String, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Shorter than the header its version needs, or a header length past the bytes read.
    case truncated
    /// Neither IPv4 nor IPv6.
    case badVersion
    /// A length field disagrees with the bytes (IPv4 Total Length, IHL, IPv6 Payload Length, UDP
    /// Length, TCP Data Offset).
    case badLength
    /// The IPv4 header checksum or the TCP/UDP checksum is wrong (RFC 1071).
    case badChecksum
    /// An IPv6 extension-header chain that is malformed or too long.
    case badExtensionHeaders
    /// ICMP / ICMPv6 a program sent (ping, traceroute): not carried.
    case icmp
    /// The kernel's own ICMPv6 on the link (RFC 4861 neighbour discovery, router and neighbour
    /// solicitations and advertisements, redirects; RFC 2710 / 3810 multicast listener queries
    /// and reports, sent when a program joins a group): not carried, and not counted among the
    /// packets programs sent (a trial read "programs sent 3 packets … dropped 3 ICMP" from MLD
    /// reports alone).
    case linkControl
    /// Any protocol other than TCP, UDP and ICMP.
    case otherProtocol
    /// A fragment that overlaps another, runs past 65,535 bytes, or contradicts the datagram's end.
    case badFragment
    /// The reassembly buffer's limits were reached (count or bytes); the oldest datagram was dropped.
    case fragmentLimit
    /// Fragments whose datagram never completed within the reassembly timeout.
    case fragmentTimeout
    /// TCP from the listener to a fake endpoint that is in no NAT entry.
    case unknownFakeEndpoint
    /// A TCP segment that is neither a SYN nor part of a known connection (answered with a RST).
    case noConnection
    /// The NAT table (or the UDP flow table) is full.
    case tableFull
    /// A SYN retransmitted while the upstream connect is still going, or after it failed
    /// (given the failed connect's answer again: `TCPNATTable.SYNDecision.failedAgain`).
    case synRetransmit
    /// A program's SYN for a new connection while the proxy was at its connection cap (its open
    /// connections and the engine's own under way: `AdoptionRefusal.atConnectionCap`): nothing is
    /// connected upstream, and the SYN is dropped, not answered, as Linux drops a SYN when a
    /// listener's accept queue is full (`tcp_conn_request`, LINUX_MIB_LISTENOVERFLOWS): the
    /// program's kernel sends it again (1 s later at first) and it gets in once a connection
    /// has closed, or the program's own timeout decides, as with an overloaded server. A reset
    /// would fail it at once (ECONNREFUSED, curl rc 7) for what is a moment's lack of room; tv
    /// used to connect, complete the program's handshake and then reset it (curl rc 56: a
    /// trial's server saw 20 SYNs, 15 resets and 5 requests).
    case connectionCap
    /// A program's SYN for a new connection while the proxy was stopping: answered with a reset
    /// (nothing will take it).
    case proxyStopping
    /// A datagram or segment to an address or port the tunnel refuses (multicast, broadcast,
    /// port 0).
    case refusedDestination
    /// `--mode tun`: a connection or datagram to an address in the TUN's own networks (other
    /// than tv's own): tv's marked socket to it would follow main's connected route back into
    /// the TUN, each pass a new flow (a trial: one curl to 10.77.0.9 made 38,000 failed flows
    /// in seconds, one datagram filled the UDP table). Refused (a TCP reset) at the first pass.
    case tunnelNetwork
    /// Writing to an upstream UDP socket failed.
    case sendFailed

    public var description: String { rawValue }
}
