import FlowStore
import Foundation
import TVHome

/// Starting and stopping an audit session from a command (`tv audit start`, `tv run --audit`):
/// the store's rules (one live session, an existing project) with the data folder opened here.
public enum AuditRecording {
    /// Starts a session of `project` with `settings` (the mode and settings it runs with).
    /// - Throws: `AuditError`, `FlowStoreError`, `TVHomeError`.
    /// `recorder`: the process recording it for as long as it runs (`tv run --audit`: `current()`).
    /// - Throws: `AuditError`, `FlowStoreError`, `TVHomeError`.
    public static func start(home: TVHome, project: String, note: String, settings: [String: String], now: Int64,
                             recorder: AuditRecorder? = nil) throws -> AuditSession {
        let store = try FlowStore(home: home)
        defer { store.close() }
        return try store.audit.start(project: project, note: note, settings: AuditPresentation.settingsText(settings), now: now,
                                     recorder: recorder)
    }

    /// The keys of a running session's status an audit session records as its settings (`tv
    /// audit start` beside a session, and `tv run --audit`): the same shape either way.
    /// `caSHA256` is the root the session mints leaves from (hex), so a bundle names the CA its
    /// flows were inspected with, not the data folder's at bundle time (a trial's manifest named
    /// a CA remade after the session, and the folder's CA beside a `tv run --ca` that used another).
    public static let settingsKeys = ["mode", "modeLabel", "listen", "inspection", "pid", "caSHA256"]

    /// Records `settings` (`settingsKeys` of the session's status) as session `id`'s.
    /// - Throws: `FlowStoreError`, `TVHomeError`.
    public static func recordSettings(home: TVHome, id: Int64, settings: [String: String]) throws {
        let store = try FlowStore(home: home)
        defer { store.close() }
        try store.audit.recordSettings(session: id, settings: AuditPresentation.settingsText(settings))
    }

    /// A session (`tv run`, `tv exec`) starting while an audit session records that has no
    /// settings yet (`tv audit start` with none running) gives it its own (`settingsKeys` of
    /// `values`); one whose settings are another session's (another pid) adds a marker with its
    /// own at `now` (a trial's session over two runs, inspecting and then not, said the first
    /// run's settings only). Errors leave the audit session as it was.
    public static func adoptLive(home: TVHome, values: [String: String], now: Int64) {
        guard let store = try? FlowStore(home: home) else { return }
        defer { store.close() }
        let own = values.filter { settingsKeys.contains($0.key) }
        if (try? store.audit.adoptSettings(AuditPresentation.settingsText(own))) == true { return }
        _ = try? store.audit.changeLiveSettings(now: now) { text in
            let recorded = AuditPresentation.settings(text)
            guard !recorded.isEmpty, recorded["pid"] != own["pid"] else { return nil }
            return (text, AuditPresentation.runJoined(own))
        }
    }

    /// A session (`tv run`, `tv exec`) mints leaves from root `sha256` (hex) from now on: at its
    /// start, and when `tv ca remake`/`import` reaches it. When an audit session records and its
    /// settings name another root last (`caSHA256`, then `caSHA256s`), the root is added to
    /// `caSHA256s` (the roots the session's runs minted from, in the order they took over, one
    /// used again listed again; comma-separated) with a marker
    /// saying when, so its bundle names every CA its flows were inspected with (a trial's bundle
    /// named only the first root after a `tv ca remake` mid-session, and after a second run
    /// with `--ca`). A session with no settings yet takes them from `adoptLive`. Errors leave
    /// the audit session as it was.
    public static func noteRoot(home: TVHome, sha256: String, now: Int64) {
        guard let store = try? FlowStore(home: home) else { return }
        defer { store.close() }
        _ = try? store.audit.changeLiveSettings(now: now) { text in
            var settings = AuditPresentation.settings(text)
            guard settings["caSHA256"] != nil else { return nil }
            var roots = AuditPresentation.roots(settings)
            // Each switch is recorded, back to an earlier root too (the marker's "from here on"
            // was false after a third run went back to the first run's root: a re-check).
            guard roots.last != sha256 else { return nil }
            roots.append(sha256)
            settings["caSHA256s"] = roots.joined(separator: ",")
            return (AuditPresentation.settingsText(settings), AuditPresentation.rootChanged(sha256))
        }
    }

    /// This process as a recorder; nil when `/proc/self/stat` cannot be read.
    public static func current() -> AuditRecorder? {
        recorder(pid: getpid())
    }

    /// Process `pid` as a recorder (its start ticks from `/proc/PID/stat`); nil when it is gone
    /// or has exited (a zombie).
    public static func recorder(pid: Int32) -> AuditRecorder? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), !AuditRecorder.hasExited(stat: stat),
              let ticks = AuditRecorder.startTicks(stat: stat) else { return nil }
        return AuditRecorder(pid: pid, startTicks: ticks)
    }

    /// Closes the live session when the `tv run --audit` recording it is gone (killed before it
    /// could stop it), at its last flow's time; the sentence to say once, or nil when nothing
    /// was closed. Errors leave the session as it was (the next start says it is recording).
    public static func closeAbandoned(home: TVHome) -> String? {
        guard let store = try? FlowStore(home: home) else { return nil }
        defer { store.close() }
        guard let closed = try? store.audit.closeAbandoned(isAlive: { recorder(pid: $0.pid) == $0 }) else { return nil }
        return AuditPresentation.closedAbandoned(closed)
    }

    /// Stops session `id` when it is still the live one (a `tv run --audit` ending); nil otherwise.
    public static func stop(home: TVHome, id: Int64, now: Int64) -> AuditSession? {
        guard let store = try? FlowStore(home: home) else { return nil }
        defer { store.close() }
        guard let live = try? store.audit.live(), live.id == id else { return nil }
        return try? store.audit.stop(now: now)
    }

    /// A `tv run --audit` that could not start (another session runs, a port is taken, an
    /// unreadable file): its audit session is stopped and, holding no flow and no marker,
    /// deleted with its key log, so a refused start leaves no record that looks like recording
    /// (a trial's four refused starts left four sessions of a few ms and empty key logs).
    public static func discardUnstarted(home: TVHome, id: Int64, now: Int64) {
        _ = stop(home: home, id: id, now: now)
        guard let store = try? FlowStore(home: home) else { return }
        defer { store.close() }
        guard let flows = try? store.audit.flowIDs(session: id), flows.isEmpty,
              let markers = try? store.audit.markers(session: id), markers.isEmpty,
              (try? store.audit.delete(session: id)) != nil else { return }
        unlink(AuditKeyLog.path(home: home, session: id))
    }

    /// The strip for the live session, or nil when none records (one whose `tv run --audit` is
    /// gone is closed first, where it can be: it records nothing).
    public static func strip(home: TVHome, now: Int64) -> String? {
        _ = closeAbandoned(home: home)
        guard let store = try? FlowStore(readingHome: home) else { return nil }
        defer { store.close() }
        guard let live = try? store.audit.live() else { return nil }
        let markers = (try? store.audit.markers(session: live.id).count) ?? 0
        return AuditPresentation.strip(live, markers: markers, now: now)
    }
}
