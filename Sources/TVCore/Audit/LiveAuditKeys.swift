import ControlChannel
import FlowStore
import FlowTerms
import Synchronization
import TVHome

/// Where a running session's TLS secrets of both legs go for audit (issue 23): the key log of
/// the audit session recording now (`AuditKeyLog`), or nowhere. The session follows the live
/// audit session (`AuditKeyChoice`): the one `tv run --audit` started, or one `tv audit start`
/// started before or beside it (the command tells the session over its control socket,
/// `LiveAuditKeys.request`), until `tv audit stop` ends it. Lines from before the session learned
/// of it are not in its log. Never blocks a handshake: one short lock to find the log (files are
/// opened and closed outside it), whose queue drops and counts when full.
final class LiveAuditKeys: TLSSecretsRecorder {
    /// The control-socket request `tv audit start` and `tv audit stop` send to every running
    /// session of the data folder: read the live audit session again and follow it.
    static let request = ControlRequest(command: "audit-changed")

    private struct Followed: Sendable {
        var id: Int64?
        var log: AuditKeyLog?
        /// Set by `stop`: nothing is followed again.
        var closed = false
    }

    private let home: TVHome
    private let state = Mutex(Followed())
    /// Serializes `follow` (the session's start and the control thread), so a log is made once.
    private let changing = Mutex(())
    /// Turned on when an audit session is first followed: the TLS contexts make key log lines
    /// from then on.
    let keyLogSwitch: KeyLogSwitch

    /// Follows nothing yet; `refollow` or `follow` starts.
    /// - Parameter keyLogSwitch: turned on when a key log is first followed (the session's TLS
    ///   contexts make no lines before).
    init(home: TVHome, keyLogSwitch: KeyLogSwitch = KeyLogSwitch()) {
        self.home = home
        self.keyLogSwitch = keyLogSwitch
    }

    /// The audit session whose key log lines go to now (nil: none).
    var following: Int64? { state.withLock { $0.id } }

    /// The live audit session as the database says it now (read-only, closed again).
    static func readLive(home: TVHome) -> AuditKeyChoice.Live {
        guard let store = try? FlowStore(readingHome: home) else { return .unreadable }
        defer { store.close() }
        do {
            guard let live = try store.audit.live() else { return .none }
            return .session(live.id)
        } catch {
            return .unreadable
        }
    }

    /// Reads the live audit session and follows it (`AuditKeyChoice`).
    /// - Throws: `FileWriteError` when its key log cannot be made (lines then go nowhere).
    func refollow() throws {
        try changing.withLock { _ in
            let choice = AuditKeyChoice.choose(live: Self.readLive(home: home), following: following)
            if choice.changes { try switchTo(choice.follow) }
        }
    }

    /// Lines from now on go to audit session `id`'s key log (nil: nowhere); the previous log is
    /// written out and closed. Following the session already followed changes nothing.
    /// - Throws: `FileWriteError` when the new key log cannot be made (lines then go nowhere).
    func follow(_ id: Int64?) throws {
        try changing.withLock { _ in
            if id != following { try switchTo(id) }
        }
    }

    /// The session's answer to `request`: follows the live audit session, and says which it
    /// follows (`following`: its id, or empty) and whether the session inspects TLS now
    /// (`inspection`: on/off); not ok, with the sentence, when its key log cannot be made.
    func answer(inspecting: Bool) -> ControlResponse {
        do {
            try refollow()
        } catch let error as UserFacingError {
            return ControlResponse(ok: false, message: error.message, values: ["inspection": inspecting ? "on" : "off"])
        } catch {
            return ControlResponse(ok: false, message: "\(error)", values: ["inspection": inspecting ? "on" : "off"])
        }
        let id = following
        return ControlResponse(ok: true, message: id.map { "following audit session \($0)" } ?? "following no audit session",
                               values: ["following": id.map(String.init) ?? "", "inspection": inspecting ? "on" : "off"])
    }

    /// Writes out and closes the key log; nothing is followed after.
    func stop() {
        changing.withLock { _ in
            let old = state.withLock { followed -> AuditKeyLog? in
                let log = followed.log
                followed = Followed(id: nil, log: nil, closed: true)
                return log
            }
            old?.stop()
        }
    }

    func record(keyLogLine line: UnsafeRawBufferPointer) {
        state.withLock { $0.log }?.record(keyLogLine: line)
    }

    /// Under `changing`: makes the new log (outside `state`'s lock), swaps, closes the old one.
    private func switchTo(_ id: Int64?) throws {
        guard !state.withLock({ $0.closed }) else { return }
        var made: AuditKeyLog?
        var failure: (any Error)?
        if let id {
            do { made = try AuditKeyLog(path: AuditKeyLog.path(home: home, session: id)) } catch { failure = error }
        }
        let old = state.withLock { followed -> AuditKeyLog? in
            let log = followed.log
            followed.log = made
            followed.id = made == nil ? nil : id
            return log
        }
        old?.stop()
        if made != nil { keyLogSwitch.turnOn() }
        if let failure { throw failure }
    }
}
