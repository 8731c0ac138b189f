import Foundation
import LocalCA

/// Asks a JVM trust store (`cacerts`, JKS or PKCS#12) through the JDK's own `keytool -list -rfc`:
/// the JVM trusts every `trustedCertEntry` for TLS, so the root is trusted exactly when it is the
/// certificate of one (compared by DER). A PKCS#12 certificate bag without Oracle's trust
/// attribute is no such entry, as the JVM sees it.
public struct JavaKeystoreCheck: Sendable {
    /// The JDK's keytool (`$JAVA_HOME/bin/keytool`).
    public let keytool: String
    public let keystore: String
    /// The password Java is given (`javax.net.ssl.trustStorePassword`); nil: none, as Java
    /// reads the store then (a PKCS#12 store with its certificates encrypted shows none; the
    /// doctor asked with "changeit" and said trusted where Java found nothing: a trial).
    public let password: String?
    /// `-storetype` (nil: keytool works it out from the file).
    public let storeType: String?
    public let environment: [String: String]
    /// Seconds keytool may take.
    public var timeout: Double = 30

    public init(keytool: String, keystore: String, password: String?, storeType: String?, environment: [String: String]) {
        self.keytool = keytool
        self.keystore = keystore
        self.password = password
        self.storeType = storeType
        self.environment = environment
    }

    /// Whether `root` is a trusted entry now; `.unknown` when keytool cannot read the store.
    public func trusts(_ root: Certificate) -> TrustAnswer {
        guard FileManager.default.isReadableFile(atPath: keystore) else {
            return .unknown(because: "\(keystore) cannot be read by this user")
        }
        // English output whatever the locale; JAVA_TOOL_OPTIONS would only add a line to stderr.
        var env = environment
        env["JAVA_TOOL_OPTIONS"] = nil
        env["_JAVA_OPTIONS"] = nil
        // Without a password keytool asks for one on standard input (/dev/null: none) and lists
        // what can be read without it, as Java does.
        var arguments = ["-J-Duser.language=en", "-J-Duser.country=US", "-list", "-rfc", "-keystore", keystore]
        if let password { arguments += ["-storepass", password] }
        if let storeType { arguments += ["-storetype", storeType] }
        let result: BoundedProcess.Result
        do {
            result = try BoundedProcess.run(keytool, arguments, environment: env, timeout: timeout)
        } catch let failure as BoundedProcess.Failure {
            return .unknown(because: "\(keystore) could not be read: \(failure.reason)")
        } catch {
            return .unknown(because: "\(keystore) could not be read (\(error))")
        }
        guard result.status == 0 else {
            return .unknown(because: "keytool could not read \(keystore) (\(result.firstErrorLine))")
        }
        let rootDER = root.der
        for pem in KeytoolListing.trustedCertificatePEMs(String(decoding: result.stdout, as: UTF8.self)) {
            if Certificate.allFromPEM(Array(pem.utf8)).contains(where: { $0.der == rootDER }) { return .yes }
        }
        return .no
    }
}

/// `keytool -list -rfc` output read as entries (JDK keytool: "Alias name: …", "Entry type: …",
/// then the PEM certificate).
public enum KeytoolListing {
    /// The PEM text of every entry whose type is `trustedCertEntry`, in order.
    public static func trustedCertificatePEMs(_ text: String) -> [String] {
        var out: [String] = []
        for entry in text.components(separatedBy: "Alias name:").dropFirst() {
            guard entry.contains("Entry type: trustedCertEntry"),
                  let begin = entry.range(of: "-----BEGIN CERTIFICATE-----"),
                  let end = entry.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<entry.endIndex) else { continue }
            out.append(String(entry[begin.lowerBound..<end.upperBound]) + "\n")
        }
        return out
    }
}
