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
    /// When decrypted content is kept this session: how long it is kept, in words (`1 day`);
    /// nil when nothing is kept.
    public var contentKeptFor: String?
    /// Why decrypted content asked for with `--keep-content` is not kept (inspection is off),
    /// nil otherwise: the option was ignored without a word (a trial).
    public var contentNotKept: String?
    /// The decrypted capture being written this session (`capture.decrypted`), nil when none.
    public var decryptedCapturePath: String?
    /// Mode-specific instructions (transparent: the redirect rules; tun: what was routed), printed
    /// instead of the "point a client at it" lines.
    public var extraLines: [String]
    /// The shared store this session also writes to, in words (`SharedStoreWiring.bannerText`);
    /// nil when none.
    public var sharedStore: String?
    /// Where `--metrics` serves the session's counters (`127.0.0.1:9464`), nil when it does not.
    public var metrics: String?
    /// `--proxy-auth`'s user name (nil: none): the example commands carry it, since a client
    /// without it is refused (407, or SOCKS5 "no acceptable method": a trial copied them).
    public var proxyUser: String?
    /// What `--upstream-insecure` means, for the banner and `tv status`.
    public static let serversNotVerified = "certificates NOT verified (--upstream-insecure): an impostor on the way to a server is shown to clients as that server"

    /// The data folder's disk full or short of the history's reserve at start, in words
    /// (`DiskRoomAtStart.line`); nil when it has room.
    public var disk: String?

    /// The connection cap, in words, when the file-descriptor limit made it small
    /// (`connectionCapLine`); nil otherwise.
    public var connectionCap: String?

    /// Caps under this are said in the banner: Chromium opens at most 256 connections per profile
    /// (`max_sockets_per_pool`), so one browser can meet a lower cap. Under `ulimit -n 64` the
    /// cap was 4, said only by the first refusal (a new-user trial).
    public static let smallConnectionCap = 256

    /// The banner's words for a connection cap of `cap` where `configured` was asked for, sized
    /// from the file-descriptor limit `limit`: nil unless the limit lowered it under
    /// `smallConnectionCap`.
    public static func connectionCapLine(cap: Int, configured: Int, limit: UInt64) -> String? {
        guard cap < configured, cap < smallConnectionCap else { return nil }
        return "at most \(cap) at once, as the open-file limit is \(limit); more are refused until some close "
            + "(raise the limit with `ulimit -n` before starting tv)"
    }

    /// `--upstream-insecure`: servers' certificates are not verified this session (it went
    /// unsaid, and the flows showed an expired server as inspected: a trial).
    public var upstreamInsecure = false
    /// A reverse target spoken to without TLS (`reverse:http://`): its clients speak plain HTTP
    /// to tv too (the banner offered `curl https://`, which hung: a trial).
    public var reversePlain = false

    public init(listen: String, mode: String, caFingerprint: String?, caPath: String?, inspecting: Bool,
                inspectionNote: String, dataFolder: String, keylogPath: String?, contentKeptFor: String? = nil,
                decryptedCapturePath: String? = nil, extraLines: [String] = []) {
        self.decryptedCapturePath = decryptedCapturePath
        self.extraLines = extraLines
        self.contentKeptFor = contentKeptFor
        self.listen = listen
        self.mode = mode
        self.caFingerprint = caFingerprint
        self.caPath = caPath
        self.inspecting = inspecting
        self.inspectionNote = inspectionNote
        self.dataFolder = dataFolder
        self.keylogPath = keylogPath
    }

    /// A sentence continued after a dash starts in lower case ("The CA is in doubt" → "the CA is
    /// in doubt"), unless its first word is written in capitals (CA, TLS, HTTP).
    static func afterDash(_ sentence: String) -> String {
        let firstWord = sentence.prefix { $0 != " " }
        guard let first = firstWord.first, first.isUppercase,
              firstWord.dropFirst().contains(where: { $0.isLowercase }) || firstWord.count == 1 else { return sentence }
        return first.lowercased() + sentence.dropFirst()
    }

    /// The address a client on this machine dials for a listener on `listen`: the unspecified
    /// addresses (`0.0.0.0`, `[::]`) become loopback (`127.0.0.1`, `[::1]`); others are as given.
    static func reachable(_ listen: String) -> String {
        if listen.hasPrefix("0.0.0.0:") { return "127.0.0.1:" + listen.dropFirst("0.0.0.0:".count) }
        if listen.hasPrefix("[::]:") { return "[::1]:" + listen.dropFirst("[::]:".count) }
        return listen
    }

    public var lines: [String] {
        var out = ["tv is running: \(mode) on \(listen)."]
        if let fp = caFingerprint { out.append("  CA          SHA-256 \(fp)") }
        out.append("  inspection  \(inspecting ? "on" : "off") — \(Self.afterDash(inspectionNote))")
        out.append("  history     \(dataFolder) (`tv flows` lists what it saw)")
        if let disk { out.append("  disk        " + disk) }
        if let sharedStore { out.append("  shared      \(sharedStore)") }
        if let contentKeptFor {
            out.append("  content     kept: what inspected connections say is written to the data folder for \(contentKeptFor) (`tv turns ID`)")
        }
        if let contentNotKept { out.append("  content     not kept — \(contentNotKept)") }
        if let keylogPath { out.append("  key log     \(keylogPath) (TLS secrets for Wireshark; guard it)") }
        if upstreamInsecure { out.append("  servers     " + Self.serversNotVerified) }
        if let connectionCap { out.append("  connections " + connectionCap) }
        if let metrics { out.append("  metrics     http://\(metrics)/metrics (Prometheus text format; loopback unless --metrics-open)") }
        if let decryptedCapturePath {
            out.append("  decrypted   \(decryptedCapturePath) (inspected connections' plaintext as TCP for Wireshark; content: guard it)")
        }
        out.append("")
        let cacert = caPath.map { " --cacert \($0)" } ?? ""
        // A listener on every interface is reached from this machine at loopback; other machines
        // use one of this machine's addresses.
        let listen = Self.reachable(self.listen)
        if !extraLines.isEmpty {
            out += extraLines
        } else if mode.hasPrefix("explicit") {
            let user = proxyUser.map { "\($0):PASSWORD@" } ?? ""
            out.append("Point a client at it\(proxyUser == nil ? "" : " (with the password of --proxy-auth)"):")
            out.append("  curl -x http://\(user)\(listen)\(inspecting ? cacert : "") https://example.com/")
            out.append("  export https_proxy=http://\(user)\(listen) http_proxy=http://\(user)\(listen)   # most command-line tools")
            out.append("  a browser: HTTP and HTTPS proxy \(listen) in its proxy settings" + (proxyUser == nil ? "" : ", user \(proxyUser!)"))
        } else if mode.hasPrefix("SOCKS5") {
            out.append("Point a client at it\(proxyUser == nil ? "" : " (with the password of --proxy-auth)"):")
            if let proxyUser {
                out.append("  curl -x socks5h://\(proxyUser):PASSWORD@\(listen)\(inspecting ? cacert : "") https://example.com/")
            } else {
                out.append("  curl --socks5-hostname \(listen)\(inspecting ? cacert : "") https://example.com/")
            }
        } else {
            out.append("Every connection to \(listen) goes to the reverse target:")
            out.append(reversePlain ? "  curl http://\(listen)/" : "  curl\(inspecting ? cacert : " -k") https://\(listen)/")
        }
        out.append("Stop with Ctrl-C or `tv stop`; `tv status` shows live counters.")
        return out
    }
}
