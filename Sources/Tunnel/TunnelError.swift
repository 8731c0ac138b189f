import Foundation
import TVHome

/// What can go wrong setting up or running a TUN front-end; each says what happened and what to do.
public enum TunnelError: UserFacingError, Equatable {
    /// Not root / missing capabilities.
    /// `command` lacks `missing` (capabilities) for `purpose` ("to make a network namespace and a TUN device").
    case needsPrivileges(command: String, missing: String, purpose: String)
    /// /dev/net/tun could not be opened or attached.
    case cannotOpenTUN(reason: String)
    /// Another live `tv run --mode tun` routes this network namespace (`HostTunnelClaim`); its
    /// pid, data folder and device from its record, when readable.
    case hostTunnelInUse(pid: Int32?, dataFolder: String?, device: String?)
    /// A namespace operation failed.
    case namespace(step: String, reason: String)
    /// A configuration command (`ip …`, a sysctl) failed.
    case configuration(command: String, output: String)
    /// A program tv needs is missing.
    case missingProgram(String, package: String)
    /// The command to run could not be started: `found`, it is there but could not be run (not
    /// executable, a folder, not a program), else there is no such file.
    case cannotRun(command: String, reason: String, found: Bool = false)
    /// The listener could not be opened.
    case cannotListen(reason: String)
    /// `tv exec`'s resolv.conf could not be written in any folder tried (the first one's error).
    case cannotWriteResolvConf(folder: String, reason: String)

    /// As a shell says a command it could not start: 127 when there is no such command, 126
    /// when it is there but cannot be run (bash(1), EXIT STATUS; a trial's file without the x
    /// bit gave 127); else 1.
    public var exitCode: Int32 {
        if case .cannotRun(_, _, let found) = self { return found ? 126 : 127 }
        return 1
    }

    public var message: String {
        switch self {
        case let .needsPrivileges(command, missing, purpose):
            return "\(command) needs root (it lacks \(missing)) \(purpose); run it with sudo."
        case .cannotOpenTUN(let reason):
            return "tv could not open a TUN device (\(reason)); check that /dev/net/tun exists (modprobe tun) and that you are root."
        case let .hostTunnelInUse(pid, dataFolder, device):
            let who = pid.map { "tv (pid \($0)" + (dataFolder.map { ", data folder \($0)" } ?? "") + ")" } ?? "Another tv session"
            let stop = dataFolder.map { "`tv stop --data-dir \(ShellWord.quote($0))`" } ?? "`tv stop` with its data folder"
            return "\(who) already routes this host through \(device ?? "a TUN") with the same rules; stop it first (\(stop)), or run one command through its own TUN with `tv exec`."
        case let .namespace(step, reason):
            return "tv could not \(step) (\(reason)); it needs CAP_SYS_ADMIN and a kernel with network namespaces."
        case let .configuration(command, output):
            let detail = output.trimmingCharacters(in: .whitespacesAndNewlines)
            return "tv could not configure the tunnel: `\(command)` failed\(detail.isEmpty ? "" : " (\(detail))"); nothing was left changed."
        case let .missingProgram(name, package):
            return "tv needs the `\(name)` program to configure routing; install it (apt-get install \(package)) and try again."
        case let .cannotRun(command, reason, found):
            return "tv could not start \(command) (\(reason)); "
                + (found ? "check that it is a program you may run (chmod +x for a script with a #! line)." : "check the command name and PATH.")
        case .cannotListen(let reason):
            return "tv could not open the tunnel's listener (\(reason)); try again."
        case let .cannotWriteResolvConf(folder, reason):
            return "tv could not write the tunnel's resolv.conf in \(folder) (\(reason)), nor in /run/tunnelvision; make room or permission there and try again."
        }
    }
}
