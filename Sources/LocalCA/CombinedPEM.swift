import TVHome

extension CertificateAuthority {
    /// A CA for one session from a single PEM file holding the CA's private key and certificate
    /// (mitmproxy's `mitmproxy-ca.pem` shape), kept in memory only; a fresh leaf key is made.
    ///
    /// The same checks as `tv ca import`: a CA certificate whose key matches, valid at `now`.
    /// - Parameters:
    ///   - path: the file's path, named in errors.
    ///   - now: seconds since 1970-01-01 UTC.
    /// - Throws: `CAError.unreadableFile`, `CAError.sessionCARefused`, `OpenSSLError`.
    public static func fromCombinedPEM(path: String, leafKeyType: KeyType = .ecdsaP256, now: Int64) throws -> CertificateAuthority {
        let bytes = try readUserFile(path)
        func refuse(_ reason: String) -> CAError { .sessionCARefused(file: path, reason: reason) }
        guard let root = Certificate.allFromPEM(bytes).first else {
            throw refuse("it holds no PEM certificate; give one file with the CA's certificate and its private key")
        }
        // The key first, then its file's mode: a certificate alone was refused as a key others
        // could read (a trial's 0644 certificate file).
        guard let key = try? PrivateKey.fromPEM(bytes) else {
            throw refuse("it holds no unencrypted PEM private key; give one file with the CA's certificate and its private key (`cat ca.key ca.crt > ca.pem`, 0600)")
        }
        // The owner rule of the CA folder's own files (`FileTrust.owner`): another user's file
        // could have been replaced by them (a trial's file given to nobody was used).
        if case .found(let facts) = FileFacts.stat(path) {
            if let problem = FileTrust.owner(facts, you: .current) {
                throw refuse("it holds the CA's private key and \(problem.caClause); use a file of your own")
            }
            if facts.mode & 0o077 != 0 {
                throw refuse("it holds the CA's private key and other users can read or write it (mode \(FileTrust.octal(facts.mode))); `chmod 600 \(path)` first")
            }
        }
        guard root.isCA else { throw refuse("its certificate is not a CA (basicConstraints CA:TRUE is missing)") }
        guard let usage = root.keyUsage else {
            throw refuse("its certificate has no keyUsage extension, and strict verifiers (OpenSSL's -x509_strict, Python 3.13's default) refuse every certificate under such a CA (reissue it with keyUsage=critical,keyCertSign,cRLSign)")
        }
        guard usage & UInt32(0x0004) != 0 else { throw refuse("its certificate's keyUsage does not allow keyCertSign") }  // KU_KEY_CERT_SIGN
        guard root.matches(key) else { throw refuse("its key is not the key of its certificate") }
        guard key.canSignCertificates else { throw refuse(CAFolder.unsignableKey(key)) }
        guard !key.tooWeakForClients else { throw refuse(CAFolder.weakKey(key)) }
        guard root.notBefore <= now, now < root.notAfter else {
            throw refuse("its certificate is not valid now")
        }
        return CertificateAuthority(root: root, rootKey: key, leafKey: try PrivateKey.generate(leafKeyType))
    }
}
