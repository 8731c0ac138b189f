import Foundation
import Testing

/// `tv service install | remove | show` through the real binary (issue 22): the unit written for a
/// user service in a scratch HOME, checked by `systemd-analyze verify`, then removed. systemd
/// itself is not asked to start anything unless it runs this machine (then `systemctl --user` would
/// need a user manager of the scratch user; the start/stop case is skipped with the reason). Where
/// systemd is not PID 1, `ServiceSystemdTests` boots one in namespaces and runs the unit there.
@Suite("CLI: tv service (issue 22)", .timeLimit(.minutes(5)))
struct ServiceCLITests {
    static var systemdRunning: Bool { FileManager.default.fileExists(atPath: "/run/systemd/system") }

    @Test("install --user --yes writes the unit show prints, says what it does first, systemd-analyze verify accepts it; remove removes it", .enabled(if: !ServiceCLITests.systemdRunning, "systemd runs this machine: install would start the service for real"))
    func userInstallAndRemove() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            let home = s.root + "/home"
            let unitPath = home + "/.config/systemd/user/tv.service"
            let data = s.root + "/svcdata"
            let shown = try s.tvArgs(["--data-dir", data, "service", "show", "--user"], dataDir: false)
            #expect(shown.status == 0 && shown.out.contains("\nExecStart=\(tv) --data-dir \(data) run --quiet\n"), "\(shown)")

            let refused = try s.tvArgs(["--data-dir", data, "service", "install", "--user"], dataDir: false)
            #expect(refused.status == 1 && refused.err.hasSuffix("tv: Nothing was done: there is no terminal to ask on; run again with --yes to agree.\n"), "\(refused)")
            #expect(!FileManager.default.fileExists(atPath: unitPath))

            let installed = try s.tvArgs(["--data-dir", data, "service", "install", "--user", "--yes"], dataDir: false)
            #expect(installed.status == 0, "\(installed)")
            #expect(installed.err == """
                tv service install will write \(unitPath), which runs:
                  \(tv) --data-dir \(data) run --quiet
                restarted on failure, its messages in the journal (journalctl --user -u tv).
                It makes the data folder \(data) (0700) if missing.
                systemd is not running here (no /run/systemd/system), so nothing is started; on a machine booted with systemd run systemctl --user daemon-reload and systemctl --user enable --now tv.service.

                """, "\(installed)")
            #expect(installed.out == "Wrote \(unitPath).\n")
            #expect(s.text(unitPath) == shown.out)
            #expect(s.mode(data).map { $0 & 0o777 } == 0o700)

            // --man=no: its Documentation= pages are not installed here (the package test checks them).
            let verify = try s.tool("systemd-analyze", ["verify", "--man=no", unitPath], timeout: 60)
            #expect(!verify.all.contains("tv.service"), "\(verify)")
            // The system unit too (written to a scratch file: install would write /etc).
            let system = try s.write("tv.service", try s.tvArgs(["service", "show"], dataDir: false).out)
            let systemVerify = try s.tool("systemd-analyze", ["verify", "--man=no", system], timeout: 60)
            #expect(!systemVerify.all.contains("tv.service"), "\(systemVerify)")

            let removed = try s.tvArgs(["service", "remove", "--user", "--yes"], dataDir: false)
            #expect(removed.status == 0 && removed.out == "Removed \(unitPath).\n", "\(removed)")
            #expect(removed.err == "tv service remove will remove \(unitPath); the data folder is kept.\n")
            #expect(!FileManager.default.fileExists(atPath: unitPath) && FileManager.default.fileExists(atPath: data))
            let again = try s.tvArgs(["service", "remove", "--user", "--yes"], dataDir: false)
            #expect(again.status == 0 && again.out == "There is no \(unitPath); nothing to remove.\n", "\(again)")
        }
    }

    @Test("a system service needs root; --exec must be absolute")
    func refusals() throws {
        try withSandbox { s in
            let relative = try s.tvArgs(["service", "show", "--exec", "bin/tv"], dataDir: false)
            #expect(relative.status == 2 && relative.err == "tv: --exec takes an absolute path (systemd runs it from /), not 'bin/tv'.\n", "\(relative)")
            let shown = try s.tvArgs(["service", "show", "--exec", "/usr/bin/tv"], dataDir: false)
            #expect(shown.out.contains("\nExecStart=/usr/bin/tv --data-dir /var/lib/tunnelvision run --quiet\n"), "\(shown)")
            // A line break cannot be written into a unit; a --exec that is not there is said.
            let broken = try s.tvArgs(["--data-dir", "/srv/new\nline", "service", "show"], dataDir: false)
            #expect(broken.status == 2 && broken.err == "tv: --data-dir names a path with a line break or another control character, which a systemd unit cannot hold; choose another path.\n", "\(broken)")
            let missing = try s.tvArgs(["service", "show", "--exec", "/nonexistent/tv"], dataDir: false)
            #expect(missing.status == 0 && missing.err.contains("tv: /nonexistent/tv is not an executable file here; the service will fail to start until it is."), "\(missing)")
        }
    }

    @Test("start and stop as a real system service", .enabled(if: ServiceCLITests.systemdRunning, "systemd is not PID 1 on this machine (no /run/systemd/system); ServiceSystemdTests runs the service under a systemd of its own"))
    func realService() throws {
        try withSandbox { s in
            let installed = try s.tvArgs(["--data-dir", s.root + "/svc", "service", "install", "--yes"], dataDir: false)
            defer { _ = try? s.tvArgs(["service", "remove", "--yes"], dataDir: false) }
            #expect(installed.status == 0, "\(installed)")
            let active = try s.tool("systemctl", ["is-active", "tv.service"])
            #expect(active.out == "active\n", "\(active)")
            var status = try s.tvArgs(["--data-dir", s.root + "/svc", "status"], dataDir: false)
            for _ in 0..<50 where status.status != 0 { usleep(100_000); status = try s.tvArgs(["--data-dir", s.root + "/svc", "status"], dataDir: false) }
            #expect(status.status == 0, "\(status)")
            let removed = try s.tvArgs(["service", "remove", "--yes"], dataDir: false)
            #expect(removed.status == 0, "\(removed)")
            #expect(try s.tool("systemctl", ["is-active", "tv.service"]).out != "active\n")
        }
    }
}
