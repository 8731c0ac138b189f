import LocalCA
import Proxy

/// Whether a session's listener is open to other machines, and the warning
/// `tv run` says then (once, at start, even under `--quiet`: it is about who can read what).
public enum ListenExposure {
    /// Whether `address` (a numeric address) is reachable only from this machine: 127.0.0.0/8,
    /// `::1`, or IPv4-mapped 127.x (`::ffff:127.0.0.1`). The unspecified addresses (`0.0.0.0`,
    /// `::`) listen on every interface, so they are not.
    public static func isLoopback(_ address: String) -> Bool {
        IPAddress(address)?.isLoopback ?? false
    }

    /// The warning for an explicit or SOCKS5 proxy listening on `listen` beyond loopback without
    /// `--proxy-auth`, inspecting or not (an open proxy also reaches this machine's own
    /// 127.0.0.1 services); nil otherwise (other modes serve only what is sent to them:
    /// redirected or reverse-proxied connections).
    public static func warning(mode: ProxyMode, listen: Endpoint, inspecting: Bool, authenticated: Bool) -> String? {
        switch mode {
        case .regular, .socks5: break
        default: return nil
        }
        guard !authenticated, !isLoopback(listen.address) else { return nil }
        let fix = "require a password with --proxy-auth USER:PASSFILE, or listen on 127.0.0.1."
        if inspecting {
            return "listening on \(listen) with inspection on: anyone who can reach that address can use this proxy, "
                + "also to reach this machine's own 127.0.0.1 services, and read what it decrypts; " + fix
        }
        return "listening on \(listen): anyone who can reach that address can use this proxy, "
            + "also to reach this machine's own 127.0.0.1 services; " + fix
    }
}
