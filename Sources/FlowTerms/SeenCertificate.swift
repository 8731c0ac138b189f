/// One certificate of a server's chain as the upstream leg saw it: its SHA-256 (lowercase hex
/// without separators, what `flows.chain` lists) and its DER (X.690), kept once per fingerprint in
/// the `certificates` table.
public struct SeenCertificate: Sendable, Hashable {
    /// SHA-256 of `der`, lowercase hex without separators.
    public var sha256: String
    /// The certificate's DER encoding.
    public var der: [UInt8]

    public init(sha256: String, der: [UInt8]) {
        self.sha256 = sha256
        self.der = der
    }
}
