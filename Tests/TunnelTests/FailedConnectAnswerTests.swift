import FlowTerms
import Proxy
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Tunnel

/// How tv answers a program's SYN whose upstream connect failed: the ICMP whose errno (Linux's
/// `icmp_err_convert` / `icmpv6_err_convert`) is the error tv's own connect got, a reset where
/// no ICMP carries it. A trial's program saw ECONNREFUSED for EHOSTUNREACH and ENETUNREACH.
@Suite struct FailedConnectAnswerTests {
    static func answer(_ err: Int32, v6: Bool) -> FailedConnectAnswer { FailedConnectAnswer.choose(.connect(Errno(err)), isIPv6: v6) }

    @Test("no route, host unreachable, host down, isolated, a firewall: the ICMP code whose errno the program then sees, by family")
    func unreachable() {
        #expect(Self.answer(ENETUNREACH, v6: false) == .unreachable(code: 0, programSees: Errno(ENETUNREACH)))
        #expect(Self.answer(ENETUNREACH, v6: true) == .unreachable(code: 0, programSees: Errno(ENETUNREACH)))
        #expect(Self.answer(EHOSTUNREACH, v6: false) == .unreachable(code: 1, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(EHOSTUNREACH, v6: true) == .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(EHOSTDOWN, v6: false) == .unreachable(code: 7, programSees: Errno(EHOSTDOWN)))
        #expect(Self.answer(EHOSTDOWN, v6: true) == .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(ENONET, v6: false) == .unreachable(code: 8, programSees: Errno(ENONET)))
        #expect(Self.answer(ENONET, v6: true) == .unreachable(code: 3, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(EACCES, v6: false) == .unreachable(code: 13, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(EPERM, v6: false) == .unreachable(code: 13, programSees: Errno(EHOSTUNREACH)))
        #expect(Self.answer(EACCES, v6: true) == .unreachable(code: 1, programSees: Errno(EACCES)))
        #expect(Self.answer(EPERM, v6: true) == .unreachable(code: 1, programSees: Errno(EACCES)))
    }

    @Test("a refusal keeps the reset, and so do tv's own failures, which no ICMP says")
    func reset() {
        #expect(Self.answer(ECONNREFUSED, v6: false) == .reset)
        #expect(Self.answer(ECONNREFUSED, v6: true) == .reset)
        #expect(Self.answer(EMFILE, v6: false) == .reset)
        #expect(FailedConnectAnswer.choose(.mark(Errno(EPERM)), isIPv6: false) == .reset)
        #expect(FailedConnectAnswer.choose(.noAddress, isIPv6: true) == .reset)
        #expect(FailedConnectAnswer.choose(.noResolver, isIPv6: false) == .reset)
        #expect(FailedConnectAnswer.reset.clientAnswer == .reset)
    }

    /// A trial: a blackholed server (SYNs dropped on the path) read ECONNREFUSED after tv's 10 s,
    /// where curl --connect-timeout 2 timed out (rc 28) and Python's socket.timeout came without tv.
    @Test("no answer from the server (tv's kernel's ETIMEDOUT, or a timeout of tv's) is answered with nothing, in both families")
    func nothing() {
        #expect(Self.answer(ETIMEDOUT, v6: false) == .nothing)
        #expect(Self.answer(ETIMEDOUT, v6: true) == .nothing)
        #expect(FailedConnectAnswer.choose(.noAnswer(seconds: 10), isIPv6: false) == .nothing)
        #expect(FailedConnectAnswer.choose(.noAnswer(seconds: nil), isIPv6: true) == .nothing)
        #expect(FailedConnectAnswer.nothing.clientAnswer == .nothing)
    }

    @Test("the flow's sentence says what the program was told: the reset's ECONNREFUSED, or the ICMP's error by name")
    func sentences() {
        let target = "10.203.0.99:80"
        #expect(ConnectionFailure.unreachable(target: target, .connect(Errno(EHOSTUNREACH)),
                                              answered: Self.answer(EHOSTUNREACH, v6: false).clientAnswer).sentence
                == "tv could not connect to 10.203.0.99:80 (no route to host) and answered the program's connection request with ICMP destination unreachable, so its connect failed with no route to host (EHOSTUNREACH)")
        #expect(ConnectionFailure.unreachable(target: "10.205.0.2:443", .connect(Errno(ENETUNREACH)),
                                              answered: Self.answer(ENETUNREACH, v6: false).clientAnswer).sentence
                == "tv could not connect to 10.205.0.2:443 (network is unreachable) and answered the program's connection request with ICMP destination unreachable, so its connect failed with network is unreachable (ENETUNREACH)")
        #expect(ConnectionFailure.unreachable(target: target, .connect(Errno(ECONNREFUSED)),
                                              answered: Self.answer(ECONNREFUSED, v6: false).clientAnswer).sentence
                == "tv could not connect to 10.203.0.99:80 (connection refused) and answered the program with a reset, so the program saw connection refused (ECONNREFUSED)")
        // No answer: what tv did, never what the program saw (it may have given up first).
        #expect(ConnectionFailure.unreachable(target: "10.203.0.2:43197", .connect(Errno(ETIMEDOUT)),
                                              answered: Self.answer(ETIMEDOUT, v6: false).clientAnswer).sentence
                == "tv's connect to 10.203.0.2:43197 got no answer (connection timed out); tv answered the program nothing, as the network did")
        #expect(ConnectionFailure.unreachable(target: "[fd03::2]:443", .noAnswer(seconds: 10), answered: .nothing).sentence
                == "tv's connect to [fd03::2]:443 got no answer within 10 s; tv answered the program nothing, as the network did")
        #expect(ConnectionFailure.unreachable(target: "[fd03::2]:443", .noAnswer(seconds: nil), answered: .nothing).sentence
                == "tv's connect to [fd03::2]:443 got no answer; tv answered the program nothing, as the network did")
    }

    /// The program's SYN 10.77.0.1:40000 → 10.203.0.99:80 (ISN 0x11223344, MSS 1460), and tv's
    /// ICMP type 3 code 1 from 10.203.0.99 (Identification 5) quoting it whole; built by a separate
    /// Python script with its own RFC 1071 checksum, read by `tcpdump -vvv -r` as "ICMP host
    /// 10.203.0.99 unreachable" with no checksum complaint.
    static let syn4: [UInt8] = [
        0x45, 0x00, 0x00, 0x2c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0x25, 0x50, 0x0a, 0x4d, 0x00, 0x01,
        0x0a, 0xcb, 0x00, 0x63, 0x9c, 0x40, 0x00, 0x50, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00,
        0x60, 0x02, 0xfa, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
    ]
    static let hostUnreachable4: [UInt8] = [
        0x45, 0x00, 0x00, 0x48, 0x00, 0x05, 0x00, 0x00, 0x40, 0x01, 0x65, 0x35, 0x0a, 0xcb, 0x00, 0x63,
        0x0a, 0x4d, 0x00, 0x01, 0x03, 0x01, 0xb9, 0x5c, 0x00, 0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x2c,
        0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0x25, 0x50, 0x0a, 0x4d, 0x00, 0x01, 0x0a, 0xcb, 0x00, 0x63,
        0x9c, 0x40, 0x00, 0x50, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00, 0x60, 0x02, 0xfa, 0xf0,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
    ]

    @Test("the ICMP quotes the program's SYN as it sent it, so its kernel finds the socket by the quoted ports and sequence number")
    func quotesTheSYN() throws {
        var out = [UInt8](repeating: 0, count: 256)
        let n = try #require(out.withUnsafeMutableBytes { buffer in
            Self.syn4.withUnsafeBytes {
                PacketBuilder.icmpError(into: buffer, type: 3, code: 1, word: 0, original: $0, originalLength: Self.syn4.count,
                                        source: PacketAddress("10.203.0.99")!, identification: 5)
            }
        })
        #expect(Array(out.prefix(n)) == Self.hostUnreachable4)
    }
}
