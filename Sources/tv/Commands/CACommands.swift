import CommandLineParser
import Foundation
import LocalCA
import TVCore
import TVHome
import Wire

/// `tv ca …`: create, import, status/show, export, issue.
enum CACommands {
    static let keyHelp = "Key type: \(KeyType.allCases.map(\.name).joined(separator: "|")) (default ecdsa-p256)."

    static let spec = CommandSpec(
        name: "ca",
        summary: "Create, inspect and export the local certificate authority.",
        discussion: "The CA lives in $TV_HOME/ca (folder 0700, keys 0600). See CA/README.md for what each file is and how to trust the root on each platform.",
        subcommands: [
            CommandSpec(name: "create", summary: "Make the root certificate and the leaf key.",
                        options: [OptionSpec("key", value: "TYPE", help: keyHelp),
                                  OptionSpec("leaf-key", value: "TYPE", help: "Key type of the key every minted leaf carries (default ecdsa-p256)."),
                                  OptionSpec("json", help: "Print the new CA's facts as JSON.")]),
            CommandSpec(name: "import", summary: "Use an existing CA certificate and key as the root.",
                        options: [OptionSpec("cert", value: "FILE", help: "The CA certificate (PEM or DER)."),
                                  OptionSpec("key", value: "FILE", help: "Its private key (unencrypted PEM)."),
                                  OptionSpec("leaf-key", value: "TYPE", help: "Key type of the new leaf key (default ecdsa-p256).")]),
            CommandSpec(name: "status", summary: "Say whether a CA exists and show its facts.",
                        options: [OptionSpec("json", help: "Print as JSON.")]),
            CommandSpec(name: "show", summary: "Show the CA's root: subject, key, validity, serial, fingerprints and file.",
                        options: [OptionSpec("json", help: "Print as JSON.")]),
            CommandSpec(name: "export", summary: "Write the root certificate in a form another device or tool installs.",
                        discussion: "Give exactly one format. Only --p12-with-key carries the root key, and only with --yes and a passphrase.",
                        options: [OptionSpec("pem", help: "PEM certificate (Linux stores, Firefox, curl --cacert)."),
                                  OptionSpec("der", help: "DER certificate (.cer for Android and Windows)."),
                                  OptionSpec("p12", help: "PKCS#12 with the certificate only (importing trust on Windows/macOS)."),
                                  OptionSpec("p12-with-key", help: "PKCS#12 with the certificate and the root key (moving the CA to another tool); needs --yes and --passphrase-file."),
                                  OptionSpec("android", help: "PEM named <subject_hash_old>.0 as Android's system store expects."),
                                  OptionSpec("mobileconfig", help: "Apple configuration profile for iOS and macOS."),
                                  OptionSpec("output", short: "o", value: "FILE", help: "Write to FILE (for --android: a file or a folder) instead of standard output (- is standard output)."),
                                  OptionSpec("passphrase-file", value: "FILE", help: "Read the PKCS#12 passphrase from the first line of FILE."),
                                  OptionSpec("yes", help: "Confirm exporting the root key.")]),
            CommandSpec(name: "issue", summary: "Issue a certificate with its own key for a local development server.",
                        discussion: "Writes NAME.pem (the certificate), NAME-chain.pem (what the server sends: the certificate and its intermediates, never the root), NAME-key.pem (0600) and NAME-root.pem (this CA's root, for clients: curl --cacert NAME-root.pem), NAME being the first DNS name given (the first address when there is none; a * written as _wildcard).",
                        options: [OptionSpec("out-dir", value: "DIR", help: "Folder to write into (default: the current folder)."),
                                  OptionSpec("key", value: "TYPE", help: keyHelp)],
                        positionals: [PositionalSpec("NAME", help: "Host names and/or IP addresses the certificate is for.", variadic: true)]),
        ]
    )

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "ca create": create,
        "ca import": importCA,
        "ca export": export,
        "ca issue": issue,
    ]

    static func create(_ inv: Invocation) throws -> Int32 {
        let rootType = try inv.command.value("key").map(KeyType.parse) ?? .ecdsaP256
        let leafType = try inv.command.value("leaf-key").map(KeyType.parse) ?? .ecdsaP256
        let home = try inv.home()
        try home.ensureExists()
        let folder = CAFolder(home: home)
        let ca = try folder.create(rootKeyType: rootType, leafKeyType: leafType, now: inv.now)
        // Running sessions first: output cut short (`| head`, SIGPIPE) must not leave them
        // minting from the old files (a trial's remake left a session on the old root).
        let told = LiveSession.caChanged(inv)
        let report = CAStatusReport(state: .present(ca), folder: folder)
        if inv.json {
            inv.console.line(JSONValue.object(report.jsonFields()).serialized(pretty: true))
        } else {
            inv.console.line("Created a new CA.")
            for line in report.lines(now: inv.now).dropFirst() { inv.console.line(line) }
            inv.console.line("")
            inv.console.line("Next: trust the root where you want inspection to work (CA/README.md lists every platform);")
            inv.console.line("      `tv ca export --mobileconfig -o tv.mobileconfig` for iOS/macOS, `--der` for Android/Windows.")
        }
        if let told { inv.console.line(told) }
        return 0
    }

    static func importCA(_ inv: Invocation) throws -> Int32 {
        guard let cert = inv.command.value("cert"), let key = inv.command.value("key") else {
            throw UsageRefusal("'tv ca import' needs both --cert FILE and --key FILE.")
        }
        let leafType = try inv.command.value("leaf-key").map(KeyType.parse) ?? .ecdsaP256
        // The data folder is made (0700) only when the import writes: a refused import leaves
        // nothing behind.
        let home = try inv.home()
        let folder = CAFolder(home: home)
        let ca = try folder.importCA(certificatePath: cert, keyPath: key, leafKeyType: leafType, now: inv.now)
        let told = LiveSession.caChanged(inv)
        inv.console.line("Imported the CA \(ca.root.subject).")
        for line in CAStatusReport(state: .present(ca), folder: folder).lines(now: inv.now).dropFirst() { inv.console.line(line) }
        if ca.root.hasNameConstraints {
            inv.console.note("Note: this root carries name constraints: clients accept its leaves only for the names it permits, and refuse tv's certificate for every other host (those connections then show the client refusing it).")
        }
        if let eku = ca.root.extendedKeyUsage, eku & 0x0001 == 0 {  // XKU_SSL_SERVER
            inv.console.note("Note: this root carries an extendedKeyUsage without serverAuth; OpenSSL-based clients will refuse its leaves.")
        }
        // tv keeps its own 0600 copy; the source key others can read hands them the root (a
        // trial's 0644 key was taken without a word). Said, not refused: the file is the user's.
        var st = stat()
        if stat(key, &st) == 0, st.st_mode & 0o077 != 0 {
            inv.console.note("Warning: \(TerminalText.line(key)) can be read by other users (mode \(String(st.st_mode & 0o777, radix: 8))), and it holds the root's private key: whoever reads it can make certificates this machine trusts once the root is trusted; `chmod 600` it, or delete it now that tv keeps its own copy (0600).")
        }
        if let told { inv.console.line(told) }
        return 0
    }

    static func loadPresent(_ inv: Invocation) throws -> (CertificateAuthority, CAFolder) {
        let folder = CAFolder(home: try inv.home())
        switch folder.load() {
        case .present(let ca):
            if let remade = ca.leafKeyRemade { inv.console.note(remade.sentence) }
            return (ca, folder)
        case .absent: throw CAError.absent(directory: folder.directory)
        case .doubt(let doubt): throw CAError.inDoubt(doubt)
        }
    }

    static func export(_ inv: Invocation) throws -> Int32 {
        let formats = ["pem", "der", "p12", "p12-with-key", "android", "mobileconfig"].filter { inv.command.has($0) }
        guard formats.count == 1, let format = formats.first else {
            throw UsageRefusal(formats.isEmpty
                ? "'tv ca export' needs a format: --pem, --der, --p12, --p12-with-key, --android or --mobileconfig."
                : "'tv ca export' takes one format at a time; you gave --\(formats.joined(separator: " and --")).")
        }
        if format == "p12-with-key" && !inv.yes {
            throw CAError.consentRequired(what: "--p12-with-key writes the root's private key: anyone holding the file and its passphrase can make certificates your devices trust.")
        }
        let (ca, folder) = try loadPresent(inv)
        var passphrase = ""
        if let file = inv.command.value("passphrase-file") {
            // The first line's bytes without its end, `\n` or `\r\n` (Swift's "\n" split kept a
            // CRLF line's `\r\n` as one character in the passphrase: an export nobody could open
            // with the password written in the file, a new-user trial).
            let bytes = try readUserFile(file)
            var line = bytes.prefix { $0 != 0x0a }
            if line.last == 0x0d { line = line.dropLast() }
            passphrase = String(decoding: line, as: UTF8.self)
            if passphrase.isEmpty { throw CAError.passphraseFileEmpty(path: file) }
            if format == "p12-with-key", passphrase.count < CAExport.minimumKeyPassphrase {
                throw CAError.passphraseTooShort(path: file, characters: passphrase.count)
            }
            // The passphrase is what protects the exported root key: a file others can read
            // hands it to them (a trial's 0644 file went unmentioned). Said, not refused: the
            // file is the user's, and the export is what they asked for.
            var st = stat()
            if format == "p12-with-key", stat(file, &st) == 0, st.st_mode & 0o077 != 0 {
                inv.console.note("Warning: \(TerminalText.line(file)) can be read by other users (mode \(String(st.st_mode & 0o777, radix: 8))), and its passphrase protects the exported root key; `chmod 600` it, or delete it once the key is imported.")
            }
        }
        var output = try inv.command.value("output").flatMap { try inv.outputFile($0).path }
        let bytes: [UInt8]
        var binary = false
        switch format {
        case "pem": bytes = CAExport.pem(ca)
        case "der": bytes = CAExport.der(ca); binary = true
        case "p12": bytes = try CAExport.pkcs12(ca, passphrase: passphrase, includeKey: false); binary = true
        case "p12-with-key": bytes = try CAExport.pkcs12(ca, passphrase: passphrase, includeKey: true); binary = true
        case "android":
            let name = CAExport.androidFileName(ca)
            var isDir: ObjCBool = false
            if let out = output {
                if FileManager.default.fileExists(atPath: out, isDirectory: &isDir), isDir.boolValue { output = out + "/" + name }
            }
            bytes = CAExport.android(ca)
            if output == nil { inv.console.note("Android expects this file to be named \(name).") }
        default:
            inv.console.note(MobileConfig.unsignedNotice)
            let identity = try ProfileIdentity.loadOrCreate(path: folder.identityPath)
            bytes = try CAExport.mobileConfig(ca, identity: identity)
        }
        if let output {
            let mode: mode_t = format == "p12-with-key" ? 0o600 : 0o644
            try FileModes.writeAtomically(bytes, to: output, mode: mode)
            inv.console.note("Wrote \(output) (\(bytes.count) bytes).")
        } else {
            if binary && inv.console.stdoutIsTerminal {
                throw UsageRefusal("--\(format) is binary and standard output is a terminal; write it with -o FILE or redirect it.", exitCode: 1)
            }
            inv.console.bytes(bytes)
        }
        return 0
    }

    /// The names as a certificate carries them: each international label as its A-label
    /// (`IDNA.asciiHost`, libidn2, as the proxy converts SNI and CONNECT hosts), so `bücher.test`
    /// is issued as `xn--bcher-kva.test` (it was refused with advice to convert it by hand,
    /// though tv links libidn2: a trial). A wildcard label and addresses are left as typed.
    /// - Throws: `CAError.invalidName` with libidn2's reason when IDNA refuses a label.
    static func issueNames(_ names: [String]) throws -> [String] {
        try names.map { name in
            guard IDNA.isInternational(name) else { return name }
            let labels = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            return try labels.map { label in
                do throws(IDNARefusal) { return try IDNA.asciiHost(label) } catch {
                    throw CAError.invalidName(name, reason: "'\(TerminalText.line(label))' is not a valid international label (IDNA: \(error.reason))")
                }
            }.joined(separator: ".")
        }
    }

    static func issue(_ inv: Invocation) throws -> Int32 {
        let keyType = try inv.command.value("key").map(KeyType.parse) ?? .ecdsaP256
        let identity = try LeafIdentity(names: try issueNames(inv.command.positionals))
        let (ca, _) = try loadPresent(inv)
        let leaf = try ca.issue(for: identity, keyType: keyType, now: inv.now)
        let dir = inv.command.value("out-dir") ?? FileManager.default.currentDirectoryPath
        // Make the folder only when it is missing: an existing one (the current folder, /tmp, a
        // project folder) is the user's, and its mode is not ours to change.
        // Only the last folder of the path is made: a parent that is missing is more likely a
        // typo than a wish (a trial's `--out-dir /nonexistent/x` made both, 0755, and put a key
        // there), and `tv ca export -o` refuses a missing folder too.
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), !isDir.boolValue {
            throw UsageRefusal("--out-dir \(dir) is a file, not a folder; name a folder (tv makes it when it is missing).")
        }
        if !FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) {
            let parent = PathText.folder(of: dir)
            var parentIsDir: ObjCBool = false
            guard parent.isEmpty || (FileManager.default.fileExists(atPath: parent, isDirectory: &parentIsDir) && parentIsDir.boolValue) else {
                throw UsageRefusal("--out-dir \(dir): the folder \(parent) does not exist; tv makes only the last folder of the path.")
            }
            try FileModes.makeDirectory(dir, mode: 0o755)
        }
        let base = (identity.dnsNames.first ?? identity.ipAddresses.first!.description).replacingOccurrences(of: "*", with: "_wildcard")
        let certPath = dir + "/\(base).pem"
        let chainPath = dir + "/\(base)-chain.pem"
        let keyPath = dir + "/\(base)-key.pem"
        let rootPath = dir + "/\(base)-root.pem"
        // Never over a key (or its certificate) a server may be using: a trial's second issue
        // replaced the first's key without a word.
        for path in [keyPath, certPath, chainPath] {
            var st = stat()
            if lstat(path, &st) == 0 { throw CAError.wouldOverwrite(path: path) }
        }
        try FileModes.writeAtomically(try leaf.key.pkcs8PEM(), to: keyPath, mode: 0o600)
        try FileModes.writeAtomically(leaf.certificate.pem, to: certPath, mode: 0o644)
        try FileModes.writeAtomically(leaf.chainPEM, to: chainPath, mode: 0o644)
        try FileModes.writeAtomically(leaf.root.pem, to: rootPath, mode: 0o644)
        let typed = inv.command.positionals.filter(IDNA.isInternational)
        let asTyped = typed.isEmpty ? "" : " (\(typed.map(TerminalText.line).joined(separator: ", ")) as A-labels)"
        inv.console.line("Issued a certificate for \(identity.subjectAlternativeNames.map(\.description).joined(separator: ", "))\(asTyped), valid until \(Timestamp.utc(leaf.certificate.notAfter)).")
        inv.console.line("  certificate  \(certPath)")
        inv.console.line("  chain        \(chainPath) (what a server sends: the certificate and its intermediates, none here; not the root)")
        inv.console.line("  key          \(keyPath) (0600)")
        inv.console.line("  root         \(rootPath) (this CA's root: what clients trust, e.g. curl --cacert; a server does not send it)")
        inv.console.line("Clients trust it once they trust this root (`tv ca trust` shows how).")
        return 0
    }
}
