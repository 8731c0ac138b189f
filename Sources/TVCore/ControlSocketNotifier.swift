import ControlChannel
import Settings
import TVHome

/// Tells a running `tv run` session that a setting was saved, over its control socket
/// ("saved first, applied second": the session re-reads `settings.json` and applies it).
public struct ControlSocketNotifier: LiveSessionNotifier {
    /// The control socket's path (`$TV_HOME/run/control.sock`).
    public let socketPath: String

    public init(home: TVHome) { socketPath = SessionPaths.controlSocket(home) }

    public func settingSaved(key: String, record: SettingsRecord) -> LiveSessionDelivery {
        deliver(ControlRequest(command: "setting-saved", arguments: ["key": key]))
    }

    /// Tells a running session that the data folder's CA was made, imported, remade or removed,
    /// so it mints from the one there now (and applies the saved inspection setting) at once.
    public func caChanged() -> LiveSessionDelivery {
        deliver(ControlRequest(command: "ca-changed"))
    }

    /// Tells a running session that `host` was removed from the pinned hosts (the row is already
    /// gone), so its next connection is inspected again without a restart.
    public func pinnedHostForgotten(_ host: String) -> LiveSessionDelivery {
        deliver(ControlRequest(command: "pinned-forgotten", arguments: ["host": host]))
    }

    private func deliver(_ request: ControlRequest) -> LiveSessionDelivery {
        guard let client = try? ControlClient(path: socketPath) else { return .noSession }
        do {
            let response = try client.send(request)
            guard response.ok else { return .failed(reason: response.message) }
            return response.values[SettingsAtStart.appliesKey] == SettingsAtStart.atNextStart ? .atNextStart(reason: response.message) : .applied
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
