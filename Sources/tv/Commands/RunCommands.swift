import CertificateSetup
import CommandLineParser
import ControlChannel
import Foundation
import FlowStore
import LocalCA
import Proxy
import Settings
import TVCore
import TVHome
import Tunnel

/// `tv run`, `tv status`, `tv stop`, `tv intro`: the live session and its controls.
enum RunCommands {
    static let runSpec = CommandSpec(
        name: "run", summary: "Run the proxy in the foreground and record every connection (Ctrl-C stops).",
        discussion: "Listens on 127.0.0.1:8080 as an explicit proxy unless told otherwise. Inspects TLS only when inspection is on (`tv inspect on`, after `tv setup`) or --inspect / --ca is given; everything else is passed through untouched and still recorded as a flow.",
        options: [OptionSpec("mode", value: "MODE", help: "regular (default), socks5, transparent, tun, reverse:https://HOST:PORT or reverse:http://HOST:PORT.",
                            completions: ["regular", "socks5", "transparent", "tun", "reverse:https://", "reverse:http://"]),
                  OptionSpec("listen", value: "HOST:PORT", help: "Where to listen (default 127.0.0.1:8080; loopback unless you say otherwise)."),
                  OptionSpec("proxy-auth", value: "USER:PASSFILE", help: "Regular and socks5 modes: require this user name and the password on PASSFILE's first line (a file of yours, 0600) of every client (HTTP Basic, 407 otherwise; SOCKS5 username/password), compared in constant time."),
                  OptionSpec("dry-run", help: "--mode tun: print the routing changes it would make, and make none."),
                  OptionSpec("tun-device", value: "NAME", help: "--mode tun: the TUN interface's name (default tv0)."),
                  OptionSpec("mtu", value: "N", help: "--mode tun: the TUN's MTU (default: the MTU of this host's route out)."),
                  OptionSpec("server-ports", value: "PROTO:PORTS", help: "--mode tun: what this host sends from these ports leaves by main's routes, unseen, all session, bound or not (udp:51820,udp:60000-61000,tcp:8443): a UDP server in the ephemeral range (WireGuard, mosh) stays reachable from beyond the LAN; comma-separated, repeatable.", repeatable: true),
                  OptionSpec("yes", help: "Agree without asking: --mode tun changes the routing; --inspect or --keep-content with no CA creates one."),
                  OptionSpec("max-per-client", value: "N", help: "Connections one client address may hold open (default: a quarter of the connection cap, 64 to 1024; 0: no limit); more are refused and said. Loopback clients (this host's programs) are bound only by the connection cap."),
                  OptionSpec("head-timeout", value: "SECONDS", help: "Seconds a client may take to send a whole request head, however slowly it trickles (default 10; 0.1-3600); then 408 and closed."),
                  OptionSpec("log", value: "WHAT", help: "requests: print one line per finished HTTP request (time, method, URL, status, size, duration), like mitmdump; also the log.requests setting."),
                  OptionSpec("audit", value: "PROJECT", help: "Record an audit session of PROJECT for as long as this session runs (`tv audit`)."),
                  OptionSpec("metrics", value: "HOST:PORT", help: "Serve the session's counters (those of tv status) at http://HOST:PORT/metrics in Prometheus's text format; loopback only (127.0.0.1:9464, [::1]:9464)."),
                  OptionSpec("metrics-open", help: "Allow --metrics on an address other than loopback (no password: anyone who reaches it reads the counters).")]
            + proxyOptions + [OptionSpec("quiet", help: "Print nothing but errors."),
                              OptionSpec("web", help: "Also serve the screens to a browser on this machine, as `tv web` (its URL is printed)."),
                              OptionSpec("web-listen", value: "HOST:PORT", help: "With --web: " + WebCommand.listenHelp)])

    /// The proxy options `tv run` and `tv exec` share.
    static let proxyOptions: [OptionSpec] = [
        OptionSpec("workers", value: "N", help: "Event-loop threads (default: one per core)."),
        OptionSpec("busy-poll", value: "MICROS", help: "After finding work, poll up to MICROS µs before sleeping, the window adapting to the gaps between events (0-1000; default 0, off): lower latency on VMs for more CPU, as HAProxy's busy-polling."),
        OptionSpec("ignore-hosts", value: "REGEX", help: "Never inspect hosts matching REGEX (host or host:port); repeatable.", repeatable: true),
        OptionSpec("allow-hosts", value: "REGEX", help: "Inspect only hosts matching REGEX; repeatable.", repeatable: true),
        OptionSpec("upstream-insecure", help: "Do not act on the check of servers' certificates (each flow still records what it found: tv flow ID). Otherwise a server whose certificate does not verify is never reached through inspection: an HTTP client (ALPN http/1.1, or no ALPN and an HTTP request) gets tv's 502 saying why (over a leaf for the name it asked, none copied from that certificate), one whose ALPN offers only other protocols a TLS alert, and one with no ALPN that sends anything else the close of tv's TLS session (close_notify), unanswered."),
        OptionSpec("upstream-ca", value: "FILE", help: "Also trust the CAs in FILE (PEM) when verifying servers."),
        OptionSpec("client-cert", value: "HOST_PATTERN=FILE", help: "Present the client certificate in FILE (PEM: certificate, chain, unencrypted key; 0600) to servers matching HOST_PATTERN that ask for one; repeatable, the first match wins (then the tls.clientCerts setting).", repeatable: true),
        OptionSpec("keylog", value: "FILE", help: "Append TLS key log lines for both legs to FILE (0600); SSLKEYLOGFILE works too."),
        OptionSpec("ca", value: "FILE", help: "Use the CA in FILE (key and certificate in one PEM) for this session only, inspecting."),
        OptionSpec("leaf-key", value: "TYPE", help: "With --ca: the key type of the leaves it mints (ecdsa-p256, the default; ecdsa-p384, rsa-2048, rsa-3072)."),
        OptionSpec("inspect", help: "Inspect this session even if the trust store does not trust the root (clients given it with --cacert)."),
        OptionSpec("keep-content", help: "Keep decrypted content this session (as content.keep on; only while inspecting)."),
        OptionSpec("store", value: "URL", help: "Also write this session's flows to the shared store at URL (postgresql://user@host/db; no password in it: PGPASSFILE or ~/.pgpass), tagged with this instance; content, packets and captures stay here. TLS is verified (sslmode=verify-full) unless the URL says otherwise. The store.url setting does the same for every session; --store '' leaves it out of this one."),
        OptionSpec("no-pinning-detection", help: "Never take a refused or silent handshake for pinning this session: every host stays inspected (benchmarks)."),
        OptionSpec("idle-timeout", value: "SECONDS", help: "Close a connection that carries no byte either way for SECONDS, and answer 504 to a plain HTTP request whose server sends nothing for as long (default 7440, 2 h 4 min: RFC 5382's least for a NAT; 1-604800)."),
    ]

    /// Reads the shared proxy options.
    static func proxyOptions(_ c: ParsedCommand) throws -> Session.Options {
        var options = Session.Options()
        if let w = c.value("workers") {
            guard let n = Int(w), n > 0, n <= 256 else { throw UsageRefusal("--workers takes a whole number from 1 to 256, not '\(w)'.") }
            options.workers = n
        }
        if let text = c.value("busy-poll") {
            guard let micros = Int(text), micros >= 0, micros <= BusyPollPolicy.maximumMicros else {
                throw UsageRefusal("--busy-poll takes a whole number of microseconds from 0 to \(BusyPollPolicy.maximumMicros), not '\(text)'.")
            }
            options.busyPollMicros = micros
        }
        options.ignoreHosts = c.values("ignore-hosts")
        options.allowHosts = c.values("allow-hosts")
        options.upstreamInsecure = c.has("upstream-insecure")
        options.upstreamCAFile = c.value("upstream-ca")
        options.keylogPath = c.value("keylog")
        options.storeURL = c.value("store")
        options.clientCertificates = try c.values("client-cert").map { try ClientCertificateRule(parsing: $0) }
        options.caFile = c.value("ca")
        if let type = c.value("leaf-key") {
            guard options.caFile != nil else {
                throw UsageRefusal("--leaf-key goes with --ca; the data folder's CA keeps the leaf key it was made with (`tv ca remake --leaf-key TYPE` makes a new one).")
            }
            options.caLeafKeyType = try KeyType.parse(type)
        }
        options.forceInspection = c.has("inspect")
        options.forceContentKeep = c.has("keep-content")
        options.pinningDetection = !c.has("no-pinning-detection")
        if let text = c.value("idle-timeout") {
            guard let seconds = Double(text), seconds >= 1, seconds <= 604_800 else {
                throw UsageRefusal("--idle-timeout takes seconds from 1 to 604800 (a week), not '\(text)'.")
            }
            options.idleTimeoutSeconds = seconds
        }
        return options
    }

    /// `--mtu N` (1280 … 65535: IPv6 needs at least 1280).
    static func mtu(_ c: ParsedCommand) throws -> Int? {
        guard let text = c.value("mtu") else { return nil }
        guard let n = Int(text), n >= 1280, n <= 65_535 else { throw UsageRefusal("--mtu takes a number from 1280 to 65535, not '\(text)'.") }
        return n
    }

    static let statusSpec = CommandSpec(name: "status", summary: "Say whether a session is running, with its live counters.",
                                        discussion: "Every session live on the data folder is shown (a `tv run` and any number of `tv exec`s can run on one): with two or more, a first line says how many and what they add up to, then each follows; --session PID shows one. With --json and two or more, the object is the first's (`tv run`'s, else the oldest `tv exec`'s) with sessionCount, sessions (each one's object) and totals beside it. With none running, it says so (exit 3) and what the last session to stop could not save, if anything (flows, turns, packets; --json: lastStop).",
                                        options: [OptionSpec("json", help: "Print as JSON."), LiveSessionOption.spec])
    static let stopSpec = CommandSpec(name: "stop", summary: "Stop the running session (it closes connections and flushes everything).",
                                      discussion: "Exits 0 once the session has stopped, 3 when none is running (as `tv status`).")
    static let introSpec = CommandSpec(name: "intro", summary: "Show the short introduction again.")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "run": run, "status": status, "stop": stop, "intro": intro,
    ]

    static func run(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        var options = try proxyOptions(c)
        if let mode = c.value("mode") { options.mode = try ProxyMode.parse(mode) }
        options.listen = c.value("listen")
        // A command line that cannot run is refused before anything is said or made.
        if let listen = options.listen { var probe = ProxyConfiguration(); try probe.setListen(listen) }
        if let spec = c.value("proxy-auth") {
            switch options.mode {
            case .regular, .socks5: options.proxyCredentials = try ProxyCredentials.load(spec)
            default:
                throw UsageRefusal("--proxy-auth is for --mode regular and socks5; in --mode \(options.mode) clients do not know they use a proxy, so they cannot authenticate to it.")
            }
        }
        if let text = c.value("max-per-client") {
            guard let n = Int(text), n >= 0, n <= 1_000_000 else {
                throw UsageRefusal("--max-per-client takes a whole number of connections from 0 (no limit) to 1000000, not '\(text)'.")
            }
            options.maxConnectionsPerClient = n
        }
        if let text = c.value("head-timeout") {
            guard let seconds = Double(text), seconds >= 0.1, seconds <= 3_600 else {
                throw UsageRefusal("--head-timeout takes seconds from 0.1 to 3600, not '\(text)'.")
            }
            options.headTimeoutSeconds = seconds
        }
        options.tun.mtu = try mtu(c)
        options.tun.dryRun = c.has("dry-run")
        if let name = c.value("tun-device") {
            // Checked before anything is made (a trial's `tv%d` and 21-character names failed
            // after the TUN existed; an existing interface's name was blamed on /dev/net/tun).
            if let problem = Self.tunDeviceNameProblem(name, exists: if_nametoindex(name) != 0) {
                throw UsageRefusal("--tun-device \(TerminalText.line(name)): \(problem).")
            }
            options.tun.deviceName = name
        }
        if options.mode != .tun {
            for flag in ["dry-run", "tun-device", "mtu", "server-ports"] where c.has(flag) {
                throw UsageRefusal("--\(flag) is for --mode tun.")
            }
        }
        options.tun.serverPorts = try DeclaredServerPorts(parsing: c.values("server-ports"))
        if let what = c.value("log") {
            guard what == "requests" else { throw UsageRefusal("--log takes requests, not '\(what)'.") }
            options.logRequests = true
        }
        if c.has("web-listen") && !c.has("web") { throw UsageRefusal("--web-listen goes with --web (tv run --web --web-listen HOST:PORT).") }
        let metricsAddress = try c.value("metrics").map { try MetricsAddress.parse($0, open: c.has("metrics-open")) }
        if c.has("metrics-open") && metricsAddress == nil { throw UsageRefusal("--metrics-open goes with --metrics HOST:PORT.") }
        let quiet = c.has("quiet")
        options.announcesPinnedHosts = !quiet
        options.announcesTunnelSummary = !quiet
        options.announcesRetention = !quiet
        let requestConsole = inv.console
        options.printRequest = { line in requestConsole.line(line) }
        // The descriptor limit raised to the hard one, or refused as too low, before the data
        // folder is looked at (a dry run starts nothing and needs none).
        if !options.tun.dryRun { try DescriptorLimit.prepareSession(workers: options.workers) }
        let home = try inv.home()
        let console = inv.console
        if options.mode == .tun {
            if options.tun.dryRun {
                console.line("tv run --mode tun would make these changes (nothing was changed):")
                for line in options.tun.changeLines { console.line("  " + line) }
                console.line(HostTunnelOptions.outsideSentence)
                for note in options.tun.routingNotes(options.tun.routing(for: options.tun.plan)) { console.line(note) }
                // What would refuse a real run now is said too (a trial's dry run said nothing
                // while another whole-host session held the routes).
                // Exit 1 then: `tv run --mode tun --dry-run && tv run --mode tun --yes` would go on to a refusal.
                // Another session's refusal only: the dry run needs no root, and a user sees the
                // changes before running the real one as root.
                if let refusal = tunRefusalsNow(home: home, privileges: false).first {
                    console.line("A real run would be refused now: " + refusal.message)
                    return 1
                }
                return 0
            }
            // Missing privileges, or another whole-host session: refused before asking, or
            // making anything.
            if let refusal = tunRefusalsNow(home: nil).first { throw refusal }
            if !inv.yes {
                guard console.stdinIsTerminal else {
                    throw UsageRefusal("`tv run --mode tun` changes this host's routing (all its traffic goes through tv) and asks first; with no terminal to ask on, pass --yes (or see the changes with --dry-run).")
                }
                console.note("tv run --mode tun will send this host's traffic through tv until it stops:")
                for line in options.tun.changeLines { console.note("  " + line) }
                console.note(HostTunnelOptions.outsideSentence + " Ctrl-C, SIGTERM or `tv stop` removes everything.")
                for note in options.tun.routingNotes(options.tun.routing(for: options.tun.plan)) { console.note(note) }
                guard console.confirm("Go ahead?") else {
                    console.note("Nothing was changed.")
                    return 1
                }
            }
        }

        // The data folder's one session: taken before anything is made in it or said (a second
        // `tv run` started at the same moment printed the whole banner, then refused, and left an
        // empty decrypted capture and a writer lock behind: a trial). The loser says only
        // "already running".
        let lock = try SessionLock.take(home)

        // The introduction, once (skipping counts as seen; an unreadable flag shows it again),
        // said when the session has started, or before the CA question that needs it, never
        // in front of a refusal (a new-user trial's "port in use" came after three screens).
        let settings = SettingsStore(file: SettingsFile(home: home))
        var introPending = !quiet && (try? settings.read())?[SettingKeys.introSeen] != true
        let introOnce = {
            guard introPending else { return }
            introPending = false
            for line in IntroPresentation.lines { console.note(line) }
            console.note("")
            try? home.ensureExists()
            _ = try? settings.set(SettingKeys.introSeen, to: true)
        }

        try offerCA(inv, options: options, home: home, beforeAsking: introOnce)

        // `tv top` tells starting and a failed start apart from off (`SessionStartRecord`).
        SessionStartRecord(state: .starting, pid: getpid(), atMicros: inv.nowMicros).write(home)
        let session: Session
        // `--audit PROJECT` (i21-audit): the audit session records for as long as this one runs;
        // refused (another is recording, no such project) before anything listens.
        // A session left live by a `tv run --audit` that was killed is closed first, said once.
        if let closed = AuditRecording.closeAbandoned(home: home) { console.note("tv: " + closed) }
        var audit: AuditSession?
        if let project = c.value("audit") {
            audit = try AuditRecording.start(home: home, project: project, note: "",
                                             settings: ["mode": options.mode.description, "listen": options.listen ?? "",
                                                        "pid": String(getpid())],
                                             now: FlowCommands.nowMicros(), recorder: AuditRecording.current())
        }
        defer { if let audit { _ = AuditRecording.stop(home: home, id: audit.id, now: FlowCommands.nowMicros()) } }
        options.auditSessionID = audit?.id
        do {
            // Bound before the session starts, so a taken port is said before anything listens
            // (a running session was said first, by the lock).
            options.metrics = try metricsAddress.map { try MetricsServer(address: $0) }
            // The session's lines quote peers (host names, handshake failures): each is one line.
            session = try Session(home: home, options: options, lock: lock, environment: inv.environment, now: inv.now) { text in
                console.note("tv: " + TerminalText.line(text))
            }
            // Before anything is announced: a Ctrl-C after the banner stops it cleanly.
            session.catchStopSignals()
            if let audit {
                // What the session runs with (its inspection, the mode's words), as `tv audit start` records it.
                try? AuditRecording.recordSettings(home: home, id: audit.id, settings: session.auditSettings)
            }
            // The web view listens before anything is announced: a --web-listen it cannot take is
            // the session's refusal, not a line after "tv is running" (a re-check).
            let web: WebCommand.Served? = try c.has("web") ? WebCommand.start(inv, home: home, listen: c.value("web-listen"), option: "--web-listen") : nil
            introOnce()
            // Said first, and even under --quiet: who can use the proxy and read what it decrypts
            // (after the banner it scrolled out of sight).
            if let warning = session.exposureWarning { console.note("tv: warning: " + warning) }
            if !quiet { for line in session.banner.lines { console.note(line) } }
            if !quiet, let strip = AuditRecording.strip(home: home, now: FlowCommands.nowMicros()) { console.note("  " + strip) }
            if let web { console.note("tv web: " + web.url) }
            defer { web?.stop() }
            try session.run()
        } catch ControlError.alreadyRunning(let path) {
            options.metrics?.stop(started: false)
            if let audit { AuditRecording.discardUnstarted(home: home, id: audit.id, now: FlowCommands.nowMicros()) }
            // Not this start's failure to remember: the running session is the one to show.
            SessionStartRecord.clear(home)
            throw ControlError.alreadyRunning(path: path)
        } catch {
            options.metrics?.stop(started: false)
            if let audit { AuditRecording.discardUnstarted(home: home, id: audit.id, now: FlowCommands.nowMicros()) }
            let reason = (error as? UserFacingError)?.message ?? "\(error)"
            SessionStartRecord(state: .failed, pid: getpid(), atMicros: Int64(Date().timeIntervalSince1970 * 1_000_000), reason: reason).write(home)
            throw error
        }
        // What was not saved is said even under --quiet: it is a loss, not chatter.
        let losses = session.losses ?? RecordingLosses()
        if !quiet || !losses.isEmpty { console.note("tv stopped; " + RecordingPresentation.stopped(losses, folder: home.path)) }
        return 0
    }

    /// `--inspect` / `--keep-content` with no CA: on a terminal, offers to create one (`--yes`
    /// agrees without asking); otherwise nothing is made and the session refuses to start
    /// (`ForcedInspectionError.noCA`: the reason and the next command).
    /// `beforeAsking` runs just before the question (the introduction, on a first run).
    static func offerCA(_ inv: Invocation, options: Session.Options, home: TVHome, beforeAsking: () -> Void = {}) throws {
        guard let asked = ForcedSessionOption.asked(by: options) else { return }
        let folder = CAFolder(home: home)
        guard case .absent = folder.load(remakingLeafKey: false) else { return }
        if !inv.yes {
            guard inv.console.stdinIsTerminal else { return }
            beforeAsking()
            inv.console.note("\(asked.rawValue) needs a certificate authority, and there is none yet. tv would make one in \(folder.directory); its private key \(SetupText.keyStays(in: "that folder")). Clients trust tv's certificates only once given its root.")
            guard inv.console.confirm("Create it now?") else { return }
        }
        try home.ensureExists()
        let ca = try folder.create(now: inv.now)
        inv.console.note("Created the certificate \(ca.root.subject) (SHA-256 \(Hex.encode(ca.root.sha256, separator: ":", uppercase: true))); give clients its root, \(folder.rootPath) (e.g. `curl --cacert \(folder.rootPath)`), or trust it with `tv setup`.")
    }

    static func client(_ inv: Invocation) throws -> ControlClient {
        try ControlClient(path: SessionPaths.controlSocket(try inv.home()))
    }

    static func status(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let sessions = try LiveSessionOption.choice(inv, home: home).sessions
        guard let first = sessions.first else {
            if inv.json {
                var fields: [(String, JSONValue)] = [("running", .bool(false)), ("dataFolder", .string(home.path))]
                // What a killed `--mode tun` left, for a script too (only the text said it: a re-check).
                if let left = HostTunnelClaim.leftNow() {
                    fields.append(("leftByKilledTunSession", .object([
                        ("pid", .int(Int64(left.pid))), ("dataFolder", .string(left.dataFolder)), ("device", .string(left.device)),
                        ("rpFilterLoosened", .bool(left.rpFilterWas != nil)), ("said", .string(Self.leftRoutingSentence(left))),
                    ])))
                }
                // What the last session could not save (`LastStopRecord`; trial 43's lost flows left no trace).
                if let last = LastStopRecord.read(home), last.sentence != nil { fields.append(("lastStop", last.json)) }
                inv.console.line(JSONValue.object(fields).serialized(pretty: true))
            } else if !home.exists {
                inv.console.line(TVHomeError.missing(path: home.path).message)
            } else {
                inv.console.line(SessionStatusPresentation.noSession(folder: home.path))
                if let said = LastStopRecord.read(home)?.sentence { inv.console.line("  " + said) }
                if let left = HostTunnelClaim.leftNow() { inv.console.line("  " + Self.leftRoutingSentence(left)) }
                // A session a killed `tv run --audit` left recording is closed here, and said
                // (a re-check's was closed silently, and `tv audit stop` then found none).
                if let closed = AuditRecording.closeAbandoned(home: home) { inv.console.line("  " + closed) }
                if let strip = AuditRecording.strip(home: home, now: FlowCommands.nowMicros()) { inv.console.line("  " + strip) }
            }
            return 3
        }
        if inv.json {
            let json = sessions.count == 1 ? SessionStatusPresentation.json(first.values) : LiveSessionsPresentation.statusJSON(sessions)
            inv.console.line(json.serialized(pretty: true))
            return 0
        }
        let strip = AuditRecording.strip(home: home, now: FlowCommands.nowMicros())
        let lines = sessions.count == 1 ? SessionStatusPresentation.lines(first.values, auditStrip: strip)
            : LiveSessionsPresentation.statusLines(sessions, folder: home.path, auditStrip: strip)
        for line in lines { inv.console.line(line) }
        return 0
    }

    /// What is wrong with `name` as the TUN device's (Linux: at most 15 bytes, IFNAMSIZ, no `/`,
    /// `%`, `:` or white space, not `.` or `..`, and no interface of that name yet); nil when
    /// it will do.
    static func tunDeviceNameProblem(_ name: String, exists: Bool) -> String? {
        if name.isEmpty || name == "." || name == ".." { return "not an interface name" }
        if name.utf8.count > 15 { return "an interface name has at most 15 bytes (\(name.utf8.count) given)" }
        if name.unicodeScalars.contains(where: { "/%:".unicodeScalars.contains($0) || $0.properties.isWhitespace || $0.value < 0x21 || $0.value > 0x7E }) {
            return "an interface name holds printable ASCII without /, %, : or spaces"
        }
        if exists { return "an interface of that name exists already; name another" }
        return nil
    }

    static func stop(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let path = SessionPaths.controlSocket(home)
        // The session answers once it has stopped (up to `Session.stopAnswerWait`), with what was not saved.
        let response: ControlResponse
        do {
            response = try ControlClient(path: path).send(ControlRequest(command: "stop"), timeoutSeconds: Session.stopClientWait)
        } catch ControlError.notRunning {
            // A `tv exec` is its command's: it ends when the command does (said rather than "no session").
            if let exec = try? LiveSessionStatus.answer(home: home, timeoutSeconds: 2), let pid = exec.values["pid"] {
                throw UsageRefusal("No `tv run` is running for \(home.path); a tv exec is (pid \(pid)): it stops when its command ends, "
                                   + "or with Ctrl-C in its terminal (kill -INT \(pid)).", exitCode: 3)
            }
            // Exit 3, as `tv status`, `tv top` and `tv follow` say no session (it was 1: a trial).
            throw UsageRefusal(ControlError.notRunning.message, exitCode: 3)
        }
        guard response.ok else { throw UsageRefusal(response.message, exitCode: 1) }
        if let losses = RecordingLosses(values: response.values) {
            inv.console.line("Stopped the session; " + RecordingPresentation.stopped(losses, folder: home.path))
            return 0
        }
        // Wait (up to 15 s) for the session to finish flushing and remove its socket. It did not
        // say what it saved in time, so nothing is claimed of it here.
        for _ in 0..<150 where FileManager.default.fileExists(atPath: path) { usleep(100_000) }
        inv.console.line(FileManager.default.fileExists(atPath: path)
                         ? "Asked the session to stop; it is still finishing."
                         : "Stopped the session; what it could not save, if anything, was said in its own terminal (its history is in \(home.path)).")
        return 0
    }

    static func intro(_ inv: Invocation) throws -> Int32 {
        for line in IntroPresentation.lines { inv.console.line(line) }
        // Marked seen in a data folder that exists; a missing one is not made for it (only
        // commands that write make it, so a mistyped --data-dir shows: a trial's was made here).
        if let home = try? inv.home(), home.exists {
            _ = try? SettingsStore(file: SettingsFile(home: home)).set(SettingKeys.introSeen, to: true)
        }
        return 0
    }
}
