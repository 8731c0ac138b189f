import CTVShims
import FlowTerms
#if canImport(Glibc)
import Glibc
#endif

/// One flow to name the program of: its client's socket as the kernel sees it.
public struct ProgramLookupRequest: Sendable, Equatable {
    public var flowID: Int64
    /// The client's numeric address (`127.0.0.1`, `::1`, `::ffff:127.0.0.1`) and port.
    public var clientAddress: String
    public var clientPort: UInt16
    /// Where the flow went (the client socket's peer in the TUN and transparent modes), when known.
    public var serverAddress: String?
    public var serverPort: UInt16
    public var transport: FlowTransport
    /// Where the client's connection reached tv (the accepted socket's own address and port),
    /// when tv listens on every address (`FlowFacts.reached`): the client socket's peer, asked
    /// for exactly in place of the listener's.
    public var reachedAddress: String?
    public var reachedPort: UInt16

    public init(flowID: Int64, clientAddress: String, clientPort: UInt16, serverAddress: String?, serverPort: UInt16,
                transport: FlowTransport, reachedAddress: String? = nil, reachedPort: UInt16 = 0) {
        self.flowID = flowID
        self.clientAddress = clientAddress
        self.clientPort = clientPort
        self.serverAddress = serverAddress
        self.serverPort = serverPort
        self.transport = transport
        self.reachedAddress = reachedAddress
        self.reachedPort = reachedPort
    }

    /// The listener as this client's socket sees it: the address and port it reached when known
    /// (one address: a miss is conclusive), else `listener` (the one tv listens on, or a
    /// wildcard).
    func listener(else listener: (family: UInt8, bytes: [UInt8], port: UInt16)?) -> (family: UInt8, bytes: [UInt8], port: UInt16)? {
        guard let text = reachedAddress, reachedPort != 0, let reached = Self.addressBytes(text) else { return listener }
        return (reached.family, reached.bytes, reachedPort)
    }

    /// The address family and bytes of a numeric address; an IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, a dual-stack listener's view of an IPv4 client) is the IPv4 address,
    /// since that is the client socket's own. nil for text that is no address.
    ///
    /// Parsed in place (a zone `%eth0` is cut off only when present): the split and the two
    /// scratch arrays of the first version were ~23 k instructions of the lookup thread's ~77 k
    /// per `tv exec` connection (callgrind, `Scripts/callgrind-tunnel`, conn-http, 2026-12-02).
    public static func addressBytes(_ text: String) -> (family: UInt8, bytes: [UInt8])? {
        if let zone = text.utf8.firstIndex(of: UInt8(ascii: "%")) { return addressBytes(String(text[..<zone])) }
        var six = in6_addr()
        if inet_pton(AF_INET6, text, &six) == 1 {
            return withUnsafeBytes(of: six) { raw in
                if raw[0..<10].allSatisfy({ $0 == 0 }) && raw[10] == 0xFF && raw[11] == 0xFF { return (UInt8(AF_INET), Array(raw[12..<16])) }
                return (UInt8(AF_INET6), Array(raw))
            }
        }
        var four = in_addr()
        if inet_pton(AF_INET, text, &four) == 1 { return withUnsafeBytes(of: four) { (UInt8(AF_INET), Array($0)) } }
        return nil
    }
}

/// The lookup's I/O, on the lookup thread only: a sock_diag dump per flow (filtered by the
/// client's port in the kernel), the socket-owner cache (one `/proc` rescan per batch at most),
/// then the process's `/proc/PID/{comm,exe}` and its user.
final class ProgramResolver {
    /// The sock_diag socket (in the flows' network namespace); -1 until opened.
    var netlink: Int32 = -1
    /// True when every client is local by construction (`tv exec`: the namespace's own programs).
    var clientsAreLocal = false
    /// True when each flow's server is its client socket's peer (the TUN and transparent modes,
    /// `tv exec`): the socket is asked by its four-tuple (`SockDiagQuery`).
    var peersAreServers = false
    /// Where tv listens for its clients in the other modes: their sockets' peer (one address; all
    /// zeros: the client's own), so they are asked by their four-tuple too (`SockDiagQuery`).
    var listener: (family: UInt8, bytes: [UInt8], port: UInt16)?
    /// Flows whose socket an exact request answered.
    private(set) var exactAnswers: UInt64 = 0
    /// sock_diag dumps made (each a walk of the kernel's whole table of the family's sockets).
    private(set) var dumps: UInt64 = 0
    /// The network namespace the sock_diag socket asks (the inode of its `ns/net`): only its
    /// processes' descriptors are read.
    var namespace: UInt64? = ProcFiles.inode("/proc/thread-self/ns/net")
    private let owners = SocketOwners()
    private var users: [UInt32: String?] = [:]
    private var sequence: UInt32 = 0
    private let ownPID = getpid()
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// Bounds on one dump: recv calls and sockets kept.
    static let maximumReads = 64
    static let maximumSockets = 4_096

    var scans: UInt64 { owners.scans }

    /// Names the program of every request, in order.
    func resolve(_ requests: [ProgramLookupRequest]) -> [(Int64, FlowProgram)] {
        if netlink < 0 { netlink = tv_sock_diag_open(1_000) }
        // First the sockets, then the owners of all of them with at most one rescan.
        var found: [(ProgramLookupRequest, (family: UInt8, bytes: [UInt8])?, [UInt8]?, Result<[DiagSocket], SockDiagError>)] = []
        var missing = false
        /// Each exact query made, by the index of its request in `found`, to ask again before a rescan.
        var exactQueries: [(index: Int, query: SockDiagQuery)] = []
        for request in requests {
            guard let parsed = ProgramLookupRequest.addressBytes(request.clientAddress) else {
                found.append((request, nil, nil, .success([])))
                continue
            }
            var address = parsed
            var sockets: Result<[DiagSocket], SockDiagError>
            let server = request.serverAddress.flatMap(ProgramLookupRequest.addressBytes)
            // A client address this machine does not have (a phone using tv as its proxy) has no
            // socket here to find: no dump (a walk of the whole socket table), and no local socket
            // that merely shares its port is named (a UDP socket bound to `0.0.0.0:PORT` was).
            if !clientsAreLocal, parsed.bytes.withUnsafeBufferPointer({ tv_address_is_local(Int32(parsed.family), $0.baseAddress) }) == 0 {
                found.append((request, address, server?.bytes, .success([])))
                continue
            }
            let listener = request.listener(else: self.listener)
            let query = SockDiagQuery.plan(transport: request.transport, client: parsed, clientPort: request.clientPort,
                                           server: server,
                                           serverPort: request.serverPort, peersAreServers: peersAreServers || clientsAreLocal,
                                           listener: listener)
            var answeredExactly = false
            if case let .exact(family, source, sourcePort, destination, destinationPort) = query,
               case .sockets(let list) = SockDiagQuery.outcome(exact(family: family, source: source, sourcePort: sourcePort,
                                                                     destination: destination, destinationPort: destinationPort),
                                                               missIsConclusive: SockDiagQuery.missIsConclusive(
                                                                   clientsAreLocal: clientsAreLocal, peersAreServers: peersAreServers,
                                                                   listener: listener)) {
                exactAnswers += 1
                answeredExactly = true
                sockets = .success(list)
                exactQueries.append((found.count, query))
            } else {
                sockets = dump(family: address.family, transport: request.transport, port: request.clientPort)
            }
            // An IPv4 client may be an IPv6 socket speaking IPv4 (`::ffff:a.b.c.d`, Java's way),
            // matched by its mapped address. An exact request finds it by its IPv4 four-tuple (the
            // kernel looks such sockets up by their IPv4 addresses) and answers it as what it is.
            // The IPv4 dump is by port alone, so it may hold other connections' sockets with that
            // port and none of them the client's: a TIME_WAIT socket of a connection to another
            // server (Linux gives one ephemeral port to connections to different destinations),
            // common on a busy machine, named Java's flow "socket gone" (ExecProxyRunTests in
            // full-suite CI runs). So after a dump the IPv6 dump is asked whenever no live IPv4
            // socket matches (after an exact request that missed too).
            if address.family == UInt8(AF_INET), case .success(let list) = sockets {
                if answeredExactly {
                    if list.contains(where: { $0.family == UInt8(AF_INET6) }) {
                        let mapped = Self.mapped(address.bytes)
                        if list.contains(where: { $0.source == mapped }) { address = (UInt8(AF_INET6), mapped) }
                    }
                } else if !ProgramMatch.holdsLiveSocket(list, address: address.bytes, port: request.clientPort) {
                    let mapped = Self.mapped(address.bytes)
                    let six = dump(family: UInt8(AF_INET6), transport: request.transport, port: request.clientPort)
                    if case .success(let list6) = six, ProgramMatch.holdsLiveSocket(list6, address: mapped, port: request.clientPort) {
                        sockets = six
                        address = (UInt8(AF_INET6), mapped)
                    }
                }
            }
            if case .success(let list) = sockets {
                for s in list where s.inode != 0 && owners.holder(of: UInt64(s.inode)) == nil { missing = true }
            }
            found.append((request, address, server?.bytes, sockets))
        }
        // The recent owners first (cheap), everything only when that was not enough.
        if missing {
            var unowned = Set<UInt64>()
            for (_, _, _, sockets) in found {
                guard case .success(let list) = sockets else { continue }
                for s in list where s.inode != 0 && owners.holders[UInt64(s.inode)] == nil { unowned.insert(UInt64(s.inode)) }
            }
            unowned = owners.scanRecent(wanted: unowned)
            // A socket the recent programs no longer hold has mostly been closed meanwhile (a
            // short connection: its program closed it between the exact answer and the read of
            // its descriptors). Asking the kernel again (three syscalls) spares the rescan (a
            // stat of every process's ns/net and more: ~140 syscalls on this VM) when the socket
            // is gone or has no file any more: no process can hold it, so the rescan could not
            // have named it. `strace -ff`, 200 sequential `tv exec` connections: 14-42 rescans.
            if !unowned.isEmpty {
                for (index, query) in exactQueries {
                    guard case .success(let list) = found[index].3, list.contains(where: { unowned.contains(UInt64($0.inode)) }),
                          case let .exact(family, source, sourcePort, destination, destinationPort) = query else { continue }
                    let now = exact(family: family, source: source, sourcePort: sourcePort, destination: destination,
                                    destinationPort: destinationPort)
                    let still: Set<UInt64>
                    switch now {
                    case .success(let answer): still = Set(answer.map { UInt64($0.inode) })
                    case .failure(.kernel(errno: ENOENT)): still = []
                    case .failure: continue
                    }
                    for s in list where !still.contains(UInt64(s.inode)) { unowned.remove(UInt64(s.inode)) }
                }
            }
            if !unowned.isEmpty { owners.rescan(namespace: namespace, wanted: unowned) }
        }
        return found.map { request, address, server, sockets in
            (request.flowID, program(request, address, server: server, sockets))
        }
    }

    /// - Parameter server: the request's server address bytes, parsed once by `resolve`.
    private func program(_ request: ProgramLookupRequest, _ address: (family: UInt8, bytes: [UInt8])?, server serverBytes: [UInt8]?,
                         _ sockets: Result<[DiagSocket], SockDiagError>) -> FlowProgram {
        guard let address else { return .notKnown(.otherMachine) }
        guard case .success(let list) = sockets else { return .notKnown(.lookupFailed) }
        var holders: [UInt64: SocketHolder] = [:]
        for s in list where s.inode != 0 {
            if let h = owners.holders[UInt64(s.inode)] { holders[UInt64(s.inode)] = h }
        }
        let server = serverBytes.map { ($0, request.serverPort) }
        let client = ProgramLookupRequest.addressBytes(request.clientAddress) ?? address
        let peer = SockDiagQuery.expectedPeer(transport: request.transport, client: client,
                                              server: request.serverAddress.flatMap(ProgramLookupRequest.addressBytes),
                                              serverPort: request.serverPort, peersAreServers: peersAreServers || clientsAreLocal,
                                              listener: request.listener(else: listener))
        let decision = ProgramMatch.decide(sockets: list, address: address.bytes, port: request.clientPort, server: server,
                                   holders: holders, ownPID: ownPID, unreadable: owners.unreadable > 0, peer: peer)
        switch decision {
        case .noSocket:
            if clientsAreLocal { return .notKnown(.socketGone) }
            let local = address.bytes.withUnsafeBufferPointer { tv_address_is_local(Int32(address.family), $0.baseAddress) }
            return .notKnown(local == 0 ? .otherMachine : .socketGone)
        case .unknown(let reason):
            return .notKnown(reason)
        case .owner(let socket, let holder):
            return identity(socket, holder)
        }
    }

    /// The process's name, executable and user, read now and trusted only when its descriptor
    /// still is the socket afterwards (so a pid reused meanwhile is never named).
    private func identity(_ socket: DiagSocket, _ holder: SocketHolder) -> FlowProgram {
        guard let command = ProcFiles.readSmall("/proc/\(holder.pid)/comm").flatMap(ProcFiles.command) else {
            return .notKnown(.processGone)
        }
        let executable = ProcFiles.readLink("/proc/\(holder.pid)/exe")
        guard SocketOwners.holds(holder, UInt64(socket.inode)) else { return .notKnown(.processGone) }
        owners.noteRecent(holder.pid)
        return .known(ProgramIdentity(pid: holder.pid, command: command, executable: executable, uid: socket.uid, user: user(socket.uid)))
    }

    private func user(_ uid: UInt32) -> String? {
        if let cached = users[uid] { return cached }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var storage = [CChar](repeating: 0, count: 4_096)
        let name: String? = getpwuid_r(uid, &entry, &storage, storage.count, &result) == 0 && result != nil
            ? String(cString: entry.pw_name) : nil
        if users.count > 1_000 { users.removeAll() }
        users[uid] = name
        return name
    }

    /// The one TCP socket `source:sourcePort → destination:destinationPort` (an exact request: one
    /// hash lookup in the kernel, one answer message).
    private func exact(family: UInt8, source: [UInt8], sourcePort: UInt16, destination: [UInt8],
                       destinationPort: UInt16) -> Result<[DiagSocket], SockDiagError> {
        guard netlink >= 0 else { return .failure(.kernel(errno: -netlink)) }
        while recv(netlink, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
        sequence &+= 1
        let request = SockDiagMessage.exactRequest(family: family, proto: UInt8(IPPROTO_TCP), source: source, sourcePort: sourcePort,
                                                   destination: destination, destinationPort: destinationPort, sequence: sequence)
        guard !request.isEmpty else { return .failure(.kernel(errno: EINVAL)) }
        let sent = request.withUnsafeBufferPointer { tv_netlink_send(netlink, $0.baseAddress, $0.count) }
        guard sent == request.count else { return .failure(.kernel(errno: sent < 0 ? Int32(-sent) : EIO)) }
        let n = recv(netlink, &buffer, buffer.count, 0)
        guard n > 0 else { return .failure(.kernel(errno: n < 0 ? errno : EIO)) }
        do {
            return .success(try SockDiagMessage.parse(Array(buffer.prefix(n))).sockets)
        } catch {
            return .failure(error)
        }
    }

    /// The IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) of IPv4 address bytes.
    private static func mapped(_ v4: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + v4 }

    /// One dump of `family` sockets of the flow's protocol with local port `port`.
    private func dump(family: UInt8, transport: FlowTransport, port: UInt16) -> Result<[DiagSocket], SockDiagError> {
        dumps += 1
        sequence &+= 1
        let udp = transport == .udp
        let request = SockDiagMessage.request(family: family, proto: UInt8(udp ? IPPROTO_UDP : IPPROTO_TCP),
                                              states: udp ? SockDiagMessage.allStates : SockDiagMessage.connectedTCPStates,
                                              sourcePort: port, sequence: sequence)
        return SockDiagDump.run(netlink, request: request, buffer: &buffer, maximumReads: Self.maximumReads, maximumSockets: Self.maximumSockets)
    }

    func close() {
        if netlink >= 0 { Glibc.close(netlink) }
        netlink = -1
    }
}
