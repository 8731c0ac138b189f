/// TLS protocol version code points as they appear on the wire (RFC 8446 §4.1.2, Appendix D).
public enum TLSVersion {
    /// SSL 3.0, `0x0300`.
    public static let ssl3: UInt16 = 0x0300
    /// TLS 1.0, `0x0301`.
    public static let tls10: UInt16 = 0x0301
    /// TLS 1.1, `0x0302`.
    public static let tls11: UInt16 = 0x0302
    /// TLS 1.2, `0x0303`; also the `legacy_version` of every TLS 1.3 hello.
    public static let tls12: UInt16 = 0x0303
    /// TLS 1.3, `0x0304`; only ever negotiated through supported_versions (RFC 8446 §4.2.1).
    public static let tls13: UInt16 = 0x0304
}
