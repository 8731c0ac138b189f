import FlowStore
import TVHome

/// Starting and stopping an audit session from a command (`tv audit start`, `tv run --audit`):
/// the store's rules (one live session, an existing project) with the data folder opened here.
public enum AuditRecording {
    /// Starts a session of `project` with `settings` (the mode and settings it runs with).
    /// - Throws: `AuditError`, `FlowStoreError`, `TVHomeError`.
    public static func start(home: TVHome, project: String, note: String, settings: [String: String], now: Int64) throws -> AuditSession {
        let store = try FlowStore(home: home)
        defer { store.close() }
        return try store.audit.start(project: project, note: note, settings: AuditPresentation.settingsText(settings), now: now)
    }

    /// Stops session `id` when it is still the live one (a `tv run --audit` ending); nil otherwise.
    public static func stop(home: TVHome, id: Int64, now: Int64) -> AuditSession? {
        guard let store = try? FlowStore(home: home) else { return nil }
        defer { store.close() }
        guard let live = try? store.audit.live(), live.id == id else { return nil }
        return try? store.audit.stop(now: now)
    }

    /// The strip for the live session, or nil when none records.
    public static func strip(home: TVHome, now: Int64) -> String? {
        guard let store = try? FlowStore(readingHome: home) else { return nil }
        defer { store.close() }
        guard let live = try? store.audit.live() else { return nil }
        let markers = (try? store.audit.markers(session: live.id).count) ?? 0
        return AuditPresentation.strip(live, markers: markers, now: now)
    }
}
