import TVHome

/// Why the proxy could not start or was refused a setting; each message says what to do next.
public enum ProxyError: UserFacingError, Equatable {
    /// `option`: the option that gave the address (`--listen`, `--metrics`), named in the advice.
    case portInUse(host: String, port: UInt16, option: String = "--listen")
    case cannotListen(host: String, port: UInt16, reason: String, option: String = "--listen")
    case permissionDenied(host: String, port: UInt16, option: String = "--listen")
    case invalidListenAddress(String)
    case invalidMode(String, reason: String)
    /// `--mode reverse:` names the address tv itself listens on (`ProxyMode.reverseTargetIsListener`).
    case reverseTargetIsListener(mode: String, listen: String)
    /// A host pattern that is not a regular expression; `use`: the option that gave it.
    case invalidHostPattern(String, use: HostPatternUse = .hostFilters)
    case upstreamCAFileUnreadable(path: String, reason: String)
    case keylogUnwritable(path: String, reason: String)
    /// The key log file is there but cannot be trusted with TLS secrets (nothing was written).
    case keylogRefused(path: String, problem: FileTrustProblem)
    /// The key log path names a file that holds something else (what it starts with is not a
    /// key log: `KeyLogText`); nothing was written to it.
    case keylogNotAKeyLog(path: String)
    case tlsSetupFailed(String)
    /// `--client-cert` (or the setting) is not `HOST_PATTERN=FILE`.
    case clientCertificateRuleUnreadable(String)
    /// A client certificate file cannot be used (checked at start).
    case clientCertificateUnusable(file: String, pattern: String, ClientCertificateProblem)
    case alreadyStarted
    case threadsUnavailable(String)
    /// Even raised to the hard limit, the file-descriptor `limit` is under the `needed` to start
    /// and take `connections` at once (`DescriptorBudget.start`).
    case descriptorLimitTooLow(limit: UInt64, needed: Int, connections: Int)

    /// 2 for a command line that cannot run as typed (`--listen`, `--mode`: they come only from
    /// it), 1 otherwise.
    public var exitCode: Int32 {
        switch self {
        case .invalidListenAddress, .invalidMode, .reverseTargetIsListener: return 2
        default: return 1
        }
    }

    /// The same failure, its advice naming `option` instead (a listener other than the proxy's).
    public func naming(_ option: String) -> ProxyError {
        switch self {
        case let .portInUse(host, port, _): return .portInUse(host: host, port: port, option: option)
        case let .cannotListen(host, port, reason, _): return .cannotListen(host: host, port: port, reason: reason, option: option)
        case let .permissionDenied(host, port, _): return .permissionDenied(host: host, port: port, option: option)
        default: return self
        }
    }

    public var message: String {
        switch self {
        case let .portInUse(host, port, option):
            return "Port \(port) on \(host) is already in use; stop the other program or pass \(option) \(host):PORT."
        case let .cannotListen(host, port, reason, option):
            return "tv cannot listen on \(Endpoint(address: host, port: port)) (\(reason)); pass another \(option) HOST:PORT."
        case let .permissionDenied(host, port, option):
            return "Listening on port \(port) of \(host) needs more privileges; use a port above 1023, e.g. \(option) \(host):8080."
        case .invalidListenAddress(let text):
            return "'\(text)' is not an address to listen on; write it as HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:8080 or [::1]:8080."
        case let .invalidMode(text, reason):
            return "'\(text)' is not a proxy mode\(reason.isEmpty ? "" : " (\(reason))"); use regular, socks5, transparent, tun, reverse:https://HOST:PORT or reverse:http://HOST:PORT."
        case let .reverseTargetIsListener(mode, listen):
            return "\(mode) points at tv's own listening address \(listen), so every request would come back to tv; give the server's address after reverse:, or listen elsewhere with --listen."
        case let .invalidHostPattern(pattern, use):
            let option = use == .clientCertificate ? "--client-cert HOST_PATTERN" : "--ignore-hosts / --allow-hosts pattern"
            return "'\(pattern)' is not a regular expression; fix the \(option) (e.g. '\\.example\\.com$')."
        case let .upstreamCAFileUnreadable(path, reason):
            return "The upstream CA file \(path) cannot be used (\(reason)); pass a PEM file of CA certificates with --upstream-ca."
        case let .keylogUnwritable(path, reason):
            return "The key log file \(path) cannot be opened (\(reason)); pass a writable path with --keylog or unset SSLKEYLOGFILE."
        case let .keylogNotAKeyLog(path):
            return "tv refuses the key log file \(path): it holds something other than TLS key log lines, and tv appends secrets only to a key log of its own or a new file; pass a new path with --keylog (or SSLKEYLOGFILE)."
        case let .keylogRefused(path, problem):
            let option = "--keylog (or SSLKEYLOGFILE)"
            let fix: String
            switch problem {
            case .symbolicLink:
                fix = "tv does not follow a link for TLS secrets; pass the real file's path with \(option)"
            case .notRegularFile:
                fix = "tv writes TLS secrets only into a regular file; pass the path of one with \(option)"
            case .ownedBy(let owner, _):
                fix = "\(owner.name) could read the TLS secrets; remove it or pass a path of your own with \(option)"
            case .openToOthers, .writableByOthers:
                fix = "others could read the TLS secrets; if it is your key log, `chmod 600 \(path)`, or pass a new path with \(option) (tv creates it 0600)"
            }
            return "tv refuses the key log file \(path): it \(problem.clause), and \(fix)."
        case .clientCertificateRuleUnreadable(let text):
            return "'\(text)' is not HOST_PATTERN=FILE; give a client certificate as --client-cert '\\.example\\.com$=/path/client.pem'."
        case let .clientCertificateUnusable(file, pattern, problem):
            let why: String
            switch problem {
            case .unreadable(let reason): why = "cannot be read (\(reason)); check the path given with --client-cert"
            case .untrusted(.symbolicLink): why = "is a symbolic link, which tv does not follow to a private key; pass the real file's path"
            case .untrusted(.notRegularFile): why = "is not a regular file; pass a PEM file with the certificate, its chain and its key"
            case .untrusted(let trust):
                let fix = trust.isOwnership ? "use a file of your own" : "`chmod 600 \(file)` or use a file of your own"
                why = "\(trust.clause), and it holds a private key; \(fix)"
            case .noCertificate: why = "holds no PEM certificate; put the certificate and its chain in it, with its key"
            case .noKey: why = "holds no PEM private key; put the certificate's unencrypted key in it"
            case .encryptedKey: why = "holds an encrypted private key; decrypt it into the file with `openssl pkey`, kept 0600"
            case .keyMismatch: why = "holds a private key that is not the key of its first certificate; put the certificate first, with its own key"
            case .notValidNow: why = "holds a certificate that is not valid now; renew it"
            case .notForClients:
                why = "holds a certificate whose extended key usage leaves out clientAuth, so servers refuse it for a client "
                    + "(a `tv ca issue` certificate is a server's); issue one with extendedKeyUsage=clientAuth"
            }
            return "The client certificate file \(file) (for '\(pattern)') \(why)."
        case .tlsSetupFailed(let reason):
            return "tv could not prepare its TLS contexts (\(reason)); this is unexpected, please report it with the command you ran."
        case .alreadyStarted:
            return "This proxy is already running; stop it before starting it again."
        case .threadsUnavailable(let reason):
            return "tv could not start its event loops (\(reason)); free some system resources and try again."
        case let .descriptorLimitTooLow(limit, needed, connections):
            return "tv needs at least \(needed) open files (to start, and to take \(connections) connections at once), and this process "
                + "may have only \(limit) (the hard limit, `ulimit -Hn`); raise it (`ulimit -n 1024` in the shell that starts tv; above "
                + "the hard limit, as root or with a nofile line in /etc/security/limits.conf) and start tv again."
        }
    }
}

/// Where a host pattern came from, for naming the option in its error.
public enum HostPatternUse: Sendable, Equatable {
    /// `--ignore-hosts` / `--allow-hosts`.
    case hostFilters
    /// `--client-cert HOST_PATTERN=FILE` (and the `tls.clientCerts` setting).
    case clientCertificate
}
