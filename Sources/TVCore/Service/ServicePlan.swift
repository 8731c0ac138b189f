/// What `tv service install` and `tv service remove` do, said before they do it: the unit file
/// written or removed, and the `systemctl` commands run (none when systemd is not running here;
/// they are then named for the person to run).
public struct ServicePlan: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case install(ServiceUnit)
        case remove(ServiceUnit.Scope)
    }

    public var action: Action
    /// The unit file's path.
    public var unitPath: String
    /// Whether systemd manages this machine now (`/run/systemd/system` exists).
    public var systemdRunning: Bool
    /// Whether the unit file is there now.
    public var unitExists: Bool

    public init(action: Action, unitPath: String, systemdRunning: Bool, unitExists: Bool) {
        self.action = action
        self.unitPath = unitPath
        self.systemdRunning = systemdRunning
        self.unitExists = unitExists
    }

    private var scope: ServiceUnit.Scope {
        switch action {
        case .install(let unit): return unit.scope
        case .remove(let scope): return scope
        }
    }

    /// `systemctl` or `systemctl --user`, then `words`.
    private func systemctl(_ words: String...) -> [String] {
        ["systemctl"] + (scope == .user ? ["--user"] : []) + words
    }

    /// The `systemctl` command lines to run, in order.
    public var commands: [[String]] {
        switch action {
        case .install:
            return [systemctl("daemon-reload"), systemctl("enable", "--now", ServiceUnit.name)]
        case .remove:
            return [systemctl("disable", "--now", ServiceUnit.name), systemctl("daemon-reload")]
        }
    }

    /// The sentences said before asking.
    public var lines: [String] {
        let shown = commands.map { $0.joined(separator: " ") }
        switch action {
        case .install(let unit):
            var out = ["tv service install will \(unitExists ? "replace" : "write") \(unitPath), which runs:",
                       "  " + unit.execStart,
                       "restarted on failure, its messages in the journal (journalctl \(scope == .user ? "--user " : "")-u tv)."]
            out.append("It makes the data folder \(unit.dataFolder) (0700) if missing.")
            if systemdRunning {
                out.append("Then it runs \(shown.joined(separator: " and ")): the service starts now and at every \(scope == .user ? "login" : "boot").")
            } else {
                out.append("systemd is not running here (no /run/systemd/system), so nothing is started; on a machine booted with systemd run \(shown.joined(separator: " and ")).")
            }
            return out
        case .remove:
            guard unitExists else { return [] }
            return systemdRunning
                ? ["tv service remove will run \(shown[0]), remove \(unitPath) and run \(shown[1]); the data folder is kept."]
                : ["tv service remove will remove \(unitPath); the data folder is kept."]
        }
    }
}
