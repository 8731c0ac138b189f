/// The two answers one trust store gave for our root, asked now, with what was found.
public struct TrustFacts: Sendable, Equatable {
    /// The store that was asked.
    public let store: TrustStoreSpec
    /// Is our root itself among the store's anchors, whatever trust it carries there?
    /// (Certificate compared by DER, not verified under some purpose.)
    public let installed: TrustAnswer
    /// Does a freshly minted leaf verify for a TLS server (serverAuth, host check) against it?
    public let usable: TrustAnswer
    /// Why `usable` is what it is.
    public let finding: TrustFinding

    public init(store: TrustStoreSpec, installed: TrustAnswer, usable: TrustAnswer, finding: TrustFinding) {
        self.store = store
        self.installed = installed
        self.usable = usable
        self.finding = finding
    }
}

/// What the usability check saw; the stage machine turns it into the exact missing step.
public enum TrustFinding: Sendable, Equatable {
    /// The leaf verified for a TLS server.
    case verified
    /// OpenSSL error 28 (X509_V_ERR_CERT_REJECTED): the root is an anchor whose trust settings
    /// reject serverAuth (a `TRUSTED CERTIFICATE` with `-addreject serverAuth`).
    case rejectedForTLS
    /// OpenSSL error 27 (X509_V_ERR_CERT_UNTRUSTED): the root carries trust for other uses only.
    case untrustedForTLS
    /// OpenSSL error 20 or 2: no anchor for our root's name and key.
    case issuerNotFound
    /// OpenSSL error 20 or 2 because the root cannot anchor itself (`Certificate.selfIssueFailure`:
    /// OpenSSL's verify `code` and `text`, e.g. 30, authority and subject key identifier
    /// mismatch): no store and no hash link can make it trusted.
    case rootCannotAnchor(code: Int32, text: String)
    /// In a hashed folder, the root is in a file but no `<hash>.<n>` entry leads to it.
    case notHashed(hash: String)
    /// In an NSS database, the root is stored under `nickname` with trust flags `trust` (e.g.
    /// ",," or "c,,") whose SSL field lacks C, trusted to issue TLS server certificates.
    case nssNotTrustedForTLS(nickname: String, trust: String)
    /// In an NSS database, the root is stored under `nickname` with C in its SSL trust flags.
    case nssTrusted(nickname: String)
    /// The root is not in the NSS database.
    case nssAbsent
    /// There is no NSS database yet: the folder holds no `cert9.db` (`folderExists`), or does not
    /// exist (Chromium makes `~/.pki/nssdb` on its first start). Not installed, as for a missing
    /// bundle: `tv ca trust --apply` makes the database (and the folder, 0700) first.
    case nssNoDatabase(folderExists: Bool)
    /// Another verification error (OpenSSL's code and text), e.g. 10, certificate has expired.
    case verifyFailed(code: Int32, text: String)
    /// The store could not be read; the sentence says why.
    case unreadable(String)
}
