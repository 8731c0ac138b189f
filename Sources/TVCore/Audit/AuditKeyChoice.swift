/// Which audit session's key log a running tv session (`tv run`, `tv exec`) writes both legs'
/// TLS secrets to (issue 23): the one the database says records now, whichever command started
/// it (`tv run --audit`, or `tv audit start` before or while the session runs). The session asks
/// when it starts, once its control socket listens, and whenever `tv audit start` or `tv audit
/// stop` tells it (`LiveAuditKeys.request`). Pure: what the database said and what is followed
/// now in, the log to follow out.
public struct AuditKeyChoice: Equatable, Sendable {
    /// What the database said about the live audit session.
    public enum Live: Equatable, Sendable {
        /// Session `id` records now.
        case session(Int64)
        /// No session records.
        case none
        /// The database could not be read (busy, damaged, being replaced): nothing is known.
        case unreadable
    }

    /// The audit session whose key log lines go to from now (nil: nowhere).
    public let follow: Int64?
    /// Whether that differs from what was followed (the old log is closed, the new one opened).
    public let changes: Bool

    public init(follow: Int64?, changes: Bool) {
        self.follow = follow
        self.changes = changes
    }

    /// Follows the live session; with no live session, nothing. An unreadable database keeps what
    /// is followed (a passing lock must neither drop a session's keys nor start a log for nothing);
    /// the next start or stop asks again.
    public static func choose(live: Live, following: Int64?) -> AuditKeyChoice {
        let wanted: Int64?
        switch live {
        case .session(let id): wanted = id
        case .none: wanted = nil
        case .unreadable: wanted = following
        }
        return AuditKeyChoice(follow: wanted, changes: wanted != following)
    }
}
