import FlowStore
import FlowTerms
import TVHome

/// How a flow's program is said: the `PROGRAM` column of `tv flows`, the `program` line of
/// `tv flow`, and its JSON. The command name and paths come from other processes, so they go
/// through `TerminalText`.
public enum FlowProgramPresentation {
    /// The list's word: the command name (`curl`), with the executable's name after it when the
    /// two disagree (`curl [python3.11]`: `ProgramIdentity.commandDisagrees`); `other machine`
    /// for a client elsewhere; `not known` for every other reason (`tv flow` says which); empty
    /// when not looked up.
    public static func word(_ program: FlowProgram?) -> String {
        switch program {
        case .known(let p):
            guard p.commandDisagrees, let name = p.executableName else { return TerminalText.line(p.command) }
            return "\(TerminalText.line(p.command)) [\(TerminalText.line(name))]"
        case .notKnown(.otherMachine): return "other machine"
        case .notKnown(.notLookedUp), nil: return ""
        case .notKnown: return "not known"
        }
    }

    /// `tv flow`'s line after `program     `: `curl (pid 4242, /usr/bin/curl, user alice (uid 1000))`,
    /// or `not known: the client is on another machine`.
    public static func sentence(_ program: FlowProgram?) -> String {
        switch program {
        case .known(let p):
            let user = p.user.map { "user \(TerminalText.line($0)) (uid \(p.uid))" } ?? "uid \(p.uid)"
            let executable = p.executable.map { TerminalText.line($0) } ?? "executable not readable"
            let disagrees = p.commandDisagrees ? "; its command names another program than its executable (a process may name itself, a script is named by its file)" : ""
            return "\(TerminalText.line(p.command)) (pid \(p.pid), \(executable), \(user))\(disagrees)"
        case .notKnown(let reason): return "not known: " + reason.phrase
        case nil: return notRecorded
        }
    }

    /// `tv flow`'s line for a row with no program: a lookup's answer may have been lost to a
    /// full disk, so it is not "tv did not look it up" (a trial's flow read so while `tv status`
    /// said 33,789 of 33,820 flows named: its program was dropped with the flows given up).
    static let notRecorded = "not recorded: tv did not look it up, or its answer was lost while the history could not be written (`tv status` counts those)"

    /// The `program` object of a flow's JSON: `{"known": true, "pid", "command", "executable",
    /// "uid", "user", "commandDisagrees"}` (`ProgramIdentity.commandDisagrees`) or `{"known": false, "reason": "socket_gone", "said": SENTENCE}` (`said`:
    /// `tv flow`'s line, so the web view says why as the command does); null when not looked up.
    public static func json(_ program: FlowProgram?) -> JSONValue {
        switch program {
        case .known(let p):
            return .object([("known", .bool(true)), ("pid", .int(Int64(p.pid))), ("command", .string(p.command)),
                            ("executable", p.executable.map { .string($0) } ?? .null), ("uid", .int(Int64(p.uid))),
                            ("user", p.user.map { .string($0) } ?? .null), ("commandDisagrees", .bool(p.commandDisagrees))])
        case .notKnown(let reason):
            return .object([("known", .bool(false)), ("reason", .string(reason.rawValue)), ("said", .string(sentence(program)))])
        case nil: return .null
        }
    }
}
