import FlowTerms
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Tunnel

/// The comment a capture keeps beside each ICMP error tv writes for a program: whose error it
/// is and what tv changed, since the capture is the program↔tv leg.
@Suite struct ICMPErrorNoteTests {
    static let tv = PacketEndpoint(PacketAddress("10.42.1.2")!, 51234)
    static let server = PacketEndpoint(PacketAddress("10.42.3.2")!, 21101)

    @Test("a router's fragmentation needed passed on: who sent it, about which of tv's datagrams, and what the quote holds")
    func forwarded() {
        #expect(ICMPErrorNote.forwarded(.pathTooSmall(mtu: 1280), isIPv6: false, from: PacketAddress("10.42.1.1"), tvSent: Self.tv,
                                        upstream: Self.server, quotedPayload: 520, lengthsKnown: true)
                == "tv's copy for the program of the ICMP fragmentation needed (next-hop MTU 1280) 10.42.1.1 sent about tv's datagram 10.42.1.2:51234 → 10.42.3.2:21101; "
                + "it quotes the program's datagram instead (its headers as the program sent them, then the 520 payload bytes 10.42.1.1 quoted), "
                + "since the program's kernel finds its socket by the quoted addresses and ports")
        #expect(ICMPErrorNote.forwarded(.pathTooSmall(mtu: 1280), isIPv6: true, from: nil, tvSent: nil,
                                        upstream: PacketEndpoint(PacketAddress("fd42:3::2")!, 21101), quotedPayload: 1_184, lengthsKnown: false)
                == "tv's copy for the program of the ICMPv6 packet too big (MTU 1280) the network sent about tv's datagram to [fd42:3::2]:21101; "
                + "it quotes the program's datagram instead (its addresses and ports with lengths that count only the 1,184 payload bytes the network quoted "
                + "(tv no longer had that datagram's headers)), since the program's kernel finds its socket by the quoted addresses and ports")
        #expect(ICMPErrorNote.words(.portUnreachable, isIPv6: false) == "ICMP port unreachable")
        #expect(ICMPErrorNote.words(.unsendable(.noRoute), isIPv6: true) == "ICMPv6 destination unreachable (reject route to destination)")
    }

    @Test("tv's own answers say no router or ICMP of the network's is behind them")
    func own() {
        #expect(ICMPErrorNote.ownPathMTU(mtu: 1280, length: 1_428, upstream: Self.server, isIPv6: false)
                == "tv's own ICMP fragmentation needed (next-hop MTU 1280): tv could not send this 1,428-byte datagram on to 10.42.3.2:21101 (EMSGSIZE: its path MTU there is 1280); no router sent it")
        #expect(ICMPErrorNote.ownUnsendable(.noRoute, error: Errno(ENETUNREACH), upstream: PacketAddress("10.42.9.9")!, isIPv6: false)
                == "tv's own ICMP destination unreachable (destination network unknown): tv could not send the datagram on to 10.42.9.9: network is unreachable (ENETUNREACH); no ICMP came from the network")
        #expect(ICMPErrorNote.ownConnectAnswer(type: 3, code: 1, error: Errno(EHOSTUNREACH), upstream: PacketEndpoint(PacketAddress("10.42.3.99")!, 21100),
                                               isIPv6: false)
                == "tv's own ICMP destination unreachable (host unreachable): tv's connect to 10.42.3.99:21100 failed: no route to host (EHOSTUNREACH); no ICMP of the network's is passed on")
    }
}
