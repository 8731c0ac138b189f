import TVHome
import TrustStore

/// How the sentences name a trust store and the command-line option that selects it.
public enum StoreWords {
    /// "the system trust store", "the bundle /x.pem", "the folder /d", "the NSS database /n".
    public static func name(_ store: TrustStoreSpec) -> String {
        switch store {
        case .system: return "the system trust store"
        case .file(let p): return "the bundle \(p)"
        case .dir(let p): return "the folder \(p)"
        case .nss(let p): return "the NSS database \(p)"
        }
    }

    /// ` --trust-store SPEC` (shell-quoted), or "" for `system`, the default.
    public static func option(_ store: TrustStoreSpec) -> String {
        store == .system ? "" : " --trust-store " + ShellWord.quote(store.description)
    }
}

/// How a `TrustFinding` is named for people and programs.
public enum FindingWords {
    /// A stable identifier for `--json` (`verified`, `rejectedForTLS`, …).
    public static func code(_ finding: TrustFinding) -> String {
        switch finding {
        case .verified: return "verified"
        case .rejectedForTLS: return "rejectedForTLS"
        case .untrustedForTLS: return "untrustedForTLS"
        case .issuerNotFound: return "issuerNotFound"
        case .rootCannotAnchor: return "rootCannotAnchor"
        case .notHashed: return "notHashed"
        case .nssNotTrustedForTLS: return "nssNotTrustedForTLS"
        case .nssTrusted: return "nssTrusted"
        case .nssAbsent: return "nssAbsent"
        case .nssNoDatabase: return "nssNoDatabase"
        case .verifyFailed: return "verifyFailed"
        case .unreadable: return "unreadable"
        }
    }

    /// One clause saying what was seen.
    public static func sentence(_ finding: TrustFinding) -> String {
        switch finding {
        case .verified: return "a fresh leaf verifies for a TLS server (serverAuth, host name checked)"
        case .rejectedForTLS: return "OpenSSL error 28, certificate rejected: the root's trust settings reject serverAuth"
        case .untrustedForTLS: return "OpenSSL error 27, certificate not trusted: the root is trusted for other uses only"
        case .issuerNotFound: return "OpenSSL error 20: no anchor for the root in the store"
        case let .rootCannotAnchor(code, text): return "OpenSSL error \(code): the root cannot be its own anchor (\(text))"
        case .notHashed(let hash): return "the root's file is there, but no \(hash).N hash link leads to it"
        case let .nssNotTrustedForTLS(nickname, trust): return "stored as '\(nickname)' with trust flags '\(trust)', whose SSL field lacks C"
        case .nssTrusted(let nickname): return "stored as '\(nickname)' with C (trusted to identify websites)"
        case .nssAbsent: return "no entry in the database is the root"
        case .nssNoDatabase(let folderExists):
            return folderExists ? "there is no NSS database in the folder yet; `tv ca trust --apply` makes one"
                                : "the folder does not exist yet; `tv ca trust --apply` makes it and an NSS database in it"
        case let .verifyFailed(code, text): return "OpenSSL error \(code): \(text)"
        case .unreadable(let why): return why
        }
    }
}
