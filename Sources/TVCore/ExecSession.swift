import ControlChannel
import CTVShims
import FlowStore
import Foundation
import Proxy
import Settings
import Synchronization
import TVHome
import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// `tv exec -- CMD`: one command in its own network namespace whose default route is a TUN
/// (tun-nat.md shape A), its TCP through the proxy (inspected, passed through, or not
/// encrypted, each a flow), its UDP and DNS forwarded from this host, everything torn down when
/// it exits. Works with no `tv run` session; beside live ones (a `tv run`, other `tv exec`s), its
/// flows go into the same database under a range of ids none of them has (`FlowIDRanges`).
public final class ExecSession {
    public struct Options: Sendable {
        /// The proxy options shared with `tv run` (mode and listen are ignored).
        public var proxy = Session.Options()
        /// The TUN's MTU (default 65,535: large datagrams are not fragmented locally; smaller
        /// values make the kernel fragment them, and tv reassembles).
        public var mtu: Int?
        public init() {}
    }

    /// Environment variables removed before CMD runs: its traffic already goes through tv.
    public static let proxyVariables: Set<String> = ["http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy", "socks_proxy",
                                                     "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY", "SOCKS_PROXY"]

    public let home: TVHome
    public let options: Options
    private let environment: [String: String]
    private let say: @Sendable (String) -> Void
    private let wiring: SessionWiring
    private let proxy: ProxyServer
    private let names: HostNameRecorder
    /// DNS-over-TCP responses the relays read, for the engine's names (`TCPDNSAnswers`).
    private let tcpDNSAnswers = TCPDNSAnswers()
    /// The banner facts: whether TLS is inspected and why.
    public let inspecting: Bool
    public let inspectionNote: String
    /// The capture files written, in order, after `run` (nil: capture off or it could not start).
    public private(set) var captures: [Int64]?
    /// The tunnel's counters after `run` (for diagnostics and tests).
    public private(set) var tunnelCounters: [String: UInt64] = [:]
    /// The session's closed flows named after a looked-up name (`SessionTally`), for the summary.
    public var flowsNamedFromLookups: UInt64 { wiring.tally.namedFromLookups }
    /// When `run` began (µs since the epoch).
    public private(set) var startedAtMicros: Int64 = 0
    /// The ids this session's flows took, its first to its last (`ExecExitSummary`); nil when it
    /// made none.
    public var flowIDs: ClosedRange<Int64>? {
        let ids = wiring.writer.ids
        guard let last = ids.highestHandedOut, last >= ids.first else { return nil }
        return ids.first ... last
    }

    /// Opens the database, the CA, the proxy (adopt-only: the tunnel hands it connections).
    /// - Throws: like `Session.init`.
    public init(home: TVHome, options: Options, environment: [String: String], now: Int64,
                say: @escaping @Sendable (String) -> Void) throws {
        self.home = home
        self.options = options
        self.environment = environment
        self.say = say
        wiring = try SessionWiring(home: home, options: options.proxy, environment: environment, now: now, peersAreServers: true, say: say)
        var config = wiring.configuration
        config.listens = false
        config.dnsAnswers = tcpDNSAnswers
        proxy = ProxyServer(configuration: config)
        do { try proxy.start() } catch {
            wiring.close()
            throw error
        }
        names = HostNameRecorder(hostNames: wiring.store.hostNames)
        inspecting = wiring.inspecting
        inspectionNote = wiring.inspectionNote
    }

    /// Runs `arguments` inside the tunnel and returns how it ended (`exitCode`: 128 + the
    /// signal when killed). Everything is torn down and flushed before this returns, also when
    /// it throws.
    /// - Throws: `TunnelError` when the namespace cannot be made or CMD cannot start.
    public func run(_ arguments: [String]) throws -> ChildEnding {
        // The same retention passes as `tv run`'s (issue 19): at start, periodically, when a capture
        // file rotates and at the end; a limit saved meanwhile is applied by `tv settings set`
        // itself (no control socket here).
        let retention = SessionRetention(home: home, settings: wiring.settings, interval: options.proxy.retentionIntervalSeconds,
                                         announces: options.proxy.announcesRetention, carried: wiring.carriedEvidence, say: say)
        let capture = SessionCapture(home: home, record: (try? wiring.settings.read()) ?? SettingsRecord(),
                                     onRotated: { [retention] in retention.limitsChanged() })
        if let notice = capture.notice { say(notice) }
        wiring.captureSecrets.attach(capture.writer)
        // A decrypted capture file closed by its rotation (or a failed write) is retention's too.
        wiring.decryptedCapture?.setClosedHandler { [retention] in retention.limitsChanged() }
        retention.start()
        // `tv audit start` and `stop` reach this exec on a socket of its own (`tv run` owns the
        // control socket), so both legs' TLS secrets go to the live audit session's key log at
        // once; `tv captures rotate` closes this exec's capture file there too.
        // `tv status`, `tv diag` and `tv top` read this exec there when no `tv run` answers.
        let engineCounters = Mutex<TunnelCounters?>(nil)
        let startedAtMicros = Int64(Date().timeIntervalSince1970 * 1_000_000)
        self.startedAtMicros = startedAtMicros
        // Quoted as a shell would take it (`sh -c 'read x; echo $x'`), so its words are told apart.
        let label = "tv exec of " + arguments.map(ShellWord.quote).joined(separator: " ")
        let ownCA = options.proxy.caFile != nil
        let statusValues = { @Sendable [wiring, proxy, capture, home] in
            var values = SessionStatusValues.common(proxy: proxy, wiring: wiring, home: home.path,
                                                    tunnel: engineCounters.withLock { $0 }?.snapshot ?? [:], capture: capture,
                                                    canInspect: wiring.authority != nil, startedAtMicros: startedAtMicros)
            values["mode"] = "exec"
            values["modeLabel"] = label
            values["listen"] = "a TUN in its own network namespace"
            return values
        }
        HostTunnel.repairLeftovers(say: say)
        // An audit session started before any session ran learns what this one runs with.
        AuditRecording.adoptLive(home: home, values: statusValues(), now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        // One that has them, from another root (a second run with `--ca`), learns this root too.
        Session.noteAuditRoot(home: home, proxy: proxy)
        let auditSocket = try? ControlServer(path: AuditKeysNotifier.execSocket(home: home, pid: getpid())) { [wiring, proxy, capture, home, say] request in
            switch request.command {
            case "status":
                return ControlResponse(ok: true, message: "running", values: statusValues())
            case LiveSessionFlush.request.command:
                return wiring.flushAnswer(packets: capture.writer)
            case LiveAuditKeys.request.command:
                return wiring.auditKeys.answer(inspecting: proxy.inspectionEnabled)
            case CaptureRotationRequest.command:
                return SessionCaptureRotation.answer(packets: capture, decrypted: wiring.decryptedCapture)
            case "ca-changed":
                // `tv ca create`, `import`, `remake`, `remove`: mint from the CA there now, and the
                // root given up stops verifying servers (`ProxyServer.setAuthority`).
                guard !ownCA else { return ControlResponse(ok: true, message: "this session uses its own CA (--ca); it keeps it") }
                wiring.pinning.forget(kind: .lacksRoot)
                _ = Session.mintFromFolderCA(home: home, proxy: proxy, say: say)
                return ControlResponse(ok: true, message: "applied")
            case "inspection-off":
                // `tv inspect off` reaches a `tv exec --inspect` too: off always works.
                let was = proxy.inspectionEnabled
                proxy.setInspection(enabled: false)
                return ControlResponse(ok: true, message: "off", values: ["wasInspecting": was ? "true" : "false"])
            case "pinned-forgotten":
                if request.arguments[ControlSocketNotifier.kindArgument] == ControlSocketNotifier.lacksRootKind {
                    wiring.pinning.forget(kind: .lacksRoot)
                    return ControlResponse(ok: true, message: "applied")
                }
                guard let host = request.arguments["host"], !host.isEmpty else { return ControlResponse(ok: false, message: "no host was named") }
                wiring.pinning.forget(host: host)
            proxy.forgetPinningEvidence(host: host)
                return ControlResponse(ok: true, message: "applied")
            default:
                return ControlResponse(ok: false, message: "a tv exec answers only status, flush, audit changes, capture rotation, CA changes, inspection off and forgotten pins on this socket")
            }
        }
        try? wiring.auditKeys.refollow()
        defer {
            auditSocket?.stop()
            retention.stop()
            proxy.stop(graceSeconds: 1)
            wiring.captureSecrets.attach(nil)
            let stopped = capture.stop()
            // Read once stopped: a last file no packet went into is removed then, and not named.
            if let counters = capture.writer?.counters, !counters.sequencesOpened.isEmpty {
                captures = counters.sequencesOpened
            }
            if let sentence = stopped { say(sentence) }
            // The decrypted capture's last file is closed before the last pass, which counts it.
            wiring.decryptedCapture?.setClosedHandler(nil)
            wiring.decryptedCapture?.stop()
            if capture.writer != nil || wiring.decryptedCapture != nil { retention.finalPass() }
            names.flush()
            // What was not saved (a full disk) is said; "everything is saved" goes without saying.
            let losses = wiring.close()
            if !losses.isEmpty { say(RecordingPresentation.stopped(losses, folder: home.path)) }
        }
        var plan = TunnelAddressPlan()
        plan.mtu = options.mtu ?? EgressMTU.current()
        let resolvers = ResolvConf.nameservers()
        if resolvers.isEmpty { say("this host's /etc/resolv.conf names no nameserver: names will not resolve inside") }

        ExecLeftovers.sweep(ExecResolvConfFile.folders(runDirectory: home.runDirectory))
        let resolvPath = try ExecResolvConfFile.write(plan.resolvConf, pid: getpid(),
                                                      folders: ExecResolvConfFile.folders(runDirectory: home.runDirectory))
        defer { unlink(resolvPath) }

        let namespace = try ExecNamespace(plan: plan, resolvConfPath: resolvPath)
        defer { namespace.close() }
        // The program lookup asks the namespace's own socket table (its programs' sockets are there).
        let diag = try namespace.thread.run { tv_sock_diag_open(1_000) }
        if diag >= 0 { wiring.programs.useNamespaceSocket(diag, namespace: namespace.thread.networkNamespaceInode) }
        if let reason = namespace.tunOffload.unavailableReason { say("the TUN runs without checksum offload (\(reason)); traffic still flows, with more CPU per byte") }
        var engineConfig = TunnelEngineConfiguration(plan: namespace.plan, listener4: namespace.listeners.v4, listener6: namespace.listeners.v6)
        engineConfig.resolvers = resolvers
        engineConfig.servesDNSAddress = true
        engineConfig.endsWithCommand = true
        engineConfig.tcpDNSAnswers = tcpDNSAnswers
        let engine = TunnelEngine(configuration: engineConfig, tunFD: namespace.tunFD, offload: namespace.tunOffload, proxy: proxy,
                                  sink: wiring.configuration.flowSink, dnsObserver: names.observer, recorder: capture.recorder)
        try engine.start()
        engineCounters.withLock { $0 = engine.counters }
        defer {
            engine.stop()
            tunnelCounters = engine.counters.snapshot
        }

        var childEnvironment = environment.filter { !Self.proxyVariables.contains($0.key) }
        childEnvironment["TV_EXEC"] = "1"
        // tv writes the key log SSLKEYLOGFILE names (both legs, the command's own TLS among
        // them): the command writing into the same file too interleaved its lines with tv's (a trial).
        if let own = wiring.configuration.keylogPath, childEnvironment["SSLKEYLOGFILE"] == own {
            childEnvironment.removeValue(forKey: "SSLKEYLOGFILE")
        }
        _ = tv_forward_signals_install()
        defer { tv_forward_signals_remove() }
        // What the command starts is stopped even when tv is killed (`ExecNamespaceGuard`).
        let guardian = ExecNamespaceGuard(namespaceInode: namespace.thread.networkNamespaceInode)
        let pid = try namespace.spawn(arguments, environment: childEnvironment)
        tv_forward_signals_set_child(pid)
        let ending = ChildProcess.ending(pid)
        tv_forward_signals_set_child(0)
        if let sentence = ExecNamespace.leftoverSentence(namespace.killRemaining()) { say(sentence) }
        guardian?.release()
        return ending
    }
}
