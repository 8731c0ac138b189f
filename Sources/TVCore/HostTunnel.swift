import Proxy
import Tunnel

/// `--mode tun` options: the device, the routing table and rule priorities, the mark.
public struct HostTunnelOptions: Sendable {
    public var deviceName = "tv0"
    /// The routing table holding the TUN's default route, and the mark that lets tv's own
    /// sockets bypass it (wg-quick's scheme).
    public var table: UInt32 = 0x7476
    public var mark: UInt32 = 0x7476
    public var mtu: Int?
    /// Print the routing changes without making them.
    public var dryRun = false
    public init() {}
}

/// The whole host through a TUN (tun-nat.md shape B).
final class HostTunnel: Sendable {
    let deviceName: String
    let listenDescription: String
    let summary: [String]
    var counters: [String: UInt64] { [:] }

    init(options: HostTunnelOptions, proxy: ProxyServer, wiring: SessionWiring, say: @escaping @Sendable (String) -> Void) throws {
        throw TunnelError.configuration(command: "--mode tun", output: "not built yet")
    }

    func stop() {}
}
