import Foundation
import TVHome

/// What a session that is not answering on its control socket left behind: that it is still
/// starting (and which process), or that its last start failed, when and why. One small JSON file,
/// `$TV_HOME/run/session-state` (0600, in the 0700 run folder); `tv top` reads it to tell off,
/// starting and failed apart. A session that starts removes it.
///
/// Shape: `{"state": "starting"|"failed", "pid": 123, "at": MICROS, "reason": "sentence"}`.
public struct SessionStartRecord: Sendable, Equatable {
    /// Where the session is.
    public enum State: String, Sendable, Equatable {
        case starting
        case failed
    }

    public var state: State
    /// The process that wrote it.
    public var pid: Int32
    /// When it was written, µs since the epoch.
    public var atMicros: Int64
    /// Why the start failed (the error's one sentence); nil while starting.
    public var reason: String?

    public init(state: State, pid: Int32, atMicros: Int64, reason: String? = nil) {
        self.state = state
        self.pid = pid
        self.atMicros = atMicros
        self.reason = reason
    }

    /// `$TV_HOME/run/session-state`.
    public static func path(_ home: TVHome) -> String { home.runDirectory + "/session-state" }

    /// Writes the record (0600), best effort: a session that cannot say it is starting still starts.
    public func write(_ home: TVHome) {
        var fields: [(String, JSONValue)] = [("state", .string(state.rawValue)), ("pid", .int(Int64(pid))), ("at", .int(atMicros))]
        if let reason { fields.append(("reason", .string(reason))) }
        try? home.ensureDirectory(home.runDirectory)
        try? FileModes.writeAtomically(Array(JSONValue.object(fields).serialized(pretty: false).utf8),
                                       to: SessionStartRecord.path(home), mode: 0o600)
    }

    /// Removes the record (the session is up, or stopped cleanly).
    public static func clear(_ home: TVHome) { unlink(path(home)) }

    /// Reads the record; nil when there is none or it cannot be read.
    public static func read(_ home: TVHome) -> SessionStartRecord? {
        guard let data = FileManager.default.contents(atPath: path(home)),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let state = (object["state"] as? String).flatMap(State.init(rawValue:)),
              let pid = (object["pid"] as? NSNumber)?.int32Value,
              let at = (object["at"] as? NSNumber)?.int64Value else { return nil }
        return SessionStartRecord(state: state, pid: pid, atMicros: at, reason: object["reason"] as? String)
    }
}

/// A session as `tv top` shows it when it is not live: told apart without colour.
public enum SessionLiveness: Sendable, Equatable {
    /// No session, and no failed start remembered.
    case off
    /// A session is preparing (its process is alive and has not opened its control socket yet).
    case starting(pid: Int32)
    /// The last start failed: when (µs) and why.
    case failed(atMicros: Int64, reason: String)
    /// A session answers.
    case live

    /// What to show when no session answers, from the record and whether its process is alive.
    public static func notAnswering(_ record: SessionStartRecord?, processAlive: (Int32) -> Bool) -> SessionLiveness {
        guard let record else { return .off }
        switch record.state {
        case .starting: return processAlive(record.pid) ? .starting(pid: record.pid) : .off
        case .failed: return .failed(atMicros: record.atMicros, reason: record.reason ?? "no reason was recorded")
        }
    }

    /// The state's word in the monitoring strip: `LIVE`, `STARTING`, `FAILED`, `OFF`.
    public var word: String {
        switch self {
        case .off: return "OFF"
        case .starting: return "STARTING"
        case .failed: return "FAILED"
        case .live: return "LIVE"
        }
    }
}
