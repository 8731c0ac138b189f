import Testing
@testable import Tunnel

@Suite("EgressMTU: the TUN's default MTU is the route out's")
struct EgressMTUTests {
    @Test("the smaller of the two families' route MTUs; 1500 when neither is known; at least 1280 with IPv6 on the TUN (RFC 8200 §5), 576 without; at most 65535")
    func choose() {
        #expect(EgressMTU.choose(v4: 1500, v6: 1500, ipv6OnTUN: true) == 1500)
        #expect(EgressMTU.choose(v4: 9000, v6: 1500, ipv6OnTUN: true) == 1500)
        #expect(EgressMTU.choose(v4: 1420, v6: nil, ipv6OnTUN: true) == 1420)
        #expect(EgressMTU.choose(v4: nil, v6: 9000, ipv6OnTUN: true) == 9000)
        #expect(EgressMTU.choose(v4: nil, v6: nil, ipv6OnTUN: true) == 1500)
        #expect(EgressMTU.choose(v4: 1000, v6: nil, ipv6OnTUN: true) == 1280)
        #expect(EgressMTU.choose(v4: 1000, v6: nil, ipv6OnTUN: false) == 1000)
        #expect(EgressMTU.choose(v4: 65_536, v6: nil, ipv6OnTUN: true) == 65_535)
        #expect(EgressMTU.choose(v4: 0, v6: 1400, ipv6OnTUN: true) == 1400)
    }

    @Test("the kernel’s route MTU towards an address: towards 127.0.0.1 the loopback's 65536 capped at IPv4's 65535 (IP_MAX_MTU); none for text that is no address")
    func routeMTU() {
        #expect(EgressMTU.routeMTU(AF_INET_VALUE, "127.0.0.1", mark: nil) == 65_535)
        #expect(EgressMTU.routeMTU(AF_INET_VALUE, "not an address", mark: nil) == nil)
    }
}

/// AF_INET without importing Glibc into the test's namespace of names.
private let AF_INET_VALUE: Int32 = 2
