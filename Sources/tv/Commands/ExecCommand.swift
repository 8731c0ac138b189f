import Capture
import CommandLineParser
import Foundation
import TVCore
import TVHome
import Tunnel

/// `tv exec [--] CMD ARGS…`: one command through tv, in its own network namespace.
enum ExecCommand {
    static let spec: CommandSpec = {
        var spec = CommandSpec(
            name: "exec", summary: "Run one command with all its traffic through tv (its own network namespace; needs root).",
            discussion: "CMD runs in a new network namespace whose default route is a TUN device: its TCP goes through the proxy (inspected, passed through, or not encrypted, each recorded as a flow), its UDP and DNS are forwarded from this host. Its /etc/resolv.conf (only its view) names the tunnel's DNS address. Proxy variables are removed from its environment. Its exit code is tv's; Ctrl-C reaches it first. Everything is removed when it exits, and the tunnel's counters (packets and bytes read from and written into the TUN, connections, flows, drops by reason) are printed to stderr. No `tv run` is needed.",
            options: [OptionSpec("yes", help: "Go ahead without asking (needed without a terminal)."),
                      OptionSpec("mtu", value: "N", help: "The TUN's MTU (default 65535; smaller values make large UDP arrive in fragments, which tv reassembles)."),
                      OptionSpec("quiet", help: "Print nothing but errors (no banner, no tunnel counters when CMD exits).")] + RunCommands.proxyOptions,
            positionals: [PositionalSpec("CMD", help: "The command and its arguments (options after CMD are its own).", variadic: true)])
        spec.optionsEndAtFirstPositional = true
        return spec
    }()

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["exec": run]

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        var options = ExecSession.Options()
        options.proxy = try RunCommands.proxyOptions(c)
        options.mtu = try RunCommands.mtu(c)
        let arguments = c.positionals
        let quiet = c.has("quiet")
        options.proxy.announcesPinnedHosts = !quiet
        let console = inv.console

        let missing = Privileges.missing()
        if !missing.isEmpty {
            throw TunnelError.needsPrivileges(command: "tv exec", missing: missing.joined(separator: " and "))
        }
        let home = try inv.home()
        let explanation = ExecExplanation(command: arguments, plan: TunnelAddressPlan(), mtu: options.mtu)
        if !inv.yes {
            guard console.stdinIsTerminal else {
                throw UsageRefusal("`tv exec` changes networking for \(arguments[0]) (a private network namespace with a TUN device) and asks first; with no terminal to ask on, pass --yes.")
            }
            for line in explanation.lines { console.note(line) }
            guard console.confirm("Go ahead?") else {
                console.note("Nothing was changed.")
                return 1
            }
        }
        let session = try ExecSession(home: home, options: options, environment: inv.environment, now: inv.now) { text in
            console.note("tv: " + TerminalText.line(text))
        }
        if !quiet {
            console.note("tv: running \(arguments[0]) through tv (inspection \(session.inspecting ? "on" : "off") — \(session.inspectionNote)).")
        }
        let code = try session.run(arguments)
        if !quiet {
            console.note("tv: \(arguments[0]) exited with \(code); its connections are in \(home.path) (`tv flows`).")
            if let seq = session.lastCapture {
                console.note("tv: its packets are in \(home.captureDirectory)/\(CaptureFolder.fileName(seq)) (`tv packets ID`, `tv captures`).")
            }
            for line in TunnelCountersPresentation(counters: session.tunnelCounters).lines { console.note("tv: " + line) }
        }
        return code
    }
}
