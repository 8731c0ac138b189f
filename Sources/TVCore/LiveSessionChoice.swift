import TVHome

/// Which of the live sessions a screen shows (`tv status`, `tv diag`, `tv top`): every one, or
/// the one `--session PID` names. Pure.
public enum LiveSessionChoice: Sendable, Equatable {
    /// No session is live.
    case none
    /// The sessions to show, in `LiveSessionStatus.ordered`'s order (at least one).
    case shown([LiveSession])
    /// `--session PID` names no live session; `live` are the ones there are (at least one).
    case notLive(pid: Int32, live: [LiveSession])

    /// The choice among `sessions` (ordered) for `pid` (nil: every one).
    public static func of(_ sessions: [LiveSession], pid: Int32?) -> LiveSessionChoice {
        guard !sessions.isEmpty else { return .none }
        guard let pid else { return .shown(sessions) }
        let named = sessions.filter { $0.pid == pid }
        return named.isEmpty ? .notLive(pid: pid, live: sessions) : .shown(named)
    }

    /// The sessions shown (empty for `.none` and `.notLive`).
    public var sessions: [LiveSession] {
        if case .shown(let sessions) = self { return sessions }
        return []
    }

    /// `--session PID`'s value read as a process id (a positive decimal).
    /// - Throws: `LiveSessionRefusal.notAProcessID` when it is not one.
    public static func pid(_ text: String) throws -> Int32 {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let pid = Int32(text), pid > 0 else {
            throw LiveSessionRefusal.notAProcessID(text)
        }
        return pid
    }
}

/// Why `--session PID` shows nothing.
public enum LiveSessionRefusal: UserFacingError, Equatable {
    /// The value is not a process id.
    case notAProcessID(String)
    /// No live session has that pid; `live` are those that are live.
    case notLive(pid: Int32, live: [LiveSession], folder: String)

    public var message: String {
        switch self {
        case .notAProcessID(let text):
            return "--session takes a live session's process id, as `tv status` says it (pid 4242); '\(TerminalText.line(text))' is not one."
        case let .notLive(pid, live, folder):
            return "No session live on \(TerminalText.line(folder)) has pid \(pid); "
                + (live.count == 1 ? "the live one is " : "the live ones are ")
                + Units.listed(live.map(\.title)) + "."
        }
    }

    /// 2 for a value that is no pid (a usage error); 3 for a pid no session has, as for no
    /// session at all.
    public var exitCode: Int32 {
        if case .notAProcessID = self { return 2 }
        return 3
    }
}
