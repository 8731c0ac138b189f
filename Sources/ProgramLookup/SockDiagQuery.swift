import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// How the lookup asks the kernel for one flow's client socket (pure): by its four-tuple when
/// the flow's server is the socket's peer, else by a dump of the sockets on its local port.
///
/// A dump (NLM_F_DUMP) walks the kernel's whole TCP hash table, every bucket and every socket of
/// every network namespace, and filters by port on the way: with many short connections (tens of
/// thousands in TIME_WAIT) that walk was most of tv's CPU per connection in `tv exec`. An exact
/// request (no NLM_F_DUMP: linux/inet_diag.c `inet_diag_find_one_icsk`) is one hash lookup.
/// It needs the socket's peer: the flow's server where tv sees the program's own connection (the
/// TUN and transparent modes; in `tv exec` by construction), tv's listener where the program
/// connected to tv (the explicit proxy, SOCKS5, reverse mode). A listener bound to every address
/// (`0.0.0.0`, `::`) does not say which one a client reached; a local client that did not bind
/// an address has the one it connected to as its own (Linux takes a local route's destination
/// as the source: `ip_route_output_key_hash_rcu`, RTN_LOCAL; RFC 6724 rule 1 in IPv6), so its
/// socket is asked for with its own address as the peer, and a miss (a client that bound another
/// address) falls back to the dump (`outcome`).
/// The dump by port cost 36 % of tv's CPU samples in a reverse-mode run of new connections
/// (`perf`, wrk -c16 with `Connection: close`, 2026-12-03): one walk of the TCP hash per flow.
public enum SockDiagQuery: Sendable, Equatable {
    /// Ask for the one socket `source:sourcePort → destination:destinationPort` of `family`
    /// (addresses 4 or 16 bytes, network order).
    case exact(family: UInt8, source: [UInt8], sourcePort: UInt16, destination: [UInt8], destinationPort: UInt16)
    /// Dump the sockets whose local port is the client's.
    case dump

    /// The query for a flow.
    /// - Parameters:
    ///   - transport: the flow's; only TCP is asked exactly (a UDP flow's socket may be unconnected).
    ///   - client: the client's family and address bytes (`ProgramLookupRequest.addressBytes`).
    ///   - server: the server's, when known; it must be of the client's family.
    ///   - peersAreServers: the flows' servers are their client sockets' peers.
    ///   - listener: where tv listens for the clients of the other modes (family, address bytes,
    ///     port): one address of the client's family is the peer; all zeros (bound to every
    ///     address, either family) make the client's own address the peer.
    public static func plan(transport: FlowTransport, client: (family: UInt8, bytes: [UInt8]), clientPort: UInt16,
                            server: (family: UInt8, bytes: [UInt8])?, serverPort: UInt16, peersAreServers: Bool,
                            listener: (family: UInt8, bytes: [UInt8], port: UInt16)? = nil) -> SockDiagQuery {
        guard clientPort != 0,
              let peer = expectedPeer(transport: transport, client: client, server: server, serverPort: serverPort,
                                      peersAreServers: peersAreServers, listener: listener) else { return .dump }
        // A wildcard listener: the client most likely connected to its own address.
        return .exact(family: client.family, source: client.bytes, sourcePort: clientPort, destination: peer.address ?? client.bytes,
                      destinationPort: peer.port)
    }

    /// Where a TCP client's socket is connected: the server when peers are servers (TUN,
    /// transparent), else tv's listener, its address nil when the listener is a wildcard (the
    /// client may have connected to any local address). nil when not known (not TCP, another
    /// family, no port).
    public static func expectedPeer(transport: FlowTransport, client: (family: UInt8, bytes: [UInt8]),
                                    server: (family: UInt8, bytes: [UInt8])?, serverPort: UInt16, peersAreServers: Bool,
                                    listener: (family: UInt8, bytes: [UInt8], port: UInt16)?) -> ProgramMatch.Peer? {
        guard transport == .tcp else { return nil }
        let peer: ProgramMatch.Peer?
        if peersAreServers {
            peer = server.flatMap { $0.family == client.family ? ProgramMatch.Peer(address: $0.bytes, port: serverPort) : nil }
        } else {
            peer = listener.flatMap { listener in
                guard listener.bytes.contains(where: { $0 != 0 }) else { return ProgramMatch.Peer(address: nil, port: listener.port) }
                return listener.family == client.family ? ProgramMatch.Peer(address: listener.bytes, port: listener.port) : nil
            }
        }
        guard let peer, peer.port != 0 else { return nil }
        return peer
    }

    /// What an exact request's answer means.
    public enum ExactOutcome: Sendable, Equatable {
        /// These sockets are the answer (none: no such socket, the program's socket is gone).
        case sockets([DiagSocket])
        /// Not conclusive: ask by a dump instead.
        case dump
    }

    /// Reads an exact request's answer:
    /// - sockets found: they are the answer, but for a listener (the kernel's lookup falls back to
    ///   one bound to the client's address and port when no connection has the four-tuple): it is
    ///   never the client, so that is read as no socket;
    /// - ENOENT (the kernel has no socket with that four-tuple), or only a listener: when a miss
    ///   is conclusive (`missIsConclusive`) the socket is gone; otherwise a dump looks wider;
    /// - any other failure (an old kernel's EINVAL, a timeout): a dump.
    public static func outcome(_ answer: Result<[DiagSocket], SockDiagError>, missIsConclusive: Bool) -> ExactOutcome {
        switch answer {
        case .success(let sockets) where sockets.contains { $0.state != listenState }:
            return .sockets(sockets.filter { $0.state != listenState })
        case .success(let sockets) where !sockets.isEmpty && missIsConclusive:
            return .sockets([])
        case .failure(.kernel(errno: ENOENT)) where missIsConclusive:
            return .sockets([])
        default:
            return .dump
        }
    }

    /// Whether an exact request that finds no connection means the client's socket is gone:
    /// when every client is local (`tv exec`: the namespace holds only its programs' sockets), or
    /// when the four-tuple asked is the socket's own, not a guess: the flow's server is its peer
    /// (the TUN and transparent modes) or tv listens on one address (the client's socket is
    /// connected to exactly that address and port). A wildcard listener's guess (the client's
    /// own address) misses a client that bound another, so that miss is asked again by a dump.
    ///
    /// Measured (`perf` of the lookup thread, `tv run` on 127.0.0.1 with 48 clients making
    /// ~1,000 short connections a second): a client that closed before its lookup was asked
    /// again by a dump, 99 % of the thread's samples in the kernel's `tcp_diag_dump` walking
    /// tens of thousands of TIME_WAIT sockets; the thread kept one CPU busy and still left 19,312
    /// of 30,700 flows "not looked up (too many waiting)".
    public static func missIsConclusive(clientsAreLocal: Bool, peersAreServers: Bool,
                                        listener: (family: UInt8, bytes: [UInt8], port: UInt16)?) -> Bool {
        clientsAreLocal || peersAreServers || listener.map { $0.bytes.contains { $0 != 0 } } ?? false
    }

    /// TCP_LISTEN in the kernel's state numbering (`DiagSocket.state`).
    static let listenState: UInt8 = 10
}
