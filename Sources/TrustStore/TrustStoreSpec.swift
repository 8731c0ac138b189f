import TVHome

/// Which trust store to ask, as typed after `--trust-store` and saved in `trust.store`.
///
/// - `system`: OpenSSL's default verify paths (the bundle file and the hashed folder), honouring
///   `SSL_CERT_FILE` and `SSL_CERT_DIR` (openssl-env(7), `X509_get_default_cert_file_env`).
/// - `file:PATH`: a PEM bundle; entries may be `TRUSTED CERTIFICATE` blocks carrying trust bits
///   (openssl-x509(1) `-addtrust`/`-addreject`/`-trustout`).
/// - `dir:PATH`: a hashed folder (`<subject hash>.<n>`, openssl-rehash(1)).
/// - `nss:DIR`: an NSS database (`cert9.db`), read through `certutil` (libnss3-tools); `DIR` may
///   carry NSS's own `sql:` prefix.
public enum TrustStoreSpec: Sendable, Equatable, Hashable, CustomStringConvertible {
    case system
    case file(String)
    case dir(String)
    case nss(String)

    /// Parses `system`, `file:PATH`, `dir:PATH` or `nss:DIR` (also `nss:sql:DIR`).
    /// - Throws: `TrustStoreError.unknownStore` for anything else, or an empty path.
    public init(parsing text: String) throws {
        if text == "system" { self = .system; return }
        guard let colon = text.firstIndex(of: ":") else { throw TrustStoreError.unknownStore(text) }
        let kind = text[..<colon]
        var path = String(text[text.index(after: colon)...])
        if kind == "nss" && path.hasPrefix("sql:") { path.removeFirst(4) }
        guard !path.isEmpty else { throw TrustStoreError.unknownStore(text) }
        switch kind {
        case "file": self = .file(path)
        case "dir": self = .dir(path)
        case "nss": self = .nss(path)
        default: throw TrustStoreError.unknownStore(text)
        }
    }

    /// The path a `file:`, `dir:` or `nss:` store names; nil for `system`.
    public var path: String? {
        switch self {
        case .system: return nil
        case .file(let p), .dir(let p), .nss(let p): return p
        }
    }

    /// For `file:PATH`, the folder the bundle is in (`.` for a bare name): it must exist, while
    /// the bundle itself may not yet (then it is empty, and adding the root creates it).
    /// nil for the other kinds.
    public var bundleFolder: String? {
        guard case .file(let path) = self else { return nil }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Refuses a `file:` store whose folder does not exist, before anything is made or saved.
    /// - Parameter folderExists: asks whether a folder exists (the caller's file system).
    /// - Throws: `TrustStoreError.bundleFolderMissing`.
    public func checkBundleFolder(_ folderExists: (String) -> Bool) throws {
        if let folder = bundleFolder, !folderExists(folder) {
            throw TrustStoreError.bundleFolderMissing(store: description, folder: folder)
        }
    }

    /// The files and folders the system store is generated into (Debian's update-ca-certificates,
    /// Fedora's update-ca-trust, and the common links to them): named as `file:` or `dir:`, tv
    /// would rewrite what the system regenerates (dropping the root later), past setup's
    /// consent for the system store (a trial).
    public static let systemStorePaths = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs", "/etc/ssl/cert.pem", "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/tls/cert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem",
    ]

    /// Refuses a `file:` or `dir:` store that is the system store's generated file or folder.
    /// - Parameter resolve: the path with its links resolved (the caller's file system).
    /// - Throws: `TrustStoreError.systemStoreByPath`.
    public func checkNotSystemStore(_ resolve: (String) -> String) throws {
        let path: String
        switch self {
        case .file(let p), .dir(let p): path = p
        default: return
        }
        let resolved = resolve(path)
        let system = Set(Self.systemStorePaths.flatMap { [$0, resolve($0)] })
        if system.contains(resolved) || system.contains(path) { throw TrustStoreError.systemStoreByPath(store: description) }
    }

    /// The kind without the path.
    public var kind: TrustStoreKind {
        switch self {
        case .system: return .system
        case .file: return .file
        case .dir: return .dir
        case .nss: return .nss
        }
    }

    /// The text `init(parsing:)` reads back.
    public var description: String {
        switch self {
        case .system: return "system"
        case .file(let p): return "file:" + p
        case .dir(let p): return "dir:" + p
        case .nss(let p): return "nss:" + p
        }
    }
}

/// The four kinds of trust store, without their paths.
public enum TrustStoreKind: String, Sendable, CaseIterable {
    case system, file, dir, nss
}

/// Why a trust store could not be named or changed.
public enum TrustStoreError: UserFacingError, Equatable {
    case unknownStore(String)
    /// `file:PATH` names a bundle in a folder that does not exist.
    case bundleFolderMissing(store: String, folder: String)
    /// `file:` or `dir:` names the system store's generated bundle or folder.
    case systemStoreByPath(store: String)

    public var message: String {
        switch self {
        case .unknownStore(let text):
            return "'\(text)' is not a trust store tv can ask; use system, file:PATH (a PEM bundle), dir:PATH (a hashed folder) or nss:DIR (an NSS database)."
        case .systemStoreByPath(let store):
            return "\(store) is the system store's own generated file or folder, which update-ca-certificates rewrites (dropping anything added by hand), so tv does not name it as a bundle; use the system store (--trust-store system, the default), which asks before changing it."
        case let .bundleFolderMissing(store, folder):
            return "The folder \(folder) of \(store) does not exist, so nothing was made or saved; create the folder (a missing bundle in it is fine: tv creates it) or name another store with --trust-store."
        }
    }
}
