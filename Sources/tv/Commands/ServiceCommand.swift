import CommandLineParser
import Foundation
import Tunnel
import TVCore
import TVHome

/// `tv service install | remove | show`: `tv run` as a systemd service (`ServiceUnit`), said
/// before it is done (`ServicePlan`) and asked unless `--yes`.
enum ServiceCommand {
    static let userOption = OptionSpec("user", help: "A user service (~/.config/systemd/user/tv.service, systemctl --user) instead of a system one (/etc/systemd/system/tv.service).")

    static let execOption = OptionSpec("exec", value: "PATH", help: "The tv the service runs, an absolute path (default: this one).")

    static let spec = CommandSpec(
        name: "service", summary: "Run tv run as a systemd service: install, remove, or show its unit.",
        discussion: "The service runs `tv --data-dir DIR run --quiet`, restarts on failure, and writes its messages to the journal: `journalctl -u tv` (`journalctl --user -u tv` for a user service; -f follows). A system service keeps its data in /var/lib/tunnelvision unless --data-dir says otherwise; read it with `sudo tv --data-dir /var/lib/tunnelvision flows`. Change its command line with `systemctl edit tv` (e.g. --listen or --metrics).",
        subcommands: [
            CommandSpec(name: "install", summary: "Write the unit, then enable and start it (says what it will do, then asks).",
                        options: [userOption, execOption, OptionSpec("yes", help: "Agree without asking.")]),
            CommandSpec(name: "remove", summary: "Stop and disable the service and remove its unit (the data folder is kept).",
                        options: [userOption, OptionSpec("yes", help: "Agree without asking.")]),
            CommandSpec(name: "show", summary: "Print the unit tv service install would write.", options: [userOption, execOption]),
        ])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "service install": install, "service remove": remove, "service show": show,
    ]

    static func scope(_ inv: Invocation) -> ServiceUnit.Scope { inv.command.has("user") ? .user : .system }

    /// The unit for this command line: this `tv`, and the data folder (`--data-dir`; a system
    /// service's default is /var/lib/tunnelvision, a user service's the usual one).
    static func unit(_ inv: Invocation) throws -> ServiceUnit {
        let scope = scope(inv)
        let folder: String
        if let given = inv.command.value("data-dir") {
            folder = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
        } else if scope == .system {
            folder = ServiceUnit.systemDataFolder
        } else {
            folder = try TVHome.resolve(dataDir: nil, environment: inv.environment).path
        }
        let binary: String
        if let given = inv.command.value("exec") {
            guard given.hasPrefix("/") else { throw UsageRefusal("--exec takes an absolute path (systemd runs it from /), not '\(given)'.") }
            binary = given
        } else {
            binary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        }
        // A unit file is lines: a line break (or another control character) in a path cannot
        // be written into one (systemd-analyze refused a trial's unit as unbalanced quoting).
        for (what, path) in [("--data-dir", folder), ("--exec", binary)] where path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw UsageRefusal("\(what) names a path with a line break or another control character, which a systemd unit cannot hold; choose another path.")
        }
        if inv.command.value("exec") != nil, !FileManager.default.isExecutableFile(atPath: binary) {
            inv.console.note("tv: \(binary) is not an executable file here; the service will fail to start until it is.")
        }
        return ServiceUnit(scope: scope, binary: binary, dataFolder: (folder as NSString).standardizingPath)
    }

    static func unitPath(_ inv: Invocation, _ scope: ServiceUnit.Scope) throws -> String {
        guard scope == .user else { return ServiceUnit.path(scope: .system, configHome: "") }
        if let config = inv.environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return ServiceUnit.path(scope: .user, configHome: config) }
        guard let home = inv.environment["HOME"], home.hasPrefix("/") else {
            throw UsageRefusal("tv service install --user needs HOME (or XDG_CONFIG_HOME) to find ~/.config/systemd/user; set it and try again.", exitCode: 1)
        }
        return ServiceUnit.path(scope: .user, configHome: home + "/.config")
    }

    static var systemdRunning: Bool { FileManager.default.fileExists(atPath: "/run/systemd/system") }

    static func show(_ inv: Invocation) throws -> Int32 {
        let unit = try unit(inv)
        inv.console.out(unit.text)
        if let problem = unit.privateTmpProblem { inv.console.note("tv: " + problem) }
        return 0
    }

    static func install(_ inv: Invocation) throws -> Int32 {
        let unit = try unit(inv)
        if let problem = unit.privateTmpProblem { throw UsageRefusal(problem, exitCode: 1) }
        let path = try unitPath(inv, unit.scope)
        if unit.scope == .system && getuid() != 0 {
            throw UsageRefusal("A system service is written to /etc/systemd/system, which needs root: run sudo tv service install, or tv service install --user for your own.", exitCode: 1)
        }
        let plan = ServicePlan(action: .install(unit), unitPath: path, systemdRunning: systemdRunning,
                               unitExists: FileManager.default.fileExists(atPath: path))
        guard try agreed(inv, plan) else { return 1 }
        let home = try TVHome.resolve(dataDir: unit.dataFolder, environment: inv.environment)
        try home.ensureExists()
        do {
            try FileManager.default.createDirectory(atPath: PathText.folder(of: path), withIntermediateDirectories: true)
            try Data(unit.text.utf8).write(to: URL(fileURLWithPath: path))
            _ = chmod(path, 0o644)
        } catch {
            throw UsageRefusal("Could not write \(path) (\(error.localizedDescription)); nothing else was changed.", exitCode: 1)
        }
        inv.console.line("Wrote \(path).")
        if plan.systemdRunning {
            for command in plan.commands { try systemctl(command, inv) }
            inv.console.line("The service is running; its messages: journalctl \(unit.scope == .user ? "--user " : "")-u tv -f")
        }
        return 0
    }

    static func remove(_ inv: Invocation) throws -> Int32 {
        let scope = scope(inv)
        let path = try unitPath(inv, scope)
        let plan = ServicePlan(action: .remove(scope), unitPath: path, systemdRunning: systemdRunning,
                               unitExists: FileManager.default.fileExists(atPath: path))
        guard plan.unitExists else {
            inv.console.line("There is no \(path); nothing to remove.")
            return 0
        }
        guard try agreed(inv, plan) else { return 1 }
        if plan.systemdRunning { try systemctl(plan.commands[0], inv) }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            throw UsageRefusal("Could not remove \(path) (\(error.localizedDescription)); remove it by hand.", exitCode: 1)
        }
        inv.console.line("Removed \(path).")
        if plan.systemdRunning { try systemctl(plan.commands[1], inv) }
        return 0
    }

    /// Says the plan, then asks (or takes `--yes`); false: nothing was done.
    private static func agreed(_ inv: Invocation, _ plan: ServicePlan) throws -> Bool {
        for line in plan.lines { inv.console.note(line) }
        if inv.yes { return true }
        guard inv.console.stdinIsTerminal else {
            throw UsageRefusal("Nothing was done: there is no terminal to ask on; run again with --yes to agree.", exitCode: 1)
        }
        guard inv.console.confirm("Go ahead?") else {
            inv.console.note("Nothing was done.")
            return false
        }
        return true
    }

    /// Runs one `systemctl` command; a failure is said with the command to run by hand.
    private static func systemctl(_ words: [String], _ inv: Invocation) throws {
        // posix_spawn and waitpid for this child alone (its output is the terminal's): Foundation's
        // Process would also wait for any helper it leaves running.
        let status: Int32
        do {
            status = ChildProcess.wait(try ChildProcess.spawn(words, environment: ProcessInfo.processInfo.environment))
        } catch TunnelError.cannotRun(_, let reason, _) {
            throw UsageRefusal("Could not run \(words.joined(separator: " ")) (\(reason)); run it by hand.", exitCode: 1)
        }
        guard status == 0 else {
            throw UsageRefusal("\(words.joined(separator: " ")) failed (exit \(status)); see its message above, fix it and run it again.", exitCode: 1)
        }
    }
}
