import LocalCA
import Proxy
import TVHome

/// Where `tv run --metrics` serves: a numeric address and port (`127.0.0.1:9464`, `[::1]:9464`,
/// `localhost:9464`, or a bare port on 127.0.0.1), loopback unless `--metrics-open` allows any.
///
/// Loopback only by default: the endpoint has no authentication, and its counters say how busy
/// this machine is and with what (named hosts are never exported, but volumes are).
public enum MetricsAddress {
    /// Reads `text`.
    /// - Parameter open: `--metrics-open` was given (any address allowed).
    /// - Throws: `MetricsError.badAddress` or `.notLoopback`.
    public static func parse(_ text: String, open: Bool) throws -> Endpoint {
        let hostPort: (String, UInt16)?
        if let port = UInt16(text), port > 0 {
            hostPort = ("127.0.0.1", port)
        } else {
            hostPort = splitHostPort(text, defaultPort: nil)
        }
        guard let (named, port) = hostPort else { throw MetricsError.badAddress(text) }
        let host = named == "localhost" ? "127.0.0.1" : named
        guard IPAddress(host) != nil else { throw MetricsError.badAddress(text) }
        let endpoint = Endpoint(address: host, port: port)
        if !open && !ListenExposure.isLoopback(host) { throw MetricsError.notLoopback(endpoint) }
        return endpoint
    }
}

/// Why `tv run --metrics` cannot serve.
public enum MetricsError: UserFacingError, Equatable {
    /// The address is not `HOST:PORT` with a numeric host (or `localhost`), nor a port.
    case badAddress(String)
    /// A non-loopback address without `--metrics-open`.
    case notLoopback(Endpoint)

    public var message: String {
        switch self {
        case .badAddress(let text):
            return "--metrics takes a numeric address and port such as 127.0.0.1:9464 or [::1]:9464, not '\(TerminalText.line(text))'."
        case .notLoopback(let endpoint):
            return "--metrics \(endpoint) would let other machines read this session's counters with no password; serve on 127.0.0.1 (a scraper elsewhere can reach it through an SSH tunnel), or add --metrics-open to serve there anyway."
        }
    }

    public var exitCode: Int32 { 2 }
}
