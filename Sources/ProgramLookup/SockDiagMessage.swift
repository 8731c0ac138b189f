import CTVShims

/// One socket in the kernel's answer to a sock_diag dump: `struct inet_diag_msg`
/// (linux/inet_diag.h), the fields the program lookup uses.
public struct DiagSocket: Sendable, Equatable {
    /// AF_INET (2) or AF_INET6 (10).
    public var family: UInt8
    /// The TCP state number (1 ESTABLISHED … 12 NEW_SYN_RECV; UDP: 1 connected, 7 unconnected).
    public var state: UInt8
    /// The local address: 4 bytes (IPv4) or 16 (IPv6), network order.
    public var source: [UInt8]
    /// The local port.
    public var sourcePort: UInt16
    /// The remote address, like `source` (all zeros for an unconnected UDP socket).
    public var destination: [UInt8]
    /// The remote port (0 for an unconnected UDP socket).
    public var destinationPort: UInt16
    /// The socket's owner (`idiag_uid`).
    public var uid: UInt32
    /// The socket's inode (`idiag_inode`); 0 for a socket no file refers to any more
    /// (TIME_WAIT, or closed by its program).
    public var inode: UInt32

    public init(family: UInt8, state: UInt8, source: [UInt8], sourcePort: UInt16, destination: [UInt8],
                destinationPort: UInt16, uid: UInt32, inode: UInt32) {
        self.family = family
        self.state = state
        self.source = source
        self.sourcePort = sourcePort
        self.destination = destination
        self.destinationPort = destinationPort
        self.uid = uid
        self.inode = inode
    }
}

/// What a sock_diag answer (one `recv`) could not be read as.
public enum SockDiagError: Error, Sendable, Equatable {
    /// A netlink message header is cut short or its length field is impossible (RFC 3549 §2.3.2:
    /// `nlmsg_len` covers the header and the payload).
    case malformed(offset: Int)
    /// An `inet_diag_msg` is shorter than linux/inet_diag.h lays it out (72 bytes).
    case shortSocket(offset: Int)
    /// The kernel answered NLMSG_ERROR with this errno.
    case kernel(errno: Int32)
}

/// The sock_diag netlink interface (linux/sock_diag.h, linux/inet_diag.h): the request is built
/// by the C shim from the kernel's own structs, the answers parsed here (bounded: every length is
/// checked against the buffer, and a caller caps how many sockets it keeps).
public enum SockDiagMessage {
    /// `sizeof(struct nlmsghdr)`.
    static let headerSize = 16
    /// `sizeof(struct inet_diag_msg)`.
    static let socketSize = 72
    /// NLMSG_ERROR and NLMSG_DONE (linux/netlink.h).
    static let typeError: UInt16 = 2
    static let typeDone: UInt16 = 3
    /// SOCK_DIAG_BY_FAMILY (linux/sock_diag.h).
    static let typeSockDiag: UInt16 = 20
    /// Every TCP state but LISTEN (10): the client's socket is connecting, connected or closing.
    public static let connectedTCPStates: UInt32 = 0xFFF & ~(1 << 10)
    /// Every state: a UDP socket is 1 (connected) or 7 (unconnected).
    public static let allStates: UInt32 = 0xFFFF_FFFF

    /// The dump request for sockets of `family` / `proto` whose local port is `sourcePort`.
    /// - Returns: the request's 72 bytes (`struct nlmsghdr` then `struct inet_diag_req_v2`).
    public static func request(family: UInt8, proto: UInt8, states: UInt32, sourcePort: UInt16, sequence: UInt32) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBufferPointer {
            tv_sock_diag_request($0.baseAddress, Int32($0.count), family, proto, states, sourcePort, sequence)
        }
        return Array(buffer.prefix(Int(max(0, n))))
    }

    /// The request for the one socket `source:sourcePort → destination:destinationPort` of
    /// `family` / `proto` (addresses 4 or 16 bytes, network order): no NLM_F_DUMP, so the kernel
    /// answers from one hash lookup with that socket alone or NLMSG_ERROR -ENOENT.
    /// - Returns: the request's 72 bytes; empty when an address is not the family's width.
    public static func exactRequest(family: UInt8, proto: UInt8, source: [UInt8], sourcePort: UInt16,
                                    destination: [UInt8], destinationPort: UInt16, sequence: UInt32) -> [UInt8] {
        let width = family == 10 ? 16 : 4
        guard source.count == width, destination.count == width else { return [] }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBufferPointer { out in
            source.withUnsafeBufferPointer { src in
                destination.withUnsafeBufferPointer { dst in
                    tv_sock_diag_exact_request(out.baseAddress, Int32(out.count), family, proto, src.baseAddress, sourcePort,
                                               dst.baseAddress, destinationPort, sequence)
                }
            }
        }
        return Array(buffer.prefix(Int(max(0, n))))
    }

    /// Reads one `recv`'s worth of netlink messages.
    /// - Returns: the sockets in it, and whether NLMSG_DONE ended the dump.
    /// - Throws: `SockDiagError` for a malformed message or the kernel's error answer.
    public static func parse(_ bytes: [UInt8]) throws(SockDiagError) -> (sockets: [DiagSocket], done: Bool) {
        var sockets: [DiagSocket] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= headerSize else { throw .malformed(offset: offset) }
            let length = Int(le32(bytes, offset))
            guard length >= headerSize, length <= bytes.count - offset else { throw .malformed(offset: offset) }
            let type = UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8
            let body = offset + headerSize
            switch type {
            case typeDone:
                return (sockets, true)
            case typeError:
                guard length >= headerSize + 4 else { throw .malformed(offset: offset) }
                let code = Int32(bitPattern: le32(bytes, body))
                if code != 0 { throw .kernel(errno: -code) }
            case typeSockDiag:
                guard length - headerSize >= socketSize else { throw .shortSocket(offset: offset) }
                sockets.append(socket(bytes, body))
            default:
                break
            }
            offset += (length + 3) & ~3
        }
        return (sockets, false)
    }

    /// `struct inet_diag_msg` at `at`: family, state, id (ports big-endian, addresses in network
    /// order), then uid and inode in host (little-endian) order.
    private static func socket(_ b: [UInt8], _ at: Int) -> DiagSocket {
        let family = b[at]
        let width = family == 10 ? 16 : 4
        return DiagSocket(family: family, state: b[at + 1],
                          source: Array(b[(at + 8)..<(at + 8 + width)]), sourcePort: UInt16(b[at + 4]) << 8 | UInt16(b[at + 5]),
                          destination: Array(b[(at + 24)..<(at + 24 + width)]), destinationPort: UInt16(b[at + 6]) << 8 | UInt16(b[at + 7]),
                          uid: le32(b, at + 64), inode: le32(b, at + 68))
    }

    private static func le32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
