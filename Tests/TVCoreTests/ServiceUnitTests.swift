import Testing
@testable import TVCore

/// `tv service install`: the unit's exact text, systemd's quoting, and the plan said first.
@Suite struct ServiceUnitTests {
    @Test("the system unit: tv run with its data folder, restart on failure, hardening; the default folder is systemd's StateDirectory")
    func systemUnit() {
        let unit = ServiceUnit(scope: .system, binary: "/usr/bin/tv", dataFolder: "/var/lib/tunnelvision")
        #expect(unit.text == """
            # Made by 'tv service install'; 'tv service remove' disables and removes it.
            # Its messages: journalctl -u tv (add -f to follow).
            [Unit]
            Description=TunnelVision (tv run): a proxy that records every connection
            Documentation=man:tv-run(1) man:tv-service(1)
            Wants=network-online.target
            After=network-online.target

            [Service]
            Type=exec
            ExecStart=/usr/bin/tv --data-dir /var/lib/tunnelvision run --quiet
            Restart=on-failure
            RestartSec=2s
            TimeoutStopSec=20s
            UMask=0077
            NoNewPrivileges=yes
            LockPersonality=yes
            RestrictRealtime=yes
            RestrictSUIDSGID=yes
            ProtectSystem=strict
            StateDirectory=tunnelvision
            StateDirectoryMode=0700
            PrivateTmp=yes
            PrivateDevices=yes
            ProtectKernelTunables=yes
            ProtectKernelModules=yes
            ProtectKernelLogs=yes
            ProtectControlGroups=yes
            ProtectClock=yes
            ProtectHostname=yes
            RestrictNamespaces=yes
            RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
            SystemCallArchitectures=native
            CapabilityBoundingSet=CAP_NET_BIND_SERVICE CAP_SYS_PTRACE CAP_DAC_READ_SEARCH

            [Install]
            WantedBy=multi-user.target

            """)
        let other = ServiceUnit(scope: .system, binary: "/opt/tv 2/tv", dataFolder: "/srv/tv data")
        #expect(other.execStart == "\"/opt/tv 2/tv\" --data-dir \"/srv/tv data\" run --quiet")
        #expect(other.text.contains("\nProtectSystem=strict\nReadWritePaths=\"/srv/tv data\"\nPrivateTmp=yes\n"))
        #expect(!other.text.contains("StateDirectory"))
    }

    @Test("the user unit: the same command, no system-only options, started with the user's manager")
    func userUnit() {
        let unit = ServiceUnit(scope: .user, binary: "/usr/bin/tv", dataFolder: "/home/ann/.local/share/tunnelvision")
        #expect(unit.text == """
            # Made by 'tv service install'; 'tv service remove' disables and removes it.
            # Its messages: journalctl --user -u tv (add -f to follow).
            [Unit]
            Description=TunnelVision (tv run): a proxy that records every connection
            Documentation=man:tv-run(1) man:tv-service(1)

            [Service]
            Type=exec
            ExecStart=/usr/bin/tv --data-dir /home/ann/.local/share/tunnelvision run --quiet
            Restart=on-failure
            RestartSec=2s
            TimeoutStopSec=20s
            UMask=0077
            NoNewPrivileges=yes
            LockPersonality=yes
            RestrictRealtime=yes
            RestrictSUIDSGID=yes

            [Install]
            WantedBy=default.target

            """)
        #expect(ServiceUnit.path(scope: .user, configHome: "/home/ann/.config") == "/home/ann/.config/systemd/user/tv.service")
        #expect(ServiceUnit.path(scope: .system, configHome: "/x") == "/etc/systemd/system/tv.service")
    }

    @Test("a system service cannot see /tmp or /var/tmp (PrivateTmp): a tv or data folder there is a problem said; a user service's is not")
    func privateTmp() {
        #expect(ServiceUnit(scope: .system, binary: "/usr/local/bin/tv", dataFolder: "/var/lib/tunnelvision").privateTmpProblem == nil)
        #expect(ServiceUnit(scope: .system, binary: "/var/tmp/tv-try/tv", dataFolder: "/var/lib/tunnelvision").privateTmpProblem
                == "The system service gets its own empty /tmp and /var/tmp (PrivateTmp=yes), so it would not find /var/tmp/tv-try/tv there; "
                + "put tv elsewhere (Scripts/install --system links it into /usr/local/bin) and pass --exec PATH, or install a --user service.")
        #expect(ServiceUnit(scope: .system, binary: "/usr/bin/tv", dataFolder: "/tmp/tvdata").privateTmpProblem?.hasPrefix(
            "The system service gets its own empty /tmp and /var/tmp (PrivateTmp=yes), so its data in /tmp/tvdata") == true)
        #expect(ServiceUnit(scope: .system, binary: "/tmpfoo/tv", dataFolder: "/var/tmpx").privateTmpProblem == nil)
        #expect(ServiceUnit(scope: .user, binary: "/tmp/tv", dataFolder: "/tmp/d").privateTmpProblem == nil)
    }

    @Test("quoting for systemd: safe words as they are; spaces, quotes and backslashes quoted; % and $ doubled")
    func quoting() {
        #expect(ServiceUnit.quote("/usr/bin/tv") == "/usr/bin/tv")
        #expect(ServiceUnit.quote("a b") == "\"a b\"")
        #expect(ServiceUnit.quote("a\"b\\c") == "\"a\\\"b\\\\c\"")
        #expect(ServiceUnit.quote("/data/100%") == "\"/data/100%%\"")
        #expect(ServiceUnit.quote("/data/$HOME") == "\"/data/$$HOME\"")
        #expect(ServiceUnit.quote("") == "\"\"")
        // A path list (ReadWritePaths=) expands no variables: `$` stays (it was doubled, naming another folder).
        #expect(ServiceUnit.quotePath("/srv/$HOME/x") == "\"/srv/$HOME/x\"")
        #expect(ServiceUnit.quotePath("/data/100%") == "\"/data/100%%\"")
        #expect(ServiceUnit.quotePath("/srv/tv") == "/srv/tv")
        let dollar = ServiceUnit(scope: .system, binary: "/usr/local/bin/tv", dataFolder: "/srv/$HOME/x")
        #expect(dollar.text.contains("\nReadWritePaths=\"/srv/$HOME/x\"\n") && dollar.execStart.contains("\"/srv/$$HOME/x\""))
    }

    @Test("the plan said before installing or removing, with systemd running or not")
    func plans() {
        let unit = ServiceUnit(scope: .user, binary: "/usr/bin/tv", dataFolder: "/home/ann/d")
        let path = "/home/ann/.config/systemd/user/tv.service"
        let install = ServicePlan(action: .install(unit), unitPath: path, systemdRunning: true, unitExists: false)
        #expect(install.commands == [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", "tv.service"]])
        #expect(install.lines == [
            "tv service install will write \(path), which runs:",
            "  /usr/bin/tv --data-dir /home/ann/d run --quiet",
            "restarted on failure, its messages in the journal (journalctl --user -u tv).",
            "It makes the data folder /home/ann/d (0700) if missing.",
            "Then it runs systemctl --user daemon-reload and systemctl --user enable --now tv.service: the service starts now and at every login.",
        ])
        let system = ServicePlan(action: .install(ServiceUnit(scope: .system, binary: "/usr/bin/tv", dataFolder: "/var/lib/tunnelvision")),
                                 unitPath: "/etc/systemd/system/tv.service", systemdRunning: false, unitExists: true)
        #expect(system.lines == [
            "tv service install will replace /etc/systemd/system/tv.service, which runs:",
            "  /usr/bin/tv --data-dir /var/lib/tunnelvision run --quiet",
            "restarted on failure, its messages in the journal (journalctl -u tv).",
            "It makes the data folder /var/lib/tunnelvision (0700) if missing.",
            "systemd is not running here (no /run/systemd/system), so nothing is started; on a machine booted with systemd run systemctl daemon-reload and systemctl enable --now tv.service.",
        ])
        let remove = ServicePlan(action: .remove(.system), unitPath: "/etc/systemd/system/tv.service", systemdRunning: true, unitExists: true)
        #expect(remove.commands == [["systemctl", "disable", "--now", "tv.service"], ["systemctl", "daemon-reload"]])
        #expect(remove.lines == ["tv service remove will run systemctl disable --now tv.service, remove /etc/systemd/system/tv.service and run systemctl daemon-reload; the data folder is kept."])
        #expect(ServicePlan(action: .remove(.user), unitPath: path, systemdRunning: false, unitExists: true).lines
                == ["tv service remove will remove \(path); the data folder is kept."])
        #expect(ServicePlan(action: .remove(.user), unitPath: path, systemdRunning: false, unitExists: false).lines == [])
    }
}
