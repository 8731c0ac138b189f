/// Why tv passes a client's connections to a host and port through unread (`tv pinned` lists
/// them; the flow database stores the raw value).
public enum PinKind: String, Sendable, Hashable, CaseIterable {
    /// The client finished tv's handshake, closed without sending anything, and came back: it
    /// checks a pin (possible pinning, `curl --pinnedpubkey`).
    case pinned
    /// The client refused tv's certificate with an alert that says it does not trust the issuer
    /// (unknown_ca, bad_certificate, certificate_unknown): it was not given tv's root.
    case lacksRoot = "lacks_root"

    /// The kind in words, for `tv pinned`: "pinned", "lacks tv's root".
    public var words: String {
        switch self {
        case .pinned: return "pinned"
        case .lacksRoot: return "lacks tv's root"
        }
    }
}
