import LocalCA
import FlowTerms

/// Where a client connection is going: the interface between front-ends and the engine.
///
/// An explicit proxy learns it from the client (CONNECT, SOCKS5); reverse mode from its setting;
/// the transparent and TUN front-ends (later) from the packet's destination. A host may be a
/// name or a numeric address.
public struct OriginalDestination: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var origin: HostOrigin
    /// For an address `host` (the TUN front-end): the live names DNS answers gave it, the one to
    /// show first at the head (`LiveHostNames`). The flow is named after them (`HostOrigin.dns`)
    /// unless the connection announces its own; nothing is dialled or certified by them.
    public var inferredNames: [String]
    /// For a connection to port 53 the TUN front-end saw (DNS over TCP): which server the
    /// program asked at `host` (`FlowFacts.dnsServerAsked`); nil otherwise.
    public var dnsServerAsked: DNSServerAsked?

    public init(host: String, port: UInt16, origin: HostOrigin, inferredNames: [String] = [], dnsServerAsked: DNSServerAsked? = nil) {
        self.host = host
        self.port = port
        self.origin = origin
        self.inferredNames = inferredNames
        self.dnsServerAsked = dnsServerAsked
    }

    /// The address, when `host` is numeric.
    public var numericAddress: SocketAddress? { SocketAddress(numericHost: host, port: port) }

    /// The host as a name (lowercased, no trailing dot), or nil when it is an address.
    public var hostName: String? {
        guard IPAddress(host) == nil else { return nil }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name.isEmpty ? nil : name
    }

    public var description: String { Endpoint(address: host, port: port).description }
}

/// How a connection learns its destination.
enum FrontEndKind: Sendable, Hashable {
    /// Explicit HTTP proxy: CONNECT or absolute-form requests.
    case explicitHTTP
    /// SOCKS5 CONNECT.
    case socks5
    /// The destination is known at accept time (reverse mode, transparent, TUN). `upstreamTLS`:
    /// reverse mode says whether the server speaks TLS; nil means "whatever the client speaks".
    case fixed(OriginalDestination, upstreamTLS: Bool?)

    /// Whether the address the client connected to is tv's own listener rather than the
    /// destination (reverse mode): a leaf for a client without SNI must name it too
    /// (`LeafNamePlan`). In the TUN and transparent modes the client dialled the destination.
    var dialsListener: Bool {
        if case .fixed(let destination, _) = self { return destination.origin == .reverse }
        return false
    }

    /// Whether the client's socket is connected to tv's listener (the explicit proxy, SOCKS5,
    /// reverse mode), not to the destination (the TUN and transparent modes, where the flow's
    /// server is the socket's peer).
    var clientConnectsToListener: Bool {
        switch self {
        case .explicitHTTP, .socks5: true
        case .fixed: dialsListener
        }
    }
}
