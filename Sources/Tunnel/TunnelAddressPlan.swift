/// The addresses, names and sizes of one TUN front-end (tun-nat.md notation):
/// `C` = the TUN's own address per family (the listener binds there), `FP` = the fake-peer pools
/// (inside the TUN's subnet, configured on no interface, so they route into the TUN), the DNS
/// address (`VIP`) for `tv exec`'s resolv.conf, the device's MTU and queue length.
public struct TunnelAddressPlan: Sendable, Equatable {
    /// The interface name (at most 15 bytes).
    public var deviceName = "tv0"
    /// The TUN's MTU. `tv exec` and `--mode tun` set the egress link's (`EgressMTU.current`)
    /// unless `--mtu` says otherwise, so large UDP is fragmented by the program's kernel as
    /// without tv (tv reassembles it); TCP still comes in 64 KB super-packets (TSO on the TUN).
    public var mtu = EgressMTU.fallback
    /// The TX queue (kernel → tv) length; the default 500 dropped packets under load.
    public var txQueueLength = 10_000

    public var address4 = PacketAddress("10.77.0.1")!
    public var prefix4 = 24
    /// First address of the IPv4 fake pool (10.77.0.129 … 10.77.0.254).
    public var fakePool4 = PacketAddress("10.77.0.129")!
    public var fakePool4Count: UInt64 = 126
    public var dns4 = PacketAddress("10.77.0.53")!

    /// IPv6 (nil: IPv4 only, e.g. when the kernel has IPv6 off).
    public var address6: PacketAddress? = PacketAddress("fd77::1")!
    public var prefix6 = 64
    public var fakePool6 = PacketAddress("fd77::f:0")!
    public var fakePool6Count: UInt64 = 256
    public var dns6 = PacketAddress("fd77::53")!

    /// Ports of the fake peers.
    public var fakePorts: ClosedRange<UInt16> = 10_000...59_999

    public init() {}

    /// `10.77.0.1/24`
    public var cidr4: String { "\(address4)/\(prefix4)" }
    /// `fd77::1/64`
    public var cidr6: String? { address6.map { "\($0)/\(prefix6)" } }
    /// Whether `address` is in the TUN's IPv4 or IPv6 network.
    public func holds(_ address: PacketAddress) -> Bool {
        if address.isIPv6 { return address6.map { address.isIn($0, prefixLength: prefix6) } ?? false }
        return address.isIn(address4, prefixLength: prefix4)
    }


    /// The resolv.conf `tv exec` bind-mounts: the DNS addresses served through the tunnel.
    public var resolvConf: String {
        var text = "# Written by tv exec: DNS goes through the tunnel to this host's resolvers.\n"
        text += "nameserver \(dns4)\n"
        if address6 != nil { text += "nameserver \(dns6)\n" }
        return text
    }
}
