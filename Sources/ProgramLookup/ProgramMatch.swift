import FlowTerms

/// Which of the kernel's sockets is a flow's client socket, and so whose process it is (pure).
public enum ProgramMatch {
    /// What the sockets and their holders say.
    public enum Decision: Sendable, Equatable {
        /// This socket, held by this process.
        case owner(DiagSocket, SocketHolder)
        /// No socket has the client's address and port (the caller tells a client on another
        /// machine from one that already finished).
        case noSocket
        case unknown(ProgramUnknown)
    }

    /// The endpoint the client's TCP socket is connected to (`SockDiagQuery.expectedPeer`):
    /// `address` nil for any local address (a wildcard listener).
    public struct Peer: Sendable, Equatable {
        public var address: [UInt8]?
        public var port: UInt16
        public init(address: [UInt8]?, port: UInt16) {
            self.address = address
            self.port = port
        }

        /// Whether `socket` is connected here (an IPv6 socket speaking IPv4 to its mapped form),
        /// or connected nowhere (an unconnected UDP socket).
        func admits(_ socket: DiagSocket) -> Bool {
            guard socket.destinationPort != 0 else { return true }
            guard socket.destinationPort == port else { return false }
            guard let address else { return true }
            return socket.destination == address
                || (address.count == 4 && socket.destination == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + address)
        }
    }

    /// Whether `sockets` hold a live socket (inode not 0) with local port `port` and local address
    /// `address` or the wildcard: one `decide` could name a program for. An IPv4 dump holding
    /// none sends the resolver to the IPv6 one (an IPv6 socket speaking IPv4, Java's way).
    public static func holdsLiveSocket(_ sockets: [DiagSocket], address: [UInt8], port: UInt16) -> Bool {
        let wildcard = [UInt8](repeating: 0, count: address.count)
        return sockets.contains { $0.inode != 0 && $0.sourcePort == port && ($0.source == address || $0.source == wildcard) }
    }

    /// The client's socket among `sockets` (a dump filtered by local port):
    /// - a socket matches when its local port is `port` and its local address is `address`, or
    ///   the wildcard (an unconnected UDP socket bound to 0.0.0.0 / ::); exact addresses win;
    /// - a socket with inode 0 is closing with no file (TIME_WAIT, or its program closed it);
    /// - sockets held by `ownPID` (tv's own upstream sockets may share a local port) are not it;
    /// - with `peer` known, a connected socket going elsewhere is not it: another program's
    ///   connection that shares the local port (Linux gives one ephemeral port to connections to
    ///   different destinations; a trial's curl was named after a benchmark's sslsplit, and a
    ///   SO_REUSEPORT socket to another server made its process the flow's);
    /// - when several processes' sockets still match, the one connected to `server` wins;
    ///   otherwise it is ambiguous.
    /// - Parameters:
    ///   - holders: inode → holder for every inode known (absent: no process holds it).
    ///   - unreadable: some processes' descriptors could not be read.
    public static func decide(sockets: [DiagSocket], address: [UInt8], port: UInt16,
                              server: (address: [UInt8], port: UInt16)?,
                              holders: [UInt64: SocketHolder], ownPID: Int32, unreadable: Bool, peer: Peer? = nil) -> Decision {
        let wildcard = [UInt8](repeating: 0, count: address.count)
        var matching = sockets.filter { $0.sourcePort == port && ($0.source == address || $0.source == wildcard) }
        guard !matching.isEmpty else { return .noSocket }
        if matching.contains(where: { $0.source == address }) { matching = matching.filter { $0.source == address } }
        var live = matching.filter { $0.inode != 0 }
        if let peer { live = live.filter(peer.admits) }
        guard !live.isEmpty else { return .unknown(.socketGone) }
        var owned: [(DiagSocket, SocketHolder)] = live.compactMap { s in
            holders[UInt64(s.inode)].flatMap { $0.pid == ownPID ? nil : (s, $0) }
        }
        if owned.isEmpty {
            if live.allSatisfy({ holders[UInt64($0.inode)]?.pid == ownPID }) { return .unknown(.socketGone) }
            return .unknown(unreadable ? .notVisible : .processGone)
        }
        if Set(owned.map(\.1.pid)).count > 1, let server {
            let toServer = owned.filter { $0.0.destination == server.address && $0.0.destinationPort == server.port }
            if !toServer.isEmpty { owned = toServer }
        }
        guard Set(owned.map(\.1.pid)).count == 1 else { return .unknown(.ambiguous) }
        return .owner(owned[0].0, owned[0].1)
    }
}
