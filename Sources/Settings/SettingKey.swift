import TVHome

/// A typed setting: its name in `settings.json`, its type, and the value it has until saved.
///
/// Adding a setting is one line in `SettingKeys` (and, if its type is new, a `SettingValue`
/// conformance); nothing else changes, because the file keeps keys it does not know.
public struct SettingKey<Value: SettingValue>: Sendable {
    /// The dotted name, e.g. `inspection.enabled`; also the JSON key.
    public let name: String
    /// The value before anything is saved (the factory value).
    public let defaultValue: Value
    /// One line for people: what the setting decides.
    public let summary: String

    public init(_ name: String, default defaultValue: Value, summary: String) {
        self.name = name
        self.defaultValue = defaultValue
        self.summary = summary
    }
}

/// Every setting `tv` knows, with its factory value.
public enum SettingKeys {
    /// Whether TLS inspection is on. Off by default; turned on only when the CA is usable for TLS
    /// (seed 002), and turned off by any command that finds the root no longer usable.
    public static let inspectionEnabled = SettingKey<Bool>(
        "inspection.enabled", default: false,
        summary: "Look inside your own TLS connections (needs a CA trusted for TLS).")
    /// The trust store whose answers decide whether inspection may be on: `system`, `file:PATH`,
    /// `dir:PATH` or `nss:DIR` (TrustStore.TrustStoreSpec parses it).
    public static let trustStore = SettingKey<String>(
        "trust.store", default: "system",
        summary: "The trust store checked before and during inspection (system, file:PATH, dir:PATH, nss:DIR).")
    /// Whether the first-run introduction was shown (skipping counts as seen; `tv intro` replays it).
    public static let introSeen = SettingKey<Bool>(
        "intro.seen", default: false,
        summary: "Whether the introduction was shown once.")
    /// Whether decrypted content (turns) is kept. Off by default; only turned on with inspection
    /// on; recorded only while inspection is on (seed 000, "Decrypted content").
    public static let contentKeep = SettingKey<Bool>(
        "content.keep", default: false,
        summary: "Keep what inspected (and plain) connections said, under a byte budget (needs inspection on).")
    /// How long kept content lives: `1h`, `1d` (default) or `1w`; never forever.
    public static let contentExpiry = SettingKey<String>(
        "content.expiry", default: "1d",
        summary: "How long kept content lives: 1h, 1d or 1w (never forever); decrypted captures closed longer ago are deleted, and packet captures older than it lose their TLS secrets.")
    /// Bytes kept per flow and direction (default 1 MiB); a turn keeps at most 64 KiB.
    public static let contentFlowBudget = SettingKey<Int>(
        "content.flowBudget", default: 1_048_576,
        summary: "Bytes of content kept per connection and direction (default 1048576); each turn keeps at most 64 KiB of it.")
    /// Client certificates for servers that ask for one, as `HOST_PATTERN=FILE` entries (the
    /// file: PEM certificate, chain and unencrypted key, 0600); used after `tv run --client-cert`.
    public static let clientCertificates = SettingKey<[String]>(
        "tls.clientCerts", default: [],
        summary: "Client certificates presented to servers that ask, as [\"HOST_PATTERN=FILE\", …] (after --client-cert).")
    /// Whether an inspecting session reads each HTTP exchange into a request row (`tv requests`).
    /// On by default (issue 16); off spares the CPU it costs per request (PERFORMANCE.md).
    public static let requestsRecord = SettingKey<Bool>(
        "requests.record", default: true,
        summary: "Keep a row per HTTP request inside inspected connections (method, path, status, sizes, times); applies at the next start.")
    /// Whether `tv run` prints one line per finished HTTP exchange (as `--log requests`).
    public static let logRequests = SettingKey<Bool>(
        "log.requests", default: false,
        summary: "Print one line per finished HTTP request while `tv run` runs (time, method, URL, status, size, duration).")

    // Issue 17: packet capture in TUN modes, and the captures' limits (the names
    // `captures.maxBytes` / `captures.maxAge` are shared with the storage work, issue 19).
    /// Whether TUN modes (`tv exec`, `--mode tun`) write every packet to a capture file.
    public static let captureEnabled = SettingKey<Bool>(
        "capture.enabled", default: true,
        summary: "Write every packet of tv exec and --mode tun to a pcapng file in the data folder's captures/.")
    /// Bytes kept of each packet (the file's snap length); applies when a session starts.
    public static let captureSnapLength = SettingKey<Int>(
        "capture.snaplen", default: 65_535,
        summary: "Bytes kept of each captured packet (the file's snap length); applies at the next start.")
    /// When the file being written is closed and the next opened, by size (`64MB`; `off`).
    public static let captureRotateBytes = SettingKey<String>(
        "capture.rotateBytes", default: "64MB",
        summary: "Start a new capture file once the open one reaches this size (e.g. 64MB; off): packet captures and decrypted captures alike.")
    /// …and by age (`1h`; `off`).
    public static let captureRotateAge = SettingKey<String>(
        "capture.rotateAge", default: "1h",
        summary: "Start a new capture file once the open one is this old (e.g. 1h; off): packet captures and decrypted captures alike.")
    /// The most the capture files may occupy together (`2GB`; `off`: no size limit).
    public static let capturesMaxBytes = SettingKey<String>(
        "captures.maxBytes", default: "2GB",
        summary: "The most all capture files, decrypted ones included, may occupy (e.g. 2GB; off for no size limit); the oldest closed ones go first.")
    /// How long a closed capture file is kept (`30d`; `off`: captures do not expire).
    public static let capturesMaxAge = SettingKey<String>(
        "captures.maxAge", default: "30d",
        summary: "How long a capture file is kept after it is closed (e.g. 30d; off: they do not expire); a decrypted capture, which holds plaintext, at most content.expiry.")

    // Issue 17: the decrypted capture.
    /// Whether inspected connections' plaintext is written as synthesized TCP to
    /// `captures/decrypted-….pcapng` (content: off unless asked; only while inspecting).
    public static let captureDecrypted = SettingKey<Bool>(
        "capture.decrypted", default: false,
        summary: "Write inspected connections' plaintext as TCP packets to captures/decrypted-….pcapng for Wireshark (content; needs inspection on).")
}

/// A setting with its type erased, for listing and for checking a file's values.
public struct AnySettingKey: Sendable {
    public let name: String
    public let summary: String
    /// The default, as a person reads it.
    public let defaultText: String
    /// The default, as the JSON file would hold it.
    public let defaultJSON: JSONValue
    /// Whether a JSON value has this setting's type.
    public let accepts: @Sendable (JSONValue) -> Bool

    public init<Value>(_ key: SettingKey<Value>) {
        name = key.name
        summary = key.summary
        defaultText = key.defaultValue.text
        defaultJSON = key.defaultValue.json
        accepts = { Value(json: $0) != nil }
    }
}

extension SettingKeys {
    /// Every known key, in the order `tv settings` lists them; a saved value of the wrong type for
    /// one of these makes the file corrupt.
    public static let all: [AnySettingKey] = [
        AnySettingKey(inspectionEnabled), AnySettingKey(trustStore), AnySettingKey(introSeen),
        AnySettingKey(contentKeep), AnySettingKey(contentExpiry), AnySettingKey(contentFlowBudget),
        AnySettingKey(clientCertificates), AnySettingKey(requestsRecord), AnySettingKey(logRequests),
        AnySettingKey(captureEnabled), AnySettingKey(captureSnapLength), AnySettingKey(captureRotateBytes),
        AnySettingKey(captureRotateAge), AnySettingKey(capturesMaxBytes), AnySettingKey(capturesMaxAge),
        // Issue 19: how long the history is kept.
        AnySettingKey(historyMaxAge),
        AnySettingKey(captureDecrypted),
        // Issue 25 (i21-pg): the shared store.
        AnySettingKey(storeURL),
    ]
}
