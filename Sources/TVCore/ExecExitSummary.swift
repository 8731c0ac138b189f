import TVHome
import Tunnel

/// What `tv exec` says first when its command has ended: how it ended (its exit code, or the
/// signal that killed it and the code tv exits with for it), then where its flows are (their
/// ids and the `tv flows` that lists them), or that it made none. Pure.
///
/// It said "sh exited with 137" for a command SIGKILL ended (a shell's code, not what
/// happened), and "its connections are in …" for a command that made none (a trial).
public struct ExecExitSummary: Sendable, Equatable {
    /// The command's name (its first word), as typed.
    public var command: String
    public var ending: ChildEnding
    /// The data folder.
    public var folder: String
    /// The ids this run's flows took, its first to its last (every id between is one of its
    /// flows: its writer's range is its own, `FlowIDRanges`); nil when it made none.
    public var flowIDs: ClosedRange<Int64>?
    /// When the run began (µs since the epoch): `tv flows --from` lists its flows from there.
    public var startedAtMicros: Int64

    public init(command: String, ending: ChildEnding, folder: String, flowIDs: ClosedRange<Int64>?, startedAtMicros: Int64) {
        self.command = command
        self.ending = ending
        self.folder = folder
        self.flowIDs = flowIDs
        self.startedAtMicros = startedAtMicros
    }

    /// "curl exited with 0", "curl was killed by SIGKILL (9), so tv exits with 137".
    public static func endingSentence(command: String, _ ending: ChildEnding) -> String {
        let name = TerminalText.line(command)
        switch ending {
        case .exited(let code): return "\(name) exited with \(code)"
        case .killed(let signal):
            return "\(name) was killed by \(ChildEnding.signalName(signal)), so tv exits with \(ending.exitCode)"
        }
    }

    /// The line: how it ended; where its flows are.
    ///
    /// "curl exited with 0; its flows are 1201 to 1245 in FOLDER (`tv flows --from
    /// 2025-11-30T14:02:11Z`).", "…; its flow is 1201 in FOLDER (`tv flow 1201`).", "…; it made no
    /// connection and sent no datagram through tv, so no flow was recorded."
    public var line: String {
        let ended = Self.endingSentence(command: command, ending)
        guard let ids = flowIDs else {
            return ended + "; it made no connection and sent no datagram through tv, so no flow was recorded."
        }
        let folder = TerminalText.line(self.folder)
        if ids.count == 1 { return ended + "; its flow is \(ids.lowerBound) in \(folder) (`tv flow \(ids.lowerBound)`)." }
        let from = Units.utc(startedAtMicros / 1_000_000, format: "%Y-%m-%dT%H:%M:%SZ")
        return ended + "; its flows are \(ids.lowerBound) to \(ids.upperBound) in \(folder) (`tv flows --from \(from)`)."
    }
}
