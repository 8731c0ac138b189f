import FlowTerms

/// Where the engine sends what a program addressed to `remote`: the tunnel's DNS address
/// (`TunnelAddressPlan.dns4`/`dns6`, port 53, which `tv exec`'s resolv.conf names) stands for
/// the host's resolvers, over UDP and over TCP alike (RFC 7766 §5: a client retries a
/// truncated answer over TCP to the same server, so TCP to the DNS address must reach them
/// too; a new-user trial found it refused); anything else goes where it was sent.
public enum DNSAddressRoute: Sendable, Equatable {
    /// Not for the DNS address (or the engine does not serve it): to `remote` itself.
    case asAddressed
    /// For the DNS address: to this resolver of the host's.
    case resolver(PacketEndpoint)
    /// For the DNS address, and the host has no resolver: refuse at once (UDP: SERVFAIL, TCP:
    /// a reset), so the program does not wait.
    case noResolver

    /// - Parameters:
    ///   - remote: the destination the program used.
    ///   - rotation: which resolver to use, modulo their number (`EngineLoop.resolverIndex`,
    ///     advanced when one stops answering).
    public init(remote: PacketEndpoint, configuration: TunnelEngineConfiguration, rotation: Int) {
        let plan = configuration.plan
        guard configuration.servesDNSAddress, remote.port == 53,
              remote.address == plan.dns4 || remote.address == plan.dns6 else {
            self = .asAddressed
            return
        }
        let resolvers = configuration.resolvers
        guard !resolvers.isEmpty else {
            self = .noResolver
            return
        }
        self = .resolver(PacketEndpoint(resolvers[((rotation % resolvers.count) + resolvers.count) % resolvers.count]))
    }
}

extension DNSServerAsked {
    /// Which server a program asked by sending to `remote` (port 53; nil for any other port):
    /// tv's DNS address (tv asks this host's resolver, or answers itself when there is none),
    /// or a server of the program's own choosing (a trial's `dig @server` read like `dig`).
    /// Where tv serves a DNS address (`tv exec`), that address is the system resolver (the
    /// namespace's resolv.conf names it), so any other server was asked directly, this host's
    /// own resolver too (the trial's was); elsewhere (`--mode tun`) a resolver this host's
    /// resolv.conf names (`TunnelEngineConfiguration.resolvers`) is the system's.
    public init?(remote: PacketEndpoint, configuration: TunnelEngineConfiguration) {
        guard remote.port == 53 else { return nil }
        let plan = configuration.plan
        if configuration.servesDNSAddress {
            let toTV = remote.address == plan.dns4 || remote.address == plan.dns6
            self = !toTV ? .direct : configuration.resolvers.isEmpty ? .tunnelAddressNoResolver : .tunnelAddress
        } else if configuration.resolvers.contains(where: { PacketEndpoint($0).address == remote.address }) {
            self = .systemResolver
        } else {
            self = .direct
        }
    }
}
