import COpenSSL
import CTVShims

/// A PKCS#12 trust store (RFC 7292) the JVM reads as a list of trusted roots, made with
/// OpenSSL's PKCS#12 API: one certificate bag per root, each with a friendly name (its alias)
/// and Oracle's "trusted key usage" attribute (OID 2.16.840.1.113894.746875.1.1, value
/// anyExtendedKeyUsage), without which the JDK's PKCS12 keystore lists a certificate bag as no
/// `trustedCertEntry` at all (what `openssl pkcs12 -export -jdktrust anyExtendedKeyUsage` writes
/// from OpenSSL 3.2 on; Debian 12 ships 3.0, so the attribute is added here through
/// `PKCS12_add1_attr_by_NID`). The bags are not encrypted (the certificates are public); the file
/// carries an HMAC-SHA-256 MAC under `password`, which `-Djavax.net.ssl.trustStorePassword` names.
public enum PKCS12TrustStore {
    /// Oracle's trusted-key-usage attribute (JDK `sun.security.pkcs12.PKCS12KeyStore`).
    public static let jdkTrustOID = "2.16.840.1.113894.746875.1.1"
    /// anyExtendedKeyUsage (RFC 5280 §4.2.1.12): trusted for every purpose, as `cacerts` entries are.
    static let anyExtendedKeyUsageOID = "2.5.29.37.0"
    /// PBKDF iterations for the MAC key (OpenSSL's default, PKCS12_DEFAULT_ITER).
    static let macIterations: Int32 = 2_048

    /// The DER bytes of a trust store holding `certificates` under the aliases `alias(i)`.
    /// - Parameters:
    ///   - certificates: the roots, in order (duplicates are the caller's to remove).
    ///   - alias: the friendly name of the `i`-th certificate (unique within the store).
    ///   - password: the store's integrity password (ASCII).
    /// - Throws: `OpenSSLError` when OpenSSL cannot build or encode it.
    public static func der(certificates: [Certificate], alias: (Int) -> String, password: String) throws -> [UInt8] {
        let trustNID = try nid(for: jdkTrustOID, shortName: "tvJdkTrust", longName: "Oracle JDK trusted key usage")
        guard let anyUsage = OBJ_txt2obj(anyExtendedKeyUsageOID, 1) else { throw OpenSSLError("naming anyExtendedKeyUsage") }
        defer { ASN1_OBJECT_free(anyUsage) }

        var bags: OpaquePointer?
        defer { tv_safebags_free(bags) }
        for (i, certificate) in certificates.enumerated() {
            guard let bag = PKCS12_add_cert(&bags, certificate.handle) else { throw OpenSSLError("adding a certificate to the trust store") }
            guard PKCS12_add_friendlyname_asc(bag, alias(i), -1) == 1 else { throw OpenSSLError("naming a trust store entry") }
            // len -1 with an ASN1_OBJECT type: the attribute's value is the object itself (X509_ATTRIBUTE_set1_data).
            let value = UnsafeRawPointer(anyUsage).assumingMemoryBound(to: UInt8.self)
            guard PKCS12_add1_attr_by_NID(bag, trustNID, V_ASN1_OBJECT, value, -1) == 1 else {
                throw OpenSSLError("marking a trust store entry as trusted")
            }
        }
        var safes: OpaquePointer?
        defer { tv_pkcs7_stack_free(safes) }
        // nid_safe -1: a plain (unencrypted) PKCS#7 data safe.
        guard PKCS12_add_safe(&safes, bags, -1, 0, password) == 1 else { throw OpenSSLError("making the trust store's safe") }
        guard let p12 = PKCS12_add_safes(safes, 0) else { throw OpenSSLError("making the trust store") }
        defer { PKCS12_free(p12) }
        guard PKCS12_set_mac(p12, password, -1, nil, 0, macIterations, EVP_sha256()) == 1 else {
            throw OpenSSLError("adding the trust store's MAC")
        }
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_PKCS12(p12, &out)
        guard count > 0, let out else { throw OpenSSLError("encoding the trust store") }
        defer { tv_openssl_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(count)))
    }

    /// The NID of `oid`, registered once in this process when OpenSSL does not know it (3.0).
    private static func nid(for oid: String, shortName: String, longName: String) throws -> Int32 {
        let known = OBJ_txt2nid(oid)
        if known != NID_undef { return known }
        let made = OBJ_create(oid, shortName, longName)
        if made != NID_undef { return made }
        // Another thread registered it meanwhile.
        let again = OBJ_txt2nid(oid)
        guard again != NID_undef else { throw OpenSSLError("registering the JDK trust attribute") }
        return again
    }
}
