import TVHome
import TrustStore

/// Where a root is to be trusted: a Linux distribution's system store, an NSS database, another
/// device, or a bundle or hashed folder named with `--trust-store`.
public enum TrustTarget: Sendable, Equatable {
    case debian
    case fedora
    case arch
    /// An NSS database (Chromium, Firefox); nil = the user's Chromium database, named in the steps.
    case nss(directory: String?)
    case macos
    case ios
    case android
    case windows
    case bundle(String)
    case folder(String)
    /// A runtime that keeps its own list (`RuntimeTrust`): the variable or flag it needs.
    case runtime(TrustRuntime)

    /// The names `--platform` takes.
    public static let platformNames = ["debian", "fedora", "arch", "nss", "macos", "ios", "android", "windows"]
        + TrustRuntime.allCases.map(\.rawValue)

    /// The target for `--platform NAME` (with the NSS folder from an `nss:` store), or nil.
    public init?(platform: String, store: TrustStoreSpec) {
        switch platform.lowercased() {
        case "debian", "ubuntu": self = .debian
        case "fedora", "rhel": self = .fedora
        case "arch": self = .arch
        case "nss", "firefox", "chromium", "chrome":
            if case .nss(let dir) = store { self = .nss(directory: dir) } else { self = .nss(directory: nil) }
        case "macos": self = .macos
        case "ios": self = .ios
        case "android": self = .android
        case "windows": self = .windows
        case "python", "requests": self = .runtime(.python)
        case "node", "nodejs": self = .runtime(.node)
        case "java": self = .runtime(.java)
        default: return nil
        }
    }

    /// The target a store implies: its own for bundle, folder and NSS; the distribution's for system.
    public static func forStore(_ store: TrustStoreSpec, distribution: LinuxDistribution?) -> TrustTarget {
        switch store {
        case .file(let p): return .bundle(p)
        case .dir(let p): return .folder(p)
        case .nss(let d): return .nss(directory: d)
        case .system:
            switch distribution {
            case .fedora: return .fedora
            case .arch: return .arch
            case .debian, nil: return .debian
            }
        }
    }

    /// Whether `tv ca trust --apply` can do the steps on this machine (Linux stores only).
    public var canApply: Bool {
        switch self {
        case .debian, .fedora, .arch, .nss(directory: .some), .bundle, .folder: return true
        case .nss(directory: nil), .macos, .ios, .android, .windows, .runtime: return false
        }
    }
}

/// The root as the steps need to name it.
public struct RootDescription: Sendable, Equatable {
    /// Where the root certificate (PEM) is on this machine.
    public let path: String
    /// The subject's common name, also the NSS nickname tv uses.
    public let commonName: String
    /// The first 8 hex digits of the SHA-256 fingerprint, used in file names.
    public let tag: String
    /// The SHA-256 fingerprint, colon-separated uppercase, to compare by eye.
    public let sha256: String

    public init(path: String, commonName: String, tag: String, sha256: String) {
        self.path = path
        self.commonName = commonName
        self.tag = tag
        self.sha256 = sha256
    }

    /// `tunnelvision-<tag>.crt`, the Debian file name (the `.crt` suffix is mandatory there).
    public var debianFileName: String { "tunnelvision-\(tag).crt" }
    /// `tunnelvision-<tag>.pem`, the file name in anchors folders and hashed folders.
    public var pemFileName: String { "tunnelvision-\(tag).pem" }
}

/// Numbered steps for people, and whether `--apply` can do them.
public struct TrustGuide: Sendable, Equatable {
    public let title: String
    public let steps: [String]
    /// Said after the steps (a caveat, or how to check).
    public let note: String?

    public init(title: String, steps: [String], note: String? = nil) {
        self.title = title
        self.steps = steps
        self.note = note
    }
}

/// The exact steps to install and trust, or to remove, the root for each target
/// (notes/specs.md §3; update-ca-certificates(8), update-ca-trust(8), trust(1), certutil(1)).
public enum TrustGuides {
    /// Chromium's NSS database on Linux (an existing `~/.pki/nssdb` wins over the M146+ path).
    public static let chromiumNSS = "$HOME/.pki/nssdb"

    /// Debian's hooks of the system store (update-ca-certificates(8)): each reads `+`/`-` lines
    /// naming the links added to or removed from /etc/ssl/certs; ca-certificates-java's
    /// `jks-keystore` keeps Java's cacerts in step with them.
    public static let debianHooks = "/etc/ca-certificates/update.d"

    /// Which command shows the steps, so a note names that command's own option.
    public enum Audience: Sendable, Equatable {
        /// `tv ca trust`: NSS steps are `--platform nss`.
        case caTrust
        /// `tv setup`: an NSS database is chosen with `--trust-store nss:DIR`.
        case setup

        /// The option that asks for NSS steps, as this command takes it.
        var nssOption: String {
            switch self {
            case .caTrust: return "`--platform nss`"
            case .setup: return "`--trust-store nss:DIR`"
            }
        }
    }

    /// The last step of every install guide: a program that reached tv before it trusted the root
    /// was remembered as lacking it (`PinKind.lacksRoot`) and is passed through untouched until
    /// forgotten (a trial's Python client still got the real certificate after following
    /// `tv ca trust --platform python`). tv cannot tell which remembered clients are the
    /// program's, so the step forgets them all (`LacksRootMemory`).
    public static let forgetLacksRootStep = "Then `tv pinned forget --lacks-root`: a program that connected through tv before it trusted the root was remembered as lacking it, and its connections pass through untouched until then."

    /// The steps that install the root in `target` and trust it for TLS servers, in order, ending
    /// with `forgetLacksRootStep`.
    /// - Parameter audience: the command printing them (its option is named in notes).
    public static func install(_ target: TrustTarget, root: RootDescription, for audience: Audience = .caTrust) -> TrustGuide {
        let guide = installSteps(target, root: root, for: audience)
        return TrustGuide(title: guide.title, steps: guide.steps + [forgetLacksRootStep], note: guide.note)
    }

    private static func installSteps(_ target: TrustTarget, root: RootDescription, for audience: Audience) -> TrustGuide {
        let pem = ShellWord.quote(root.path)
        let nick = ShellWord.quote(root.commonName)
        switch target {
        case .debian:
            return TrustGuide(title: "Debian / Ubuntu (system store)", steps: [
                "sudo cp \(pem) /usr/local/share/ca-certificates/\(root.debianFileName)",
                "sudo update-ca-certificates",
            ], note: "\(RuntimeTrust.systemStoreSentence); Firefox and Chromium use their own NSS database (\(audience.nssOption)).")
        case .fedora:
            return TrustGuide(title: "Fedora / RHEL (system store)", steps: [
                "sudo cp \(pem) /etc/pki/ca-trust/source/anchors/\(root.pemFileName)",
                "sudo update-ca-trust",
            ], note: "p11-kit also hands it to NSS programs on Fedora. \(RuntimeTrust.systemStoreSentence).")
        case .arch:
            return TrustGuide(title: "Arch Linux (system store)", steps: [
                "sudo trust anchor --store \(pem)",
            ], note: "Check with `trust list --filter=ca-anchors --purpose=server-auth`. \(RuntimeTrust.systemStoreSentence).")
        case .nss(let dir):
            let db = dir.map { ShellWord.quote("sql:" + $0) } ?? "sql:\"\(chromiumNSS)\""
            return TrustGuide(title: dir == nil ? "NSS (Chromium; Firefox per profile)" : "NSS database \(dir!)", steps: [
                "certutil -A -d \(db) -n \(nick) -t C,, -a -i \(pem)   (installs it AND trusts it to identify websites)",
                "Firefox instead: Settings → Privacy & Security → Certificates → View Certificates → Authorities → Import → tick \"Trust this CA to identify websites\".",
            ], note: "The trust flag C is the separate, deliberate step: stored with ',,' the root is known but not trusted. A folder with no database yet (no cert9.db; Chromium makes \(chromiumNSS) on its first start) needs one first: `mkdir -p -m 700 \(dir.map(ShellWord.quote) ?? "\"\(chromiumNSS)\"") && certutil -N -d \(db) --empty-password` (`tv ca trust --trust-store nss:DIR --apply` does it). Restart the browser afterwards.")
        case .macos:
            return TrustGuide(title: "macOS", steps: [
                "sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(pem)",
                "Or with the profile: `tv ca export --mobileconfig -o tv.mobileconfig`, open it, then System Settings → Privacy & Security → Profiles → Install; then in Keychain Access set the root to \"Always Trust\" for SSL.",
            ])
        case .ios:
            return TrustGuide(title: "iOS / iPadOS", steps: [
                "tv ca export --mobileconfig -o tv.mobileconfig, and send it to the device (AirDrop, or Save to Files). iOS marks it \"Not Signed\": expected, because only a certificate the device already trusts could sign it.",
                "Install: Settings → General → VPN & Device Management → the TunnelVision profile → Install (\"Profile Downloaded\" means ready to install, not installed).",
                "Trust: Settings → General → About → Certificate Trust Settings → turn on the TunnelVision root. iOS makes this a second, manual step so no app can gain this power silently.",
            ])
        case .android:
            return TrustGuide(title: "Android", steps: [
                "tv ca export --der -o tv.cer, and copy it to the device.",
                "Settings → Security → Encryption & credentials → Install a certificate → CA certificate → tv.cer.",
            ], note: "Apps targeting Android 7+ trust user CAs only if they opt in; the system store (rooted devices) takes `tv ca export --android`.")
        case .windows:
            return TrustGuide(title: "Windows", steps: [
                "tv ca export --der -o tv.cer, and copy it to the machine.",
                "In an administrator prompt: certutil -addstore -f Root tv.cer   (or double-click it → Install Certificate → Local Machine → Trusted Root Certification Authorities).",
            ])
        case .bundle(let path):
            return TrustGuide(title: "PEM bundle \(path)", steps: [
                "cat \(pem) >> \(ShellWord.quote(path))",
            ], note: "A TRUSTED CERTIFICATE entry for the root that rejects serverAuth must be removed first; `--apply` replaces it.")
        case .folder(let path):
            return TrustGuide(title: "Hashed folder \(path)", steps: [
                "cp \(pem) \(ShellWord.quote(path + "/" + root.pemFileName))",
                "openssl rehash \(ShellWord.quote(path))",
            ])
        case .runtime(let runtime):
            return RuntimeTrust.of(runtime).guide(rootPath: root.path)
        }
    }

    /// The steps that take the root out of `target` again.
    public static func removal(_ target: TrustTarget, root: RootDescription) -> TrustGuide {
        let nick = ShellWord.quote(root.commonName)
        switch target {
        case .debian:
            return TrustGuide(title: "Debian / Ubuntu (system store)", steps: [
                "sudo rm /usr/local/share/ca-certificates/\(root.debianFileName)",
                "sudo update-ca-certificates --fresh",
                "echo -/etc/ssl/certs/\(root.pemFileName) | sudo run-parts --stdin \(debianHooks)   (Java's cacerts: update-ca-certificates does not tell it)",
            ])
        case .fedora:
            return TrustGuide(title: "Fedora / RHEL (system store)", steps: [
                "sudo rm /etc/pki/ca-trust/source/anchors/\(root.pemFileName)",
                "sudo update-ca-trust",
            ])
        case .arch:
            return TrustGuide(title: "Arch Linux (system store)", steps: [
                "sudo trust anchor --remove \"pkcs11:object=\(root.commonName)\"   (or remove the file you stored under /etc/ca-certificates/trust-source/anchors/)",
            ])
        case .nss(let dir):
            let db = dir.map { ShellWord.quote("sql:" + $0) } ?? "sql:\"\(chromiumNSS)\""
            return TrustGuide(title: dir == nil ? "NSS (Chromium; Firefox per profile)" : "NSS database \(dir!)", steps: [
                "certutil -D -d \(db) -n \(nick)",
                "Firefox: Settings → Privacy & Security → View Certificates → Authorities → \(root.commonName) → Delete or Distrust.",
            ])
        case .macos:
            return TrustGuide(title: "macOS", steps: [
                "sudo security delete-certificate -c \(nick) /Library/Keychains/System.keychain",
                "If you installed the profile: System Settings → Privacy & Security → Profiles → the TunnelVision profile → Remove.",
            ])
        case .ios:
            return TrustGuide(title: "iOS / iPadOS", steps: [
                "Settings → General → VPN & Device Management → the TunnelVision profile → Remove Profile.",
            ])
        case .android:
            return TrustGuide(title: "Android", steps: [
                "Settings → Security → Encryption & credentials → User credentials → \(root.commonName) → Remove.",
            ])
        case .windows:
            return TrustGuide(title: "Windows", steps: [
                "In an administrator prompt: certutil -delstore Root \(WindowsWord.quote(root.commonName))   (or certmgr.msc → Trusted Root Certification Authorities → delete it).",
            ])
        case .bundle(let path):
            return TrustGuide(title: "PEM bundle \(path)", steps: [
                "Delete the block for \(root.commonName) (SHA-256 \(root.sha256)) from \(path).",
            ])
        case .folder(let path):
            return TrustGuide(title: "Hashed folder \(path)", steps: [
                "rm \(ShellWord.quote(path + "/" + root.pemFileName))",
                "openssl rehash \(ShellWord.quote(path))",
            ])
        case .runtime(.java):
            return TrustGuide(title: RuntimeTrust.of(.java).programs, steps: [
                "keytool -delete -cacerts -alias tunnelvision -storepass changeit   (and delete ~/tv-truststore.p12 if you made one)",
            ])
        case .runtime(let runtime):
            let entry = RuntimeTrust.of(runtime)
            return TrustGuide(title: entry.programs, steps: [
                "unset \(entry.setting) where you set it (your shell profile or the program's environment).",
            ])
        }
    }
}

/// Quoting for a word in a command typed at cmd.exe, which knows only double quotes.
public enum WindowsWord {
    /// `word` in double quotes when it holds a space or a cmd.exe special character, else as is.
    /// cmd.exe has no escape for `"` inside quotes; a root's common name never holds one, so a `"`
    /// is dropped rather than producing a command that means something else.
    public static func quote(_ word: String) -> String {
        let special = Set(" \t&|<>^()%!,;=\"")
        let clean = word.replacingOccurrences(of: "\"", with: "")
        if !clean.isEmpty && !clean.contains(where: { special.contains($0) }) { return clean }
        return "\"" + clean + "\""
    }
}

/// The Linux distribution families whose system stores `tv ca trust --apply` knows.
public enum LinuxDistribution: String, Sendable, Equatable {
    case debian, fedora, arch

    /// Reads `/etc/os-release` text (os-release(5)): `ID`, then each word of `ID_LIKE`.
    public static func from(osRelease: String) -> LinuxDistribution? {
        var fields: [String: String] = [:]
        for line in osRelease.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            var value = String(line[line.index(after: eq)...])
            if value.count >= 2, let q = value.first, q == "\"" || q == "'", value.last == q {
                value = String(value.dropFirst().dropLast())
            }
            fields[String(line[..<eq])] = value
        }
        let ids = [fields["ID"] ?? ""] + (fields["ID_LIKE"] ?? "").split(separator: " ").map(String.init)
        for id in ids {
            switch id.lowercased() {
            case "debian", "ubuntu": return .debian
            case "fedora", "rhel", "centos": return .fedora
            case "arch": return .arch
            default: continue
            }
        }
        return nil
    }
}
