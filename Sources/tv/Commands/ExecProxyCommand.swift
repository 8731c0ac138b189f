import Foundation
import TVCore
import TVHome

/// `tv exec --proxy [--proxy-loopback] -- CMD ARGS…`: CMD with tv as its proxy and tv's root
/// trusted through its environment only (`ExecProxySession`); no root, nothing to agree to.
enum ExecProxyCommand {
    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        if c.has("mtu") { throw UsageRefusal("--mtu is for the namespace form (`tv exec` without --proxy).") }
        let arguments = c.positionals
        let quiet = c.has("quiet")
        let console = inv.console
        var options = ExecProxySession.Options()
        options.session = try RunCommands.proxyOptions(c)
        options.session.announcesPinnedHosts = !quiet
        options.proxyLoopback = c.has("proxy-loopback")
        let home = try inv.home()
        let session = try ExecProxySession(home: home, options: options, environment: inv.environment, now: inv.now) { text in
            console.note("tv: " + TerminalText.line(text))
        }
        if !quiet {
            if case .joined = session.joined, c.has("inspect") || c.has("keep-content") || c.has("ca") {
                console.note("tv: the options for a new session (--inspect, --keep-content, --ca, …) do not change the running session CMD joins.")
            }
            let explanation = ExecProxyExplanation(command: arguments, environment: session.proxyEnvironment, joined: session.joined)
            for line in explanation.lines { console.note("tv: " + line) }
        }
        let ending = try session.run(arguments)
        let ended = ExecExitSummary.endingSentence(command: arguments[0], ending)
        if !quiet {
            // None went through tv: the command (or its runtime) ignored the proxy variables,
            // and nothing of it is in the history (a Node 20 fetch went direct unsaid: a trial).
            if session.acceptedWhileRunning == 0 {
                // Loopback goes direct by NO_PROXY unless --proxy-loopback: said first (a trial's
                // localhost requests were put down to programs that ignore the variables).
                let loopback = options.proxyLoopback ? "" : "NO_PROXY sends \(ProxyEnvironment.loopbackHosts.joined(separator: ", ")) direct unless --proxy-loopback; "
                console.note("tv: \(ended); no connection went through tv while it ran, so it made none or went direct (\(loopback)the programs listed above ignore the proxy variables; `sudo tv exec -- \(arguments[0])` catches everything).")
            } else {
                console.note("tv: \(ended); its connections are in \(home.path) (`tv flows`).")
            }
        }
        return ending.exitCode
    }
}
