import CommandLineParser
import ControlChannel
import TVCore
import TVHome

/// `tv diag`: whether looking inside TLS is working in the live session, in one sentence, and
/// the counters it was read from (over the control socket, as `tv status`).
enum DiagCommand {
    static let spec = CommandSpec(
        name: "diag", summary: "Say in one sentence whether inspection is working in the running session, then the counters it was read from.",
        discussion: "Tells apart nothing offered for inspection, connections that were not TLS, clients that pin (the pinning rule working), and connections named and never taken over (no CA in the session, clients without tv's root, a failed leg). With no session it says so, and what the last session to stop could not save, if anything (--json: lastStop). The counters cover connections closed so far; they start at zero with every session. Each session live on the data folder is diagnosed on its own (a `tv run` and `tv exec`s), under a line saying how many there are; --session PID diagnoses one. With --json and two or more, the object is the first's with sessionCount and sessions (each one's object) beside it.",
        options: [FlowCommands.json, LiveSessionOption.spec])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["diag": run]

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let sessions = try LiveSessionOption.choice(inv, home: home).sessions
        // With no session, what the last one could not save (`LastStopRecord`).
        let lastStop = sessions.isEmpty ? LastStopRecord.read(home) : nil
        if inv.json {
            let json = sessions.count > 1 ? LiveSessionsPresentation.diagJSON(sessions) : DiagnosticsPresentation.json(sessions.first?.values, lastStop: lastStop)
            inv.console.line(json.serialized(pretty: true))
        } else {
            let lines = sessions.count > 1 ? LiveSessionsPresentation.diagLines(sessions, folder: home.path)
                : DiagnosticsPresentation.lines(sessions.first?.values, lastStop: lastStop)
            for line in lines { inv.console.line(line) }
        }
        return sessions.isEmpty ? 3 : 0
    }
}
