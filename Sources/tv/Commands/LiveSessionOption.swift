import CommandLineParser
import TVCore
import TVHome

/// `--session PID` of `tv status`, `tv diag` and `tv top`: which of the sessions live on the
/// data folder to show (by default every one).
enum LiveSessionOption {
    static let spec = OptionSpec("session", value: "PID", help: "Show only the live session with this process id (a `tv run` and any number of `tv exec`s can run on one data folder; by default each is shown).")

    /// The live sessions to show.
    /// - Throws: `LiveSessionRefusal` when `--session` is no pid (exit 2) or names no live
    ///   session while some are (exit 3); `ControlError.otherUser` as `LiveSessionStatus.all`.
    static func choice(_ inv: Invocation, home: TVHome, timeoutSeconds: Int = 5) throws -> LiveSessionChoice {
        let pid = try inv.command.value("session").map(LiveSessionChoice.pid)
        let choice = LiveSessionChoice.of(try LiveSessionStatus.all(home: home, timeoutSeconds: timeoutSeconds), pid: pid)
        if case let .notLive(pid, live) = choice { throw LiveSessionRefusal.notLive(pid: pid, live: live, folder: home.path) }
        return choice
    }
}
