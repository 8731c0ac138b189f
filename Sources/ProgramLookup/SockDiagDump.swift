import CTVShims
#if canImport(Glibc)
import Glibc
#endif

/// One sock_diag dump (NLM_F_DUMP) on a netlink socket: the request sent, the answers read
/// until NLMSG_DONE, bounded in reads and sockets kept.
enum SockDiagDump {
    /// Sends `request` on `netlink` and reads its answers into `buffer`.
    /// - Returns: the sockets (at most `maximumSockets`; the rest of a longer answer is read and
    ///   dropped), or the kernel's error, or the parser's (`SockDiagError`).
    static func run(_ netlink: Int32, request: [UInt8], buffer: inout [UInt8], maximumReads: Int,
                    maximumSockets: Int) -> Result<[DiagSocket], SockDiagError> {
        guard netlink >= 0 else { return .failure(.kernel(errno: -netlink)) }
        // Leftovers of a dump that timed out earlier would be read as this one's answer.
        while recv(netlink, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
        let sent = request.withUnsafeBufferPointer { tv_netlink_send(netlink, $0.baseAddress, $0.count) }
        guard sent == request.count else { return .failure(.kernel(errno: sent < 0 ? Int32(-sent) : EIO)) }
        var sockets: [DiagSocket] = []
        for _ in 0..<maximumReads {
            let n = recv(netlink, &buffer, buffer.count, 0)
            guard n > 0 else { return .failure(.kernel(errno: n < 0 ? errno : EIO)) }
            do {
                let part = try SockDiagMessage.parse(Array(buffer.prefix(n)))
                if sockets.count < maximumSockets { sockets += part.sockets.prefix(maximumSockets - sockets.count) }
                if part.done { return .success(sockets) }
            } catch {
                return .failure(error)
            }
        }
        return .success(sockets)
    }
}

/// The sockets this network namespace serves on: TCP listeners and unconnected UDP sockets of
/// both families, read with one sock_diag dump each (the kernel walks its listening hash for
/// the TCP one, not the connections; a state filter keeps the UDP one to unconnected sockets).
public enum ServingSockets {
    /// TCP LISTEN (10) and UDP unconnected (TCP_CLOSE, 7), as `idiag_states` bits.
    static let listening: UInt32 = 1 << 10
    static let unconnected: UInt32 = 1 << 7

    /// One socket served on: its protocol (`IPPROTO_TCP` or `IPPROTO_UDP`) and its diag entry.
    public struct Entry: Sendable, Equatable {
        public var proto: UInt8
        public var socket: DiagSocket
        public init(proto: UInt8, socket: DiagSocket) {
            self.proto = proto
            self.socket = socket
        }
    }

    /// TCP states of a connection that still carries data (ESTABLISHED, SYN-RECV, FIN-WAIT-1/2,
    /// CLOSE-WAIT, LAST-ACK, CLOSING; not TIME-WAIT, CLOSE or LISTEN), as `idiag_states` bits.
    static let carryingData: UInt32 = (1 << 1) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 8) | (1 << 9) | (1 << 11)

    /// Which of `ports` (local TCP ports, at most 64 asked) have a connection that still carries
    /// data, in either family: one dump per port and family, filtered by the kernel.
    public static func connectedTCPPorts(_ ports: [UInt16]) -> Set<UInt16> {
        let netlink = tv_sock_diag_open(1_000)
        guard netlink >= 0 else { return [] }
        defer { close(netlink) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var found = Set<UInt16>()
        var sequence: UInt32 = 0
        for port in ports.prefix(64) {
            for family in [UInt8(AF_INET), UInt8(AF_INET6)] where !found.contains(port) {
                sequence += 1
                let request = SockDiagMessage.request(family: family, proto: UInt8(IPPROTO_TCP), states: carryingData, sourcePort: port, sequence: sequence)
                if case .success(let sockets) = SockDiagDump.run(netlink, request: request, buffer: &buffer, maximumReads: 64, maximumSockets: 1),
                   !sockets.isEmpty {
                    found.insert(port)
                }
            }
        }
        return found
    }

    /// Reads them (at most 4,096 per family and protocol).
    /// - Returns: the sockets, or the first failure (the netlink socket, the kernel's answer).
    public static func read() -> Result<[Entry], SockDiagError> {
        let netlink = tv_sock_diag_open(1_000)
        guard netlink >= 0 else { return .failure(.kernel(errno: -netlink)) }
        defer { close(netlink) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var entries: [Entry] = []
        var sequence: UInt32 = 0
        for family in [UInt8(AF_INET), UInt8(AF_INET6)] {
            for (proto, states) in [(UInt8(IPPROTO_TCP), listening), (UInt8(IPPROTO_UDP), unconnected)] {
                sequence += 1
                let request = SockDiagMessage.request(family: family, proto: proto, states: states, sourcePort: 0, sequence: sequence)
                switch SockDiagDump.run(netlink, request: request, buffer: &buffer, maximumReads: 64, maximumSockets: 4_096) {
                case .success(let sockets): entries += sockets.map { Entry(proto: proto, socket: $0) }
                case .failure(let error): return .failure(error)
                }
            }
        }
        return .success(entries)
    }
}
