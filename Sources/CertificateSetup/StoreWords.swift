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

/// Quoting for commands shown to people to copy into a POSIX shell.
public enum ShellWord {
    /// `word` as is when it holds only safe characters, else in single quotes ('\'' for a quote).
    public static func quote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%")
        if !word.isEmpty && word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
