import TVHome

/// Whether `tv exec --proxy` joins the running session or starts one for CMD, decided from the
/// running session's `status` answer (nil: none runs). Pure.
public enum ExecProxyPlan: Sendable, Equatable {
    /// No session runs: one is started in this process, on 127.0.0.1 and a free port, inspecting.
    case start
    /// A session runs as an explicit proxy: CMD uses it where it listens.
    case join(host: String, port: UInt16, inspecting: Bool)

    /// The plan for a session answering `status` with `values` (nil: no session).
    /// - Throws: `ExecProxyError` when the running session cannot be CMD's proxy.
    public static func decide(status values: [String: String]?) throws -> ExecProxyPlan {
        guard let values else { return .start }
        let mode = values["mode"] ?? ""
        guard mode == "regular" else { throw ExecProxyError.sessionNotExplicit(mode: mode) }
        guard values["proxyAuth"] != "on" else { throw ExecProxyError.sessionAsksCredentials }
        let listen = values["listen"] ?? ""
        guard let (host, port) = split(listen) else { throw ExecProxyError.sessionAddressUnknown(listen: listen) }
        return .join(host: ProxyEnvironment.dialHost(forListenHost: host), port: port, inspecting: values["inspection"] == "on")
    }

    /// `127.0.0.1:8080` → ("127.0.0.1", 8080); `[::1]:8080` → ("::1", 8080); nil for anything else.
    static func split(_ text: String) -> (String, UInt16)? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0 else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }
}

/// Why `tv exec --proxy` cannot run CMD; each message says what to do.
public enum ExecProxyError: UserFacingError, Equatable {
    /// The running session is not an explicit proxy (`mode`: its `--mode`).
    case sessionNotExplicit(mode: String)
    /// The running session requires proxy credentials (`--proxy-auth`) tv exec does not know.
    case sessionAsksCredentials
    /// The running session's `status` did not say where it listens.
    case sessionAddressUnknown(listen: String)
    /// There is no CA for CMD to trust (`directory`: the data folder's `ca/`).
    case noCA(directory: String)
    /// The CA cannot be used (`reason`: `CADoubt.message`).
    case caInDoubt(reason: String)
    /// A session started at the same moment took the control socket.
    case sessionRace(path: String)

    public var message: String {
        switch self {
        case .sessionNotExplicit(let mode):
            return "The running `tv run` session is in --mode \(mode), and `tv exec --proxy` needs an explicit proxy; stop it with `tv stop` (tv exec --proxy then starts its own), or run `sudo tv exec -- CMD`."
        case .sessionAsksCredentials:
            return "The running session asks its clients for a password (--proxy-auth), which `tv exec --proxy` cannot give CMD; stop it with `tv stop` (tv exec --proxy then starts its own), or set HTTPS_PROXY=http://USER:PASSWORD@HOST:PORT for CMD yourself."
        case .sessionAddressUnknown(let listen):
            return "The running session did not say where it listens ('\(listen)'); run the same version of tv as the session, or stop it with `tv stop`."
        case .noCA(let directory):
            return "`tv exec --proxy` gives CMD tv's root to trust, and there is no CA in \(directory) yet; make one with `tv ca create` (it changes nothing outside the data folder) and run it again."
        case .caInDoubt(let reason):
            return "`tv exec --proxy` gives CMD tv's root to trust, and the CA is in doubt (\(reason)); `tv ca status` says more."
        case .sessionRace(let path):
            return "Another session started at the same moment (\(path)); run the command again and it joins that session."
        }
    }
}
