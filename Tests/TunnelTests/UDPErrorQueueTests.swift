import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Tunnel

/// Upstream UDP error-queue entries (IP_RECVERR / IPV6_RECVERR) and what tv writes to the app for
/// them. The control bytes follow the kernel's layout on LP64 Linux (x86_64, aarch64): `struct
/// cmsghdr` (size_t len, int level, int type: 16 bytes), `struct sock_extended_err` (16 bytes, host
/// byte order), the offender's sockaddr; each message padded to 8 bytes (CMSG_ALIGN).
@Suite struct UDPErrorQueueTests {
    /// Native-endian bytes of `value` (the kernel writes these fields in host order).
    static func native<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// One control message: header, data, padding to the next multiple of 8.
    static func cmsg(level: Int32, type: Int32, data: [UInt8]) -> [UInt8] {
        var out = native(UInt64(16 + data.count)) + native(level) + native(type) + data
        while out.count % 8 != 0 { out.append(0) }
        return out
    }

    /// `struct sock_extended_err` followed by the offender's address.
    static func extendedError(errno: UInt32, origin: UInt8, type: UInt8, code: UInt8, info: UInt32, offender: [UInt8]) -> [UInt8] {
        native(errno) + [origin, type, code, 0] + native(info) + native(UInt32(0)) + offender
    }

    /// sockaddr_in 10.203.0.2:0 (16 bytes) and sockaddr_in6 [fd03::2]:0 (28 bytes), family in host order.
    static let offender4: [UInt8] = native(UInt16(2)) + [0, 0, 10, 203, 0, 2] + [UInt8](repeating: 0, count: 8)
    static let offender6: [UInt8] = native(UInt16(10)) + [0, 0] + [0, 0, 0, 0] + [0xfd, 0x03] + [UInt8](repeating: 0, count: 13) + [2] + [0, 0, 0, 0]

    static func parse(_ control: [UInt8]) -> SocketExtendedError? {
        control.withUnsafeBytes { SocketExtendedError.parse(control: $0) }
    }

    @Test("IPv4 fragmentation needed: SOL_IP/IP_RECVERR, EMSGSIZE, origin ICMP, 3/4, MTU 1280 in ee_info")
    func fragmentationNeeded() throws {
        let control = Self.cmsg(level: 0, type: 11, data: Self.extendedError(errno: 90, origin: 2, type: 3, code: 4, info: 1280, offender: Self.offender4))
        #expect(control.count == 48 && control[0] == 48)   // CMSG_LEN(16 + 16), as the kernel sets it
        let entry = try #require(Self.parse(control))
        // The offender (SO_EE_OFFENDER) is who sent the ICMP: tv's copy comes from it.
        #expect(entry == SocketExtendedError(ipv6Level: false, errorNumber: 90, origin: 2, type: 3, code: 4, info: 1280,
                                             offender: PacketAddress("10.203.0.2")))
        #expect(UDPPathMTU.action(for: entry, isIPv6: false, kernelPathMTU: 1280) == .pathTooSmall(mtu: 1280))
    }

    @Test("IPv6 packet too big: SOL_IPV6/IPV6_RECVERR, origin ICMP6, 2/0, MTU 1280; the message is 60 bytes, padded to 64")
    func packetTooBig() throws {
        let control = Self.cmsg(level: 41, type: 25, data: Self.extendedError(errno: 90, origin: 3, type: 2, code: 0, info: 1280, offender: Self.offender6))
        #expect(control.count == 64 && control[0] == 60)
        let entry = try #require(Self.parse(control))
        #expect(entry == SocketExtendedError(ipv6Level: true, errorNumber: 90, origin: 3, type: 2, code: 0, info: 1280,
                                             offender: PacketAddress("fd03::2")))
        #expect(UDPPathMTU.action(for: entry, isIPv6: true, kernelPathMTU: 1500) == .pathTooSmall(mtu: 1280))
    }

    @Test("another control message first (IP_TTL, 20 bytes padded to 24) is stepped over; cut-short and foreign data give nil")
    func walking() throws {
        let ttl = Self.cmsg(level: 0, type: 2, data: Self.native(Int32(63)))
        #expect(ttl.count == 24)
        let error = Self.cmsg(level: 0, type: 11, data: Self.extendedError(errno: 111, origin: 2, type: 3, code: 3, info: 0, offender: Self.offender4))
        let entry = try #require(Self.parse(ttl + error))
        #expect(entry == SocketExtendedError(ipv6Level: false, errorNumber: 111, origin: 2, type: 3, code: 3, info: 0,
                                             offender: PacketAddress("10.203.0.2")))
        #expect(Self.parse(ttl) == nil)
        // The local stack's own error names no offender (AF_UNSPEC), nor does one cut before it.
        let local = Self.cmsg(level: 0, type: 11, data: Self.extendedError(errno: 90, origin: 1, type: 0, code: 0, info: 1500,
                                                                           offender: [UInt8](repeating: 0, count: 16)))
        #expect(Self.parse(local)?.offender == nil)
        let cut = Self.cmsg(level: 0, type: 11, data: Self.extendedError(errno: 90, origin: 2, type: 3, code: 4, info: 1280,
                                                                         offender: Array(Self.offender4.prefix(6))))
        #expect(Self.parse(cut) == SocketExtendedError(ipv6Level: false, errorNumber: 90, origin: 2, type: 3, code: 4, info: 1280))
        #expect(Self.parse([]) == nil)
        #expect(Self.parse(Array(error.prefix(40))) == nil)                    // cmsg_len 48 beyond the 40 bytes
        #expect(Self.parse(Self.cmsg(level: 0, type: 11, data: [1, 2, 3, 4])) == nil)   // too short for sock_extended_err
        var bogus = error
        bogus.replaceSubrange(0..<8, with: Self.native(UInt64(8)))             // shorter than its own header
        #expect(Self.parse(bogus) == nil)
    }

    static func entry(_ v6: Bool, origin: UInt8, type: UInt8, code: UInt8, info: UInt32 = 0) -> SocketExtendedError {
        SocketExtendedError(ipv6Level: v6, errorNumber: 0, origin: origin, type: type, code: code, info: info)
    }

    @Test("which entry becomes which ICMP to the app, with which MTU")
    func decisions() {
        let a = UDPPathMTU.action
        // Fragmentation needed: the router's MTU; 0 (RFC 1191 §5, old routers) → the kernel's estimate if usable.
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 1400), false, 1500) == .pathTooSmall(mtu: 1400))
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 68), false, nil) == .pathTooSmall(mtu: 68))
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 0), false, 1492) == .pathTooSmall(mtu: 1492))
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 0), false, nil) == .ignore(.unusableMTU))
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 67), false, 40) == .ignore(.unusableMTU))
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 4, info: 70_000), false, 1500) == .pathTooSmall(mtu: 1500))
        // Packet too big: at least 1,280 (RFC 8201 §4); the kernel's estimate is not used instead.
        #expect(a(Self.entry(true, origin: 3, type: 2, code: 0, info: 1280), true, nil) == .pathTooSmall(mtu: 1280))
        #expect(a(Self.entry(true, origin: 3, type: 2, code: 0, info: 9000), true, 1500) == .pathTooSmall(mtu: 9000))
        #expect(a(Self.entry(true, origin: 3, type: 2, code: 0, info: 1279), true, 1280) == .ignore(.unusableMTU))
        // Port unreachable, both families.
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 3), false, nil) == .portUnreachable)
        #expect(a(Self.entry(true, origin: 3, type: 1, code: 4), true, nil) == .portUnreachable)
        // Other ICMP: host/net unreachable, time exceeded, admin prohibited; the other family's origin.
        #expect(a(Self.entry(false, origin: 2, type: 3, code: 1), false, nil) == .ignore(.otherICMP))
        #expect(a(Self.entry(false, origin: 2, type: 11, code: 0), false, nil) == .ignore(.otherICMP))
        #expect(a(Self.entry(true, origin: 3, type: 1, code: 1), true, nil) == .ignore(.otherICMP))
        #expect(a(Self.entry(true, origin: 3, type: 3, code: 0), true, nil) == .ignore(.otherICMP))
        #expect(a(Self.entry(true, origin: 2, type: 3, code: 4, info: 1280), true, nil) == .ignore(.otherICMP))
        #expect(a(Self.entry(false, origin: 3, type: 2, code: 0, info: 1280), false, nil) == .ignore(.otherICMP))
        // tv's own failed send (answered when send returned EMSGSIZE), unknown origins, nothing readable.
        #expect(a(Self.entry(false, origin: 1, type: 0, code: 0, info: 1500), false, 1500) == .ignore(.local))
        #expect(a(Self.entry(true, origin: 1, type: 0, code: 0, info: 1280), true, 1280) == .ignore(.local))
        #expect(a(Self.entry(false, origin: 0, type: 3, code: 4, info: 1280), false, nil) == .ignore(.unreadable))
        #expect(a(Self.entry(false, origin: 4, type: 3, code: 4, info: 1280), false, nil) == .ignore(.unreadable))
        #expect(a(nil, false, 1280) == .ignore(.unreadable))
    }

    /// ICMP type 3 code 3 from 10.203.0.2 to 10.77.0.1, Identification 7, quoting
    /// `PathMTUSignalTests.original4`; built by a separate Python script (own RFC 1071 checksum),
    /// `tcpdump -vvv`: "ICMP 10.203.0.2 udp port 7007 unreachable", no checksum complaint.
    static let portUnreachable4: [UInt8] = [
            0x45, 0x00, 0x00, 0x4c, 0x00, 0x07, 0x00, 0x00, 0x40, 0x01, 0x65, 0x90, 0x0a, 0xcb, 0x00, 0x02,
            0x0a, 0x4d, 0x00, 0x01, 0x03, 0x03, 0x12, 0x45, 0x00, 0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x30,
            0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x13, 0x6f, 0x0a, 0x4d, 0x00, 0x01, 0x0a, 0xcb, 0x00, 0x02,
            0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xd8, 0x97, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
            0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
        ]
    /// ICMPv6 type 1 code 4 from fd03::2 to fd77::1 quoting `PathMTUSignalTests.original6`;
    /// tcpdump: "[icmp6 sum ok] ICMP6, destination unreachable, unreachable port".
    static let portUnreachable6: [UInt8] = [
            0x60, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x3a, 0x40, 0xfd, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfd, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x04, 0x92, 0xc7, 0x00, 0x00, 0x00, 0x00,
            0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40, 0xfd, 0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfd, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x9c, 0x40, 0x1b, 0x5f, 0x00, 0x1c, 0xf3, 0x33,
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
            0x10, 0x11, 0x12, 0x13,
        ]

    static func build(_ action: UpstreamErrorAction, _ original: [UInt8], source: String, identification: UInt16 = 0) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 2_048)
        let n = out.withUnsafeMutableBytes { buffer in
            original.withUnsafeBytes {
                PacketBuilder.icmpError(into: buffer, action: action, original: $0, originalLength: original.count,
                                        source: PacketAddress(source)!, identification: identification)
            }
        }
        return n.map { Array(out.prefix($0)) }
    }

    @Test("the ICMP errors, byte for byte: path too small equals PacketBuilder.pathTooSmall's; port unreachable both families; ignore writes nothing")
    func icmpErrors() {
        #expect(Self.build(.pathTooSmall(mtu: 1280), PathMTUSignalTests.original4, source: "10.203.0.2", identification: 7) == PathMTUSignalTests.expected4)
        #expect(Self.build(.pathTooSmall(mtu: 1280), PathMTUSignalTests.original6, source: "fd03::2") == PathMTUSignalTests.expected6)
        #expect(Self.build(.portUnreachable, PathMTUSignalTests.original4, source: "10.203.0.2", identification: 7) == Self.portUnreachable4)
        #expect(Self.build(.portUnreachable, PathMTUSignalTests.original6, source: "fd03::2") == Self.portUnreachable6)
        #expect(Self.build(.ignore(.otherICMP), PathMTUSignalTests.original4, source: "10.203.0.2") == nil)
        #expect(Self.build(.portUnreachable, PathMTUSignalTests.original4, source: "fd03::2") == nil)   // family mismatch
        #expect(Self.build(.portUnreachable, Array(PathMTUSignalTests.original4.prefix(19)), source: "10.203.0.2") == nil)
    }

    /// The port-unreachable fixtures above with the second byte of the ICMP header changed and
    /// the checksum adjusted by RFC 1624's incremental rule (the type/code word grows by the
    /// code's difference, so the checksum shrinks by it): computed apart from the builder.
    static func withCode(_ fixture: [UInt8], at offset: Int, code: UInt8) -> [UInt8] {
        var out = fixture
        let delta = Int(code) - Int(fixture[offset + 1])
        out[offset + 1] = code
        var sum = Int(UInt16(fixture[offset + 2]) << 8 | UInt16(fixture[offset + 3])) - delta
        if sum < 0 { sum += 0xffff }
        if sum > 0xffff { sum -= 0xffff }
        out[offset + 2] = UInt8(sum >> 8); out[offset + 3] = UInt8(sum & 0xff)
        return out
    }

    @Test("a datagram tv could not send: no route is type 3 code 6 / ICMPv6 1 code 6, refused 3/13 / 1/1, each a hard error on Linux; errno mapping")
    func unsendableDatagrams() {
        #expect(Self.build(.unsendable(.noRoute), PathMTUSignalTests.original4, source: "10.203.0.2", identification: 7)
                == Self.withCode(Self.portUnreachable4, at: 20, code: 6))
        #expect(Self.build(.unsendable(.prohibited), PathMTUSignalTests.original4, source: "10.203.0.2", identification: 7)
                == Self.withCode(Self.portUnreachable4, at: 20, code: 13))
        #expect(Self.build(.unsendable(.noRoute), PathMTUSignalTests.original6, source: "fd03::2") == Self.withCode(Self.portUnreachable6, at: 40, code: 6))
        #expect(Self.build(.unsendable(.prohibited), PathMTUSignalTests.original6, source: "fd03::2") == Self.withCode(Self.portUnreachable6, at: 40, code: 1))
        #expect(Self.withCode(Self.portUnreachable4, at: 20, code: 13)[22...23] == [0x12, 0x3b])
        #expect(UnsendableDatagram(errno: ENETUNREACH) == .noRoute && UnsendableDatagram(errno: EHOSTUNREACH) == .noRoute
                && UnsendableDatagram(errno: EHOSTDOWN) == .noRoute && UnsendableDatagram(errno: ENONET) == .noRoute)
        #expect(UnsendableDatagram(errno: EPERM) == .prohibited && UnsendableDatagram(errno: EACCES) == .prohibited)
        #expect(UnsendableDatagram(errno: ENOBUFS) == nil && UnsendableDatagram(errno: EMFILE) == nil && UnsendableDatagram(errno: ECONNREFUSED) == nil)
        #expect(UnsendableDatagram.noRoute.programSees(isIPv6: false).code == ENETUNREACH)
        #expect(UnsendableDatagram.prohibited.programSees(isIPv6: false).code == EHOSTUNREACH)
        #expect(UnsendableDatagram.noRoute.programSees(isIPv6: true).code == EACCES && UnsendableDatagram.prohibited.programSees(isIPv6: true).code == EACCES)
    }
}
