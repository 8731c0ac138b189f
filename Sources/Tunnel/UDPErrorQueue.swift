/// One entry of a UDP socket's error queue, as `recvmsg(MSG_ERRQUEUE)` reports it with
/// `IP_RECVERR` / `IPV6_RECVERR` on (ip(7), ipv6(7)): the control message's level and the fields
/// of the kernel's `struct sock_extended_err` (linux/errqueue.h).
///
/// Layout read (LP64 Linux, x86_64 and aarch64): `struct cmsghdr { size_t cmsg_len; int
/// cmsg_level; int cmsg_type; }` (16 bytes), the data at the next multiple of `sizeof(size_t)`,
/// each message padded to that multiple (CMSG_ALIGN); the data starts with
/// `struct sock_extended_err { u32 ee_errno; u8 ee_origin, ee_type, ee_code, ee_pad; u32 ee_info;
/// u32 ee_data; }` (16 bytes, host byte order), followed by the offender's address
/// (`SO_EE_OFFENDER`: a `sockaddr_in` or `sockaddr_in6`, the ICMP message's sender; family
/// AF_UNSPEC for the local stack's own errors).
public struct SocketExtendedError: Equatable, Sendable {
    /// `SOL_IP` (0) with `IP_RECVERR` (11), linux/in.h.
    public static let levelIP: Int32 = 0, typeIPRecvErr: Int32 = 11
    /// `SOL_IPV6` (41) with `IPV6_RECVERR` (25), linux/in6.h.
    public static let levelIPv6: Int32 = 41, typeIPv6RecvErr: Int32 = 25
    /// `ee_origin` values (linux/errqueue.h): the local stack, an ICMP or an ICMPv6 message.
    public static let originLocal: UInt8 = 1, originICMP: UInt8 = 2, originICMP6: UInt8 = 3

    /// The control message came at the IPv6 level (`IPV6_RECVERR`), else the IPv4 one.
    public var ipv6Level: Bool
    /// `ee_errno`: the error the socket reports for it (EMSGSIZE, ECONNREFUSED, EHOSTUNREACH…).
    public var errorNumber: UInt32
    /// `ee_origin`: who reported it (`originLocal`, `originICMP`, `originICMP6`, or another).
    public var origin: UInt8
    /// `ee_type` / `ee_code`: the ICMP message's type and code (ICMP origins).
    public var type: UInt8
    public var code: UInt8
    /// `ee_info`: for "fragmentation needed" / "packet too big", the MTU the router reported
    /// (the local stack's MTU for a local EMSGSIZE).
    public var info: UInt32
    /// `ee_data`.
    public var data: UInt32
    /// Who sent the ICMP message (`SO_EE_OFFENDER`): the router or the server; nil when the
    /// kernel gave none (the local stack's errors) or the control data ends before it.
    public var offender: PacketAddress?

    public init(ipv6Level: Bool, errorNumber: UInt32, origin: UInt8, type: UInt8, code: UInt8, info: UInt32, data: UInt32 = 0,
                offender: PacketAddress? = nil) {
        self.ipv6Level = ipv6Level
        self.errorNumber = errorNumber
        self.origin = origin
        self.type = type
        self.code = code
        self.info = info
        self.data = data
        self.offender = offender
    }

    /// Bytes of `size_t` on this platform: the cmsg length field and the CMSG_ALIGN unit.
    static let word = MemoryLayout<Int>.size
    /// `sizeof(struct cmsghdr)` rounded up (CMSG_LEN(0)).
    static var headerLength: Int { (word + 8 + word - 1) / word * word }

    /// The first `IP_RECVERR` / `IPV6_RECVERR` control message in `control` (the bytes
    /// `recvmsg` filled, `msg_controllen` of them), or nil when there is none or it is cut short.
    public static func parse(control: UnsafeRawBufferPointer) -> SocketExtendedError? {
        var offset = 0
        while offset + headerLength <= control.count {
            let length = word == 8 ? Int(control.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                                   : Int(control.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            guard length >= headerLength, length <= control.count - offset else { return nil }
            let level = control.loadUnaligned(fromByteOffset: offset + word, as: Int32.self)
            let type = control.loadUnaligned(fromByteOffset: offset + word + 4, as: Int32.self)
            let matches = (level == levelIP && type == typeIPRecvErr) || (level == levelIPv6 && type == typeIPv6RecvErr)
            if matches {
                let d = offset + headerLength
                let dataLength = length - headerLength
                guard dataLength >= 16 else { return nil }
                return SocketExtendedError(ipv6Level: level == levelIPv6,
                                           errorNumber: control.loadUnaligned(fromByteOffset: d, as: UInt32.self),
                                           origin: control[d + 4], type: control[d + 5], code: control[d + 6],
                                           info: control.loadUnaligned(fromByteOffset: d + 8, as: UInt32.self),
                                           data: control.loadUnaligned(fromByteOffset: d + 12, as: UInt32.self),
                                           offender: offender(control, at: d + 16, count: dataLength - 16))
            }
            offset += (length + word - 1) / word * word
        }
        return nil
    }

    /// The `sockaddr_in` (family 2, the address at byte 4) or `sockaddr_in6` (family 10, the
    /// address at byte 8) at `at`, `count` bytes of it there; nil for another family or too few.
    static func offender(_ control: UnsafeRawBufferPointer, at: Int, count: Int) -> PacketAddress? {
        guard count >= 2 else { return nil }
        switch control.loadUnaligned(fromByteOffset: at, as: UInt16.self) {
        case 2 where count >= 8: return PacketAddress(reading: control.baseAddress! + at + 4, isIPv6: false)
        case 10 where count >= 24: return PacketAddress(reading: control.baseAddress! + at + 8, isIPv6: true)
        default: return nil
        }
    }
}

/// What tv does with one entry of an upstream UDP socket's error queue: which ICMP error, if
/// any, it writes into the TUN to the app, as the router that sent it would have (tun-nat.md
/// "MTU"; RFC 1191, RFC 8201, RFC 4443).
public enum UpstreamErrorAction: Equatable, Sendable {
    /// ICMP "fragmentation needed" (type 3 code 4, RFC 1191) / ICMPv6 "packet too big" (type 2,
    /// RFC 4443 §3.2) carrying `mtu` bytes: a router further out could not carry the app's datagram.
    case pathTooSmall(mtu: Int)
    /// ICMP "port unreachable" (type 3 code 3) / ICMPv6 "port unreachable" (type 1 code 4): the
    /// app's connected socket reports ECONNREFUSED, as it would without tv.
    case portUnreachable
    /// Not from the error queue: tv itself could not send the app's datagram on
    /// (`UnsendableDatagram`), answered with a destination unreachable the app's kernel takes
    /// as a hard error.
    case unsendable(UnsendableDatagram)
    /// Nothing is written; the entry is only counted.
    case ignore(UpstreamErrorIgnored)
}

/// Why an error-queue entry is not passed on.
public enum UpstreamErrorIgnored: String, Equatable, Sendable {
    /// tv's own `send` failed (origin local, e.g. EMSGSIZE at the first hop): already answered
    /// when `send` returned the error (`EngineLoop.signalPathMTU`).
    case local
    /// Another ICMP message (host/net unreachable, time exceeded…), or one of the other family.
    case otherICMP
    /// "Packet too big" below IPv6's 1,280 (RFC 8201 §4: never lower the estimate below it), or
    /// "fragmentation needed" without a usable MTU (below IPv4's 68, RFC 791) and no usable
    /// estimate from the kernel either.
    case unusableMTU
    /// No `IP_RECVERR` / `IPV6_RECVERR` message in the control data, or an unknown origin.
    case unreadable
}

extension UDPPathMTU {
    /// The smallest MTU an IPv4 (68, RFC 791) / IPv6 (1,280, RFC 8200 §5) link may have.
    public static func minimumMTU(isIPv6: Bool) -> Int { isIPv6 ? 1_280 : 68 }

    /// The action for `entry`, read from the upstream socket of a flow of family `isIPv6`.
    /// - Parameters:
    ///   - entry: the parsed error (`SocketExtendedError.parse`), nil when unreadable.
    ///   - kernelPathMTU: the socket's `IP_MTU` / `IPV6_MTU` now (the kernel's path-MTU estimate,
    ///     already lowered by the same ICMP), or nil; used only when an IPv4 router sent no usable
    ///     MTU (RFC 1191 §5: old routers send 0).
    /// - Returns: `.pathTooSmall` with the router's MTU (`ee_info`) for ICMP type 3 code 4 / ICMPv6
    ///   type 2 code 0; `.portUnreachable` for type 3 code 3 / ICMPv6 type 1 code 4; else `.ignore`.
    public static func action(for entry: SocketExtendedError?, isIPv6: Bool, kernelPathMTU: Int?) -> UpstreamErrorAction {
        guard let entry else { return .ignore(.unreadable) }
        switch entry.origin {
        case SocketExtendedError.originLocal: return .ignore(.local)
        case SocketExtendedError.originICMP, SocketExtendedError.originICMP6: break
        default: return .ignore(.unreadable)
        }
        guard entry.origin == (isIPv6 ? SocketExtendedError.originICMP6 : SocketExtendedError.originICMP) else { return .ignore(.otherICMP) }
        let minimum = minimumMTU(isIPv6: isIPv6)
        switch (isIPv6, entry.type, entry.code) {
        case (false, 3, 4), (true, 2, 0):
            if entry.info >= UInt32(minimum) && entry.info <= 65_535 { return .pathTooSmall(mtu: Int(entry.info)) }
            if !isIPv6, let kernel = kernelPathMTU, kernel >= minimum, kernel <= 65_535 { return .pathTooSmall(mtu: kernel) }
            return .ignore(.unusableMTU)
        case (false, 3, 3), (true, 1, 4):
            return .portUnreachable
        default:
            return .ignore(.otherICMP)
        }
    }
}
