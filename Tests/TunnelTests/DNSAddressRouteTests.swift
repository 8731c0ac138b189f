import FlowTerms
import Proxy
import Testing
@testable import Tunnel

/// Where the engine sends what a program addressed to the tunnel's DNS address: the host's
/// resolvers, over UDP and TCP alike (RFC 7766 §5: a truncated answer is asked again over TCP).
@Suite("the DNS address: its port 53 stands for the host's resolvers")
struct DNSAddressRouteTests {
    static let resolvers = [SocketAddress(numericHost: "127.0.0.53", port: 53)!, SocketAddress(numericHost: "::1", port: 53)!]

    static func configuration(serves: Bool = true, resolvers: [SocketAddress] = resolvers) -> TunnelEngineConfiguration {
        var c = TunnelEngineConfiguration(plan: TunnelAddressPlan(), listener4: (fd: -1, port: 1), listener6: nil)
        c.servesDNSAddress = serves
        c.resolvers = resolvers
        return c
    }

    static func route(_ address: String, _ port: UInt16, _ c: TunnelEngineConfiguration = configuration(), rotation: Int = 0) -> DNSAddressRoute {
        DNSAddressRoute(remote: PacketEndpoint(PacketAddress(address)!, port), configuration: c, rotation: rotation)
    }

    @Test("port 53 of 10.77.0.53 and fd77::53 goes to the resolver the rotation picks; the rotation wraps")
    func toTheResolvers() {
        #expect(Self.route("10.77.0.53", 53) == .resolver(PacketEndpoint(PacketAddress("127.0.0.53")!, 53)))
        #expect(Self.route("fd77::53", 53, rotation: 1) == .resolver(PacketEndpoint(PacketAddress("::1")!, 53)))
        #expect(Self.route("10.77.0.53", 53, rotation: 5) == .resolver(PacketEndpoint(PacketAddress("::1")!, 53)))
    }

    @Test("anything else goes where it was sent: another port, another address, an engine that does not serve the address")
    func asAddressed() {
        #expect(Self.route("10.77.0.53", 853) == .asAddressed)
        #expect(Self.route("10.77.0.54", 53) == .asAddressed)
        #expect(Self.route("192.0.2.1", 53) == .asAddressed)
        #expect(Self.route("10.77.0.53", 53, Self.configuration(serves: false)) == .asAddressed)
    }

    static func asked(_ address: String, _ port: UInt16 = 53, _ c: TunnelEngineConfiguration = configuration()) -> DNSServerAsked? {
        DNSServerAsked(remote: PacketEndpoint(PacketAddress(address)!, port), configuration: c)
    }

    @Test("the server a query's program asked: tv's DNS address (with or without a resolver behind it), or any other server directly under tv exec, the host's resolver too")
    func serverAsked() {
        #expect(Self.asked("10.77.0.53") == .tunnelAddress && Self.asked("fd77::53") == .tunnelAddress)
        #expect(Self.asked("fd77::53", 53, Self.configuration(resolvers: [])) == .tunnelAddressNoResolver)
        // A trial's `dig @10.241.0.2` asked the host's own resolver, past the namespace's resolv.conf.
        #expect(Self.asked("127.0.0.53") == .direct && Self.asked("8.8.8.8") == .direct)
        #expect(Self.asked("10.77.0.53", 853) == nil && Self.asked("8.8.8.8", 5353) == nil)
    }

    @Test("--mode tun (no DNS address of tv's): a resolver resolv.conf names is the system resolver, any other is asked directly")
    func serverAskedInTunMode() {
        let tun = Self.configuration(serves: false)
        #expect(Self.asked("127.0.0.53", 53, tun) == .systemResolver && Self.asked("::1", 53, tun) == .systemResolver)
        #expect(Self.asked("8.8.8.8", 53, tun) == .direct && Self.asked("10.77.0.53", 53, tun) == .direct)
    }

    @Test("no resolver on the host: refused at once")
    func noResolver() {
        #expect(Self.route("10.77.0.53", 53, Self.configuration(resolvers: [])) == .noResolver)
    }
}
