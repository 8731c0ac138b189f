import FlowStore
import LocalCA
import TVHome

/// A flow of the evidence bundle's `flows.json`: `tv flows --json`'s object, then
/// `serverChain`, the server's certificate chain as the upstream leg saw it, leaf first:
/// `[{sha256, subject, issuer, pem}]` (SHA-256 lowercase hex of the DER; PEM per RFC 7468 §5
/// through OpenSSL's `PEM_write_bio_X509`). A certificate whose DER was never stored (its batch
/// was dropped) keeps its fingerprint with null subject, issuer and pem.
enum BundleServerChain {
    /// The flow's object for `flows.json`; `packetsCaptured` as `tv flows --json` gives it
    /// (`CaptureCatalog.packetCounts`); `certificates` is DER by fingerprint
    /// (`FlowStore.certificates`).
    static func json(_ record: FlowRecord, packetsCaptured: Int64, certificates: [String: [UInt8]]) -> JSONValue {
        let listed = FlowDetailPresentation.detailJSON(record, packetsCaptured: packetsCaptured)
        guard case var .object(pairs) = listed else { return listed }
        pairs.append(("serverChain", .array(record.certificateChain.map { entry($0, der: certificates[$0]) })))
        return .object(pairs)
    }

    /// One certificate of the chain.
    static func entry(_ sha256: String, der: [UInt8]?) -> JSONValue {
        guard let der, let certificate = try? Certificate.fromDER(der) else {
            return .object([("sha256", .string(sha256)), ("subject", .null), ("issuer", .null), ("pem", .null)])
        }
        return .object([("sha256", .string(sha256)), ("subject", .string(certificate.subject)),
                        ("issuer", .string(certificate.issuer)),
                        ("pem", .string(String(decoding: certificate.pem, as: UTF8.self)))])
    }
}
