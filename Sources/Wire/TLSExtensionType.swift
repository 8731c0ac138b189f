/// TLS extension code points this module reads (IANA "TLS ExtensionType Values" registry).
///
/// The parsers record every extension type in order; only these are decoded.
public enum TLSExtensionType {
    /// server_name, RFC 6066 §3.
    public static let serverName: UInt16 = 0
    /// supported_groups, RFC 8446 §4.2.7 (elliptic_curves in RFC 4492).
    public static let supportedGroups: UInt16 = 10
    /// signature_algorithms, RFC 8446 §4.2.3.
    public static let signatureAlgorithms: UInt16 = 13
    /// padding, RFC 7685 §3.
    public static let padding: UInt16 = 21
    /// application_layer_protocol_negotiation, RFC 7301 §3.1.
    public static let applicationLayerProtocolNegotiation: UInt16 = 16
    /// session_ticket, RFC 5077 §3.2.
    public static let sessionTicket: UInt16 = 35
    /// pre_shared_key, RFC 8446 §4.2.11.
    public static let preSharedKey: UInt16 = 41
    /// early_data, RFC 8446 §4.2.10.
    public static let earlyData: UInt16 = 42
    /// supported_versions, RFC 8446 §4.2.1.
    public static let supportedVersions: UInt16 = 43
    /// key_share, RFC 8446 §4.2.8.
    public static let keyShare: UInt16 = 51
}

extension TLSExtensionType {
    /// A name for reasons: "server_name (0)", or "type 17513" for one this module does not know.
    static func describe(_ type: UInt16) -> String {
        switch type {
        case serverName: "server_name (0)"
        case supportedGroups: "supported_groups (10)"
        case signatureAlgorithms: "signature_algorithms (13)"
        case applicationLayerProtocolNegotiation: "ALPN (16)"
        case padding: "padding (21)"
        case sessionTicket: "session_ticket (35)"
        case preSharedKey: "pre_shared_key (41)"
        case earlyData: "early_data (42)"
        case supportedVersions: "supported_versions (43)"
        case keyShare: "key_share (51)"
        default: "type \(type)"
        }
    }
}
