/// Which server a DNS query's program asked, as the tunnel saw its packets: the fact behind
/// `tv flow`'s "resolver" line (a program that asks a resolver of its own choosing, such as a
/// hard-coded 8.8.8.8, looked the same as one using the system's: a trial). Stored in the flow
/// database as the raw value, with the address the program asked beside it.
public enum DNSServerAsked: String, Sendable, Hashable, CaseIterable {
    /// tv's DNS address in the tunnel (`tv exec`'s resolv.conf names it): tv asked this host's
    /// resolver, the flow's server.
    case tunnelAddress = "tunnel_address"
    /// tv's DNS address in the tunnel, and this host names no resolver: tv answered the query
    /// itself (SERVFAIL), and no resolver was asked.
    case tunnelAddressNoResolver = "tunnel_address_no_resolver"
    /// A resolver this host's resolv.conf names, asked by the program itself (`--mode tun`).
    case systemResolver = "system_resolver"
    /// Another server, asked directly: not the system resolver.
    case direct
}

/// Where a flow's other names (`otherHosts`) came from. Stored in the flow database as the raw
/// value; nil in rows written before it was recorded.
public enum OtherHostsOrigin: String, Sendable, Hashable, CaseIterable {
    /// The explicit proxy's request (CONNECT or SOCKS5) named this host, the ClientHello another.
    case proxyRequest = "proxy_request"
    /// Names this session's lookups gave the server's address; the flow's own name is one of
    /// them (inferred from them, or announced and looked up too).
    case lookups
    /// Names this session's lookups gave the server's address; the connection announced a name
    /// none of them is (a CDN's shared address does this, and so does a connection to an address
    /// looked up under another name).
    case lookupsNotAnnounced = "lookups_not_announced"
}
