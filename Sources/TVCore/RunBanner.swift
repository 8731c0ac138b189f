import LocalCA

/// What `tv run` says when it starts: where it listens, the CA, whether it inspects and why, and
/// exactly how to point a client at it.
public struct RunBanner: Sendable, Equatable {
    public var listen: String
    public var mode: String
    /// The root's SHA-256 (colon hex) and its file, when a CA is loaded.
    public var caFingerprint: String?
    public var caPath: String?
    public var inspecting: Bool
    /// Why inspection is off, or a note on why it is on (one sentence).
    public var inspectionNote: String
    public var dataFolder: String
    public var keylogPath: String?
    /// Mode-specific instructions (transparent: the redirect rules; tun: what was routed), printed
    /// instead of the "point a client at it" lines.
    public var extraLines: [String]

    public init(listen: String, mode: String, caFingerprint: String?, caPath: String?, inspecting: Bool,
                inspectionNote: String, dataFolder: String, keylogPath: String?, extraLines: [String] = []) {
        self.extraLines = extraLines
        self.listen = listen
        self.mode = mode
        self.caFingerprint = caFingerprint
        self.caPath = caPath
        self.inspecting = inspecting
        self.inspectionNote = inspectionNote
        self.dataFolder = dataFolder
        self.keylogPath = keylogPath
    }

    public var lines: [String] {
        var out = ["tv is running: \(mode) on \(listen)."]
        if let fp = caFingerprint { out.append("  CA          SHA-256 \(fp)") }
        out.append("  inspection  \(inspecting ? "on" : "off") — \(inspectionNote)")
        out.append("  history     \(dataFolder) (`tv flows` lists what it saw)")
        if let keylogPath { out.append("  key log     \(keylogPath) (TLS secrets for Wireshark; guard it)") }
        out.append("")
        let cacert = caPath.map { " --cacert \($0)" } ?? ""
        if !extraLines.isEmpty {
            out += extraLines
        } else if mode.hasPrefix("explicit") {
            out.append("Point a client at it:")
            out.append("  curl -x http://\(listen)\(inspecting ? cacert : "") https://example.com/")
            out.append("  export https_proxy=http://\(listen) http_proxy=http://\(listen)   # most command-line tools")
            out.append("  a browser: HTTP and HTTPS proxy \(listen) in its proxy settings")
        } else if mode.hasPrefix("SOCKS5") {
            out.append("Point a client at it:")
            out.append("  curl --socks5-hostname \(listen)\(inspecting ? cacert : "") https://example.com/")
        } else {
            out.append("Every connection to \(listen) goes to the reverse target:")
            out.append("  curl\(inspecting ? cacert : " -k") https://\(listen)/")
        }
        out.append("Stop with Ctrl-C or `tv stop`; `tv status` shows live counters.")
        return out
    }
}
