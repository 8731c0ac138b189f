import Capture
import CommandLineParser
import Foundation
import Proxy
import TVCore
import TVHome
import Tunnel

/// `tv exec [--] CMD ARGS…`: one command through tv, in its own network namespace.
enum ExecCommand {
    static let spec: CommandSpec = {
        var spec = CommandSpec(
            name: "exec", summary: "Run one command with all its traffic through tv (its own network namespace; needs root), or with --proxy through its environment (no root).",
            discussion: "CMD runs in a new network namespace whose default route is a TUN device: its TCP goes through the proxy (inspected, passed through, or not encrypted, each recorded as a flow), its UDP and DNS are forwarded from this host. Its /etc/resolv.conf (only its view) names the tunnel's DNS address. Proxy variables are removed from its environment. Its exit code is tv's; Ctrl-C reaches it first. Everything is removed when it exits, and the tunnel's counters (packets and bytes read from and written into the TUN, connections, flows, drops by reason) are printed to stderr. No `tv run` is needed. With --proxy, nothing changes outside the data folder and no root or --yes is needed: CMD's environment names tv as its proxy (HTTP_PROXY, HTTPS_PROXY and lower case; NO_PROXY sends loopback hosts direct unless --proxy-loopback) and a CA bundle of the system's anchors plus tv's root, written 0600 in the data folder's proxy-env folder (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO, AWS_CA_BUNDLE, PIP_CERT, and WGETRC), and JAVA_TOOL_OPTIONS a PKCS#12 trust store and the proxy for the JVM. It joins the running `tv run` session (an explicit proxy), or starts one for CMD in this process (127.0.0.1, a free port, inspecting) and stops it when CMD exits. Each flow names the program that made it. Programs that ignore these variables are not intercepted (Go for loopback hosts, Node's http/https before Node 24, Java code that sets its own proxy or trust, browsers); `sudo tv exec` catches everything.",
            options: [OptionSpec("proxy", help: "Set the proxy and tv's root through CMD's environment only (no namespace, no root)."),
                      OptionSpec("proxy-loopback", help: "With --proxy: send localhost and loopback addresses through tv too (by default NO_PROXY names them)."),
                      OptionSpec("yes", help: "Go ahead without asking (needed without a terminal)."),
                      OptionSpec("mtu", value: "N", help: "The TUN's MTU (default: the MTU of this host's route out, so large UDP is fragmented as without tv; tv reassembles it)."),
                      OptionSpec("quiet", help: "Print nothing but errors (no banner, no tunnel counters when CMD exits).")] + RunCommands.proxyOptions,
            positionals: [PositionalSpec("CMD", help: "The command and its arguments (options after CMD are its own).", variadic: true)])
        spec.optionsEndAtFirstPositional = true
        return spec
    }()

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["exec": run]

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        if c.has("proxy") { return try ExecProxyCommand.run(inv) }
        if c.has("proxy-loopback") { throw UsageRefusal("--proxy-loopback goes with --proxy.") }
        var options = ExecSession.Options()
        options.proxy = try RunCommands.proxyOptions(c)
        options.mtu = try RunCommands.mtu(c)
        let arguments = c.positionals
        let quiet = c.has("quiet")
        options.proxy.announcesPinnedHosts = !quiet
        options.proxy.announcesRetention = !quiet
        let console = inv.console

        let missing = Privileges.missing()
        if !missing.isEmpty {
            throw TunnelError.needsPrivileges(command: "tv exec", missing: missing.joined(separator: " and "), purpose: "to make a network namespace and a TUN device")
        }
        // As `tv run`: the limit raised, or refused as too low, before anything is made.
        try DescriptorLimit.prepareSession(workers: options.proxy.workers)
        let home = try inv.home()
        let explanation = ExecExplanation(command: arguments, plan: TunnelAddressPlan(), mtu: options.mtu ?? EgressMTU.current())
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
        let ending = try session.run(arguments)
        if !quiet {
            let summary = ExecExitSummary(command: arguments[0], ending: ending, folder: home.path, flowIDs: session.flowIDs,
                                          startedAtMicros: session.startedAtMicros)
            console.note("tv: " + summary.line)
            if let files = session.captures {
                let folder = CaptureFolder(path: home.captureDirectory)
                let present = Set(files.filter { FileManager.default.fileExists(atPath: folder.filePath($0)) })
                console.note("tv: " + CapturesPresentation.execFiles(files, present: present, folder: home.captureDirectory))
            }
            let counters = session.tunnelCounters
            for line in TunnelCountersPresentation(counters: counters).lines { console.note("tv: " + line) }
            // Where names came from, once something connected (a command that sent nothing needs none).
            if (counters["tcpRedirected"] ?? 0) + (counters["udpFlows"] ?? 0) > 0 {
                for line in TunnelNamesPresentation.lines(counters, namedFromLookups: session.flowsNamedFromLookups) { console.note("tv: " + line) }
            }
        }
        return ending.exitCode
    }
}
