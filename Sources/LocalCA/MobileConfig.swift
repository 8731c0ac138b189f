import Foundation

/// An Apple configuration profile (XML property list) carrying the root as one
/// `com.apple.security.root` payload (Apple device-management `TopLevel.yaml`,
/// `CommonPayloadKeys.yaml`, `com.apple.security.root.yaml`; notes/specs.md §1).
///
/// Unsigned: signing would need a certificate the device already trusts, and ours is the one
/// not installed yet; iOS shows it as "Unsigned" (`MobileConfig.unsignedNotice` says so first).
public enum MobileConfig {
    public static let displayName = "TunnelVision certificate"
    public static let description = "Installs the TunnelVision root certificate so TunnelVision on your computer can show you what your own secure (HTTPS) connections say. After installing, enable full trust in Settings › General › About › Certificate Trust Settings. Remove this profile to stop trusting it."
    public static let unsignedNotice = "iOS will show this profile as \"Unsigned\": signing it would need a certificate your device already trusts, and the only one tv has is the one you are about to install. That is expected; the profile carries only the certificate, never its private key."

    /// The profile as a property-list dictionary (for tests and for `xml`).
    /// The inner `PayloadUUID` is derived from the root's SHA-256, so re-exporting one CA is
    /// byte-stable and a new CA's payload replaces the old one inside the replaced profile.
    public static func dictionary(root: Certificate, identity: ProfileIdentity) -> [String: Any] {
        let rootPayload: [String: Any] = [
            "PayloadType": "com.apple.security.root",
            "PayloadVersion": 1,
            "PayloadIdentifier": identity.rootPayloadIdentifier,
            "PayloadUUID": uuid(from: root.sha256),
            "PayloadDisplayName": root.commonName ?? "TunnelVision Root CA",
            "PayloadDescription": "The TunnelVision root certificate.",
            "PayloadOrganization": "TunnelVision",
            "PayloadCertificateFileName": "tunnelvision-root.cer",
            "PayloadContent": Data(root.der),
        ]
        return [
            "PayloadType": "Configuration",
            "PayloadVersion": 1,
            "PayloadIdentifier": identity.profileIdentifier,
            "PayloadUUID": identity.profileUUID,
            "PayloadDisplayName": displayName,
            "PayloadDescription": description,
            "PayloadOrganization": "TunnelVision",
            "PayloadRemovalDisallowed": false,
            "PayloadContent": [rootPayload],
        ]
    }

    /// The profile as XML plist bytes.
    /// - Throws: `OpenSSLError` never; a Foundation serialization error only on an internal fault.
    public static func xml(root: Certificate, identity: ProfileIdentity) throws -> [UInt8] {
        let data = try PropertyListSerialization.data(fromPropertyList: dictionary(root: root, identity: identity),
                                                      format: .xml, options: 0)
        return [UInt8](data)
    }

    /// An RFC 4122 UUID text (version 5 style bits) from the first 16 bytes of `hash`.
    static func uuid(from hash: [UInt8]) -> String {
        var b = Array(hash.prefix(16))
        b[6] = (b[6] & 0x0F) | 0x50
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = Hex.encode(b, uppercase: true)
        let chars = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(chars[$0]) }.joined(separator: "-")
    }
}
