/// The systemd unit `tv service install` writes (systemd.unit(5), systemd.service(5),
/// systemd.exec(5)): `tv run` in the foreground with its data folder, restarted on failure, its
/// standard error (every notice) in the journal (`journalctl -u tv`), hardened as far as a proxy
/// that records to its data folder allows.
public struct ServiceUnit: Sendable, Equatable {
    /// A system service (root's, started at boot) or a user service (started with the user's
    /// session manager, or at boot with `loginctl enable-linger`).
    public enum Scope: String, Sendable, Equatable {
        case system, user
    }

    /// The unit's name.
    public static let name = "tv.service"
    /// A system service's data folder when none is given.
    public static let systemDataFolder = "/var/lib/tunnelvision"

    public var scope: Scope
    /// The absolute path of the `tv` to run.
    public var binary: String
    /// The absolute path of the data folder.
    public var dataFolder: String

    public init(scope: Scope, binary: String, dataFolder: String) {
        self.scope = scope
        self.binary = binary
        self.dataFolder = dataFolder
    }

    /// Where the unit goes: `/etc/systemd/system/tv.service`, or under the user's configuration
    /// folder (`$XDG_CONFIG_HOME`, else `~/.config`) `systemd/user/tv.service`.
    /// - Parameter configHome: the user's configuration folder (for `.user`).
    public static func path(scope: Scope, configHome: String) -> String {
        switch scope {
        case .system: return "/etc/systemd/system/" + name
        case .user: return configHome + "/systemd/user/" + name
        }
    }

    /// Why a system service could not run as written: it gets a private, empty /tmp and /var/tmp
    /// (`PrivateTmp=yes`), so a `tv` or a data folder under them is not there for it (a new-user
    /// trial's unit named /var/tmp/…/tv); nil for a user service or paths outside them.
    public var privateTmpProblem: String? {
        guard scope == .system else { return nil }
        func underTmp(_ path: String) -> Bool {
            ["/tmp", "/var/tmp"].contains { path == $0 || path.hasPrefix($0 + "/") }
        }
        if underTmp(binary) {
            return "The system service gets its own empty /tmp and /var/tmp (PrivateTmp=yes), so it would not find \(binary) there; "
                + "put tv elsewhere (Scripts/install --system links it into /usr/local/bin) and pass --exec PATH, or install a --user service."
        }
        if underTmp(dataFolder) {
            return "The system service gets its own empty /tmp and /var/tmp (PrivateTmp=yes), so its data in \(dataFolder) would not be the folder you read; "
                + "pass --data-dir with a folder outside them, or install a --user service."
        }
        return nil
    }

    /// The command line systemd runs.
    public var execStart: String {
        [binary, "--data-dir", dataFolder, "run", "--quiet"].map(Self.quote).joined(separator: " ")
    }

    /// The unit file's text.
    public var text: String {
        var lines = [
            "# Made by 'tv service install'; 'tv service remove' disables and removes it.",
            "# Its messages: journalctl \(scope == .user ? "--user " : "")-u tv (add -f to follow).",
            "[Unit]",
            "Description=TunnelVision (tv run): a proxy that records every connection",
            "Documentation=man:tv-run(1) man:tv-service(1)",
        ]
        if scope == .system { lines += ["Wants=network-online.target", "After=network-online.target"] }
        lines += [
            "",
            "[Service]",
            "Type=exec",
            "ExecStart=" + execStart,
            "Restart=on-failure",
            "RestartSec=2s",
            // `tv stop` and SIGTERM flush everything; the session answers within 14 s.
            "TimeoutStopSec=20s",
            "UMask=0077",
            "NoNewPrivileges=yes",
            "LockPersonality=yes",
            "RestrictRealtime=yes",
            "RestrictSUIDSGID=yes",
        ]
        if scope == .system {
            lines += [
                // The data folder is the only place written; /etc/ssl and the rest are read.
                "ProtectSystem=strict",
            ]
            // The default folder is systemd's to make (0700, root's); another must exist.
            lines += dataFolder == Self.systemDataFolder
                ? ["StateDirectory=" + String(Self.systemDataFolder.dropFirst("/var/lib/".count)), "StateDirectoryMode=0700"]
                : ["ReadWritePaths=" + Self.quotePath(dataFolder)]
            lines += [
                "PrivateTmp=yes",
                "PrivateDevices=yes",
                "ProtectKernelTunables=yes",
                "ProtectKernelModules=yes",
                "ProtectKernelLogs=yes",
                "ProtectControlGroups=yes",
                "ProtectClock=yes",
                "ProtectHostname=yes",
                "RestrictNamespaces=yes",
                // Netlink: the program behind each flow comes from sock_diag.
                "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
                "SystemCallArchitectures=native",
                "CapabilityBoundingSet=CAP_NET_BIND_SERVICE CAP_SYS_PTRACE CAP_DAC_READ_SEARCH",
            ]
        }
        lines += ["", "[Install]", "WantedBy=" + (scope == .system ? "multi-user.target" : "default.target")]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A word of a command line as systemd reads it (systemd.service(5) "Command lines"):
    /// as it is when it holds only safe characters, else in double quotes with `\` and `"`
    /// escaped; `%` is doubled (a specifier otherwise) and `$` too (a variable otherwise).
    public static func quote(_ word: String) -> String {
        quoted(word.replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "$", with: "$$"), safe: word)
    }

    /// A path in a path-list setting (`ReadWritePaths=`, systemd.exec(5)): quoted as `quote`
    /// quotes, `%` doubled, but `$` as it is: variables are expanded only on command lines, so
    /// `$$` there named another folder (a trial's `/srv/$HOME/x`).
    public static func quotePath(_ path: String) -> String {
        quoted(path.replacingOccurrences(of: "%", with: "%%"), safe: path)
    }

    private static func quoted(_ escaped: String, safe word: String) -> String {
        let safe = !word.isEmpty && word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+:@,=".contains($0)) }
        if safe { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
