import CTVShims
import Testing
@testable import ProgramLookup

@Suite("sock_diag messages: the request from the kernel's structs, answers parsed by their layout")
struct SockDiagMessageTests {
    @Test("the parser's sizes and offsets are linux/inet_diag.h's and linux/netlink.h's")
    func layoutMatchesTheKernelHeaders() {
        var layout = [Int32](repeating: 0, count: 12)
        layout.withUnsafeMutableBufferPointer { tv_inet_diag_layout($0.baseAddress) }
        // nlmsghdr 16, inet_diag_msg 72, uid at 64, inode at 68, sport 4, src 8, dst 24,
        // NLMSG_DONE 3, NLMSG_ERROR 2, SOCK_DIAG_BY_FAMILY 20, dport 6, inet_diag_req_v2 56.
        #expect(layout == [16, 72, 64, 68, 4, 8, 24, 3, 2, 20, 6, 56])
        #expect(SockDiagMessage.headerSize == Int(layout[0]) && SockDiagMessage.socketSize == Int(layout[1]))
        #expect(SockDiagMessage.typeDone == UInt16(layout[7]) && SockDiagMessage.typeError == UInt16(layout[8])
                && SockDiagMessage.typeSockDiag == UInt16(layout[9]))
    }

    @Test("a dump request for TCP over IPv4 from local port 54321: nlmsghdr then inet_diag_req_v2, byte for byte")
    func request() {
        let bytes = SockDiagMessage.request(family: 2, proto: 6, states: SockDiagMessage.connectedTCPStates, sourcePort: 54_321, sequence: 7)
        let expected: [UInt8] = [
            72, 0, 0, 0,   20, 0,   0x01, 0x03,   7, 0, 0, 0,   0, 0, 0, 0,    // len, SOCK_DIAG_BY_FAMILY, REQUEST|DUMP, seq, pid
            2, 6, 0, 0,    0xFF, 0x0B, 0, 0,                                    // AF_INET, TCP, ext, pad, states (all but LISTEN)
            0xD4, 0x31, 0, 0,                                                   // sport 54321 (big-endian), dport any
        ] + [UInt8](repeating: 0, count: 32)                                    // src, dst: any
          + [0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8)                   // interface any, INET_DIAG_NOCOOKIE
        #expect(bytes == expected)
    }

    @Test("an exact request for TCP 10.0.0.2:54321 → 93.184.216.34:443 and for [fd00::2]:40000 → [2001:db8::1]:80: REQUEST alone (no DUMP), the four-tuple, any cookie")
    func exactRequest() {
        let four = SockDiagMessage.exactRequest(family: 2, proto: 6, source: [10, 0, 0, 2], sourcePort: 54_321,
                                                destination: [93, 184, 216, 34], destinationPort: 443, sequence: 9)
        let expected4: [UInt8] = [
            72, 0, 0, 0,   20, 0,   0x01, 0x00,   9, 0, 0, 0,   0, 0, 0, 0,    // len, SOCK_DIAG_BY_FAMILY, REQUEST, seq, pid
            2, 6, 0, 0,    0xFF, 0xFF, 0xFF, 0xFF,                              // AF_INET, TCP, ext, pad, states (unused)
            0xD4, 0x31, 0x01, 0xBB,                                             // sport 54321, dport 443 (big-endian)
            10, 0, 0, 2] + [UInt8](repeating: 0, count: 12)                     // src
          + [93, 184, 216, 34] + [UInt8](repeating: 0, count: 12)               // dst
          + [0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8)                   // interface any, INET_DIAG_NOCOOKIE
        #expect(four == expected4)
        let src6: [UInt8] = [0xFD, 0] + [UInt8](repeating: 0, count: 13) + [2]
        let dst6: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
        let six = SockDiagMessage.exactRequest(family: 10, proto: 6, source: src6, sourcePort: 40_000, destination: dst6,
                                               destinationPort: 80, sequence: 1)
        #expect(six.count == 72 && Array(six[16..<20]) == [10, 6, 0, 0] && Array(six[24..<28]) == [0x9C, 0x40, 0, 80]
                && Array(six[28..<44]) == src6 && Array(six[44..<60]) == dst6)
        // An address of the other family's width is no request.
        #expect(SockDiagMessage.exactRequest(family: 2, proto: 6, source: src6, sourcePort: 1, destination: [1, 2, 3, 4],
                                             destinationPort: 2, sequence: 1) == [])
    }

    @Test("the answer to an exact request: one socket and no NLMSG_DONE; none is NLMSG_ERROR -ENOENT")
    func exactAnswer() throws {
        let one = Self.socketMessage(state: 1, src: [10, 0, 0, 2], sport: 54_321, dst: [93, 184, 216, 34], dport: 443, uid: 0, inode: 77)
        let parsed = try SockDiagMessage.parse(one)
        #expect(parsed.sockets.map(\.inode) == [77] && parsed.done == false)
        let enoent: [UInt8] = [36, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16)
        #expect(throws: SockDiagError.kernel(errno: 2)) { try SockDiagMessage.parse(enoent) }
    }

    /// One `inet_diag_msg` as the kernel lays it out, with a 4-byte attribute after it.
    static func socketMessage(state: UInt8, src: [UInt8], sport: UInt16, dst: [UInt8], dport: UInt16, uid: UInt32, inode: UInt32) -> [UInt8] {
        var msg: [UInt8] = [96, 0, 0, 0, 20, 0, 2, 0, 7, 0, 0, 0, 0x39, 0x30, 0, 0]   // len 16 + 72 + 8, type 20, NLM_F_MULTI, seq 7, pid 12345
        msg += [2, state, 0, 0, UInt8(sport >> 8), UInt8(sport & 0xFF), UInt8(dport >> 8), UInt8(dport & 0xFF)]
        msg += src + [UInt8](repeating: 0, count: 16 - src.count) + dst + [UInt8](repeating: 0, count: 16 - dst.count)
        msg += [1, 0, 0, 0] + [UInt8](repeating: 0xAB, count: 8)                       // if 1, cookie
        msg += [0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0]                                   // expires, rqueue, wqueue
        msg += withUnsafeBytes(of: uid.littleEndian, Array.init) + withUnsafeBytes(of: inode.littleEndian, Array.init)
        msg += [8, 0, 8, 0, 0, 0, 0, 0]                                                // INET_DIAG_SHUTDOWN (8), value 0
        return msg
    }

    @Test("an answer with one ESTABLISHED socket 127.0.0.1:54321 → 127.0.0.1:8080 (uid 1000, inode 4522727), then NLMSG_DONE")
    func parseSocketThenDone() throws {
        let done: [UInt8] = [20, 0, 0, 0, 3, 0, 2, 0, 7, 0, 0, 0, 0x39, 0x30, 0, 0, 0, 0, 0, 0]
        let answer = Self.socketMessage(state: 1, src: [127, 0, 0, 1], sport: 54_321, dst: [127, 0, 0, 1], dport: 8080, uid: 1000, inode: 4_522_727) + done
        let parsed = try SockDiagMessage.parse(answer)
        #expect(parsed.done)
        #expect(parsed.sockets == [DiagSocket(family: 2, state: 1, source: [127, 0, 0, 1], sourcePort: 54_321,
                                              destination: [127, 0, 0, 1], destinationPort: 8080, uid: 1000, inode: 4_522_727)])
        // A part without DONE: more follows.
        #expect(try SockDiagMessage.parse(Array(answer.prefix(96))).done == false)
    }

    @Test("malformed answers: a cut header, a length past the buffer, a short inet_diag_msg, the kernel's NLMSG_ERROR -EPERM")
    func errors() {
        let full = Self.socketMessage(state: 1, src: [127, 0, 0, 1], sport: 1, dst: [127, 0, 0, 1], dport: 2, uid: 0, inode: 1)
        #expect(throws: SockDiagError.malformed(offset: 0)) { try SockDiagMessage.parse(Array(full.prefix(10))) }
        #expect(throws: SockDiagError.malformed(offset: 0)) { try SockDiagMessage.parse(Array(full.prefix(60))) }
        var short = Array(full.prefix(40))
        short[0] = 40
        #expect(throws: SockDiagError.shortSocket(offset: 0)) { try SockDiagMessage.parse(short) }
        let eperm: [UInt8] = [36, 0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 16)
        #expect(throws: SockDiagError.kernel(errno: 1)) { try SockDiagMessage.parse(eperm) }
        // A length below the header's own size never loops.
        #expect(throws: SockDiagError.malformed(offset: 0)) { try SockDiagMessage.parse([4, 0, 0, 0] + [UInt8](repeating: 0, count: 12)) }
    }
}
