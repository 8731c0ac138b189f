import ControlChannel
import Settings
import TVHome

/// Tells a running `tv run` session that a setting was saved, over its control socket
/// ("saved first, applied second": the session re-reads `settings.json` and applies it).
public struct ControlSocketNotifier: LiveSessionNotifier {
    /// The control socket's path (`$TV_HOME/run/control.sock`).
    public let socketPath: String
    /// Every running session's socket: `tv run`'s, then each `tv exec`'s (`run/exec-PID.sock`).
    let allSockets: @Sendable () -> [String]

    public init(home: TVHome) {
        socketPath = SessionPaths.controlSocket(home)
        allSockets = { AuditKeysNotifier.sockets(home: home) }
    }

    public func settingSaved(key: String, record: SettingsRecord) -> LiveSessionDelivery {
        deliver(ControlRequest(command: "setting-saved", arguments: ["key": key]))
    }

    /// Tells a running session that the data folder's CA was made, imported, remade or removed,
    /// so it mints from the one there now (and applies the saved inspection setting) at once.
    public func caChanged() -> LiveSessionDelivery {
        deliverToAll(ControlRequest(command: "ca-changed"))
    }

    /// Tells a running session that `host` was removed from the pinned hosts (the row is already
    /// gone), so its next connection is inspected again without a restart.
    public func pinnedHostForgotten(_ host: String) -> LiveSessionDelivery {
        deliverToAll(ControlRequest(command: "pinned-forgotten", arguments: ["host": host]))
    }

    /// Tells every running session that the clients remembered as lacking tv's root were
    /// forgotten (the rows are already gone: `LacksRootMemory`), so it drops them from its memory.
    public func lacksRootForgotten() -> LiveSessionDelivery {
        deliverToAll(ControlRequest(command: "pinned-forgotten", arguments: [Self.kindArgument: Self.lacksRootKind]))
    }

    /// The `pinned-forgotten` argument naming a kind of client pin forgotten, in place of a host.
    public static let kindArgument = "kind"
    /// Its value for the clients remembered as lacking tv's root.
    public static let lacksRootKind = "lacksRoot"

    /// `request` to every running session, `tv exec`s too: a remade CA or a forgotten pin
    /// reached only `tv run`, and a running exec went on minting from the deleted root, then
    /// remembered every client that refused it as lacking tv's root (a re-check). One answer:
    /// a failure if any session failed, else applied if any took it, else no session.
    func deliverToAll(_ request: ControlRequest) -> LiveSessionDelivery {
        let answers = allSockets().map { deliver(request, to: $0) }.filter { $0 != .noSession }
        if let failed = answers.first(where: { if case .failed = $0 { return true } else { return false } }) { return failed }
        return answers.first ?? .noSession
    }

    private func deliver(_ request: ControlRequest) -> LiveSessionDelivery { deliver(request, to: socketPath) }

    private func deliver(_ request: ControlRequest, to socketPath: String) -> LiveSessionDelivery {
        guard let client = try? ControlClient(path: socketPath) else { return .noSession }
        do {
            let response = try client.send(request)
            guard response.ok else { return .failed(reason: response.message) }
            if response.values[SettingsAtStart.appliesKey] == SettingsAtStart.atNextStart { return .atNextStart(reason: response.message) }
            if let report = response.values[SessionRetention.reportKey] {
                return .appliedSaying(report.split(separator: "\n").map { TerminalText.line(String($0)) })
            }
            return .applied
        } catch ControlError.notRunning {
            return .noSession
        } catch let error as UserFacingError {
            return .failed(reason: error.message)
        } catch {
            return .failed(reason: "\(error)")
        }
    }
}

/// Paths a session uses inside `$TV_HOME`.
public enum SessionPaths {
    /// `$TV_HOME/run/control.sock` (0600, folder 0700).
    public static func controlSocket(_ home: TVHome) -> String { home.runDirectory + "/control.sock" }
}
