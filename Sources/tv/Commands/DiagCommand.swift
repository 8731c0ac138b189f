import CommandLineParser
import ControlChannel
import TVCore
import TVHome

/// `tv diag`: whether looking inside TLS is working in the live session, in one sentence, and
/// the counters it was read from (over the control socket, as `tv status`).
enum DiagCommand {
    static let spec = CommandSpec(
        name: "diag", summary: "Say in one sentence whether inspection is working in the running session, then the counters it was read from.",
        discussion: "Tells apart nothing offered for inspection, connections that were not TLS, clients that pin (the pinning rule working), and connections named and never taken over (no CA in the session, clients without tv's root, a failed leg). With no session it says so. The counters cover connections closed so far; they start at zero with every session.",
        options: [FlowCommands.json])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["diag": run]

    /// The live session's `status` values (`tv run`'s, else a `tv exec`'s: `LiveSessionStatus`);
    /// nil when no session answers (a session of another user is an error, as for `tv status`).
    static func liveValues(_ home: TVHome, timeoutSeconds: Int = 5) throws -> [String: String]? {
        try LiveSessionStatus.answer(home: home, timeoutSeconds: timeoutSeconds)?.values
    }

    static func run(_ inv: Invocation) throws -> Int32 {
        let values = try liveValues(try inv.home())
        if inv.json {
            inv.console.line(DiagnosticsPresentation.json(values).serialized(pretty: true))
        } else {
            for line in DiagnosticsPresentation.lines(values) { inv.console.line(line) }
        }
        return values == nil ? 3 : 0
    }
}
