import ControlChannel
import FlowStore
import Foundation
import LocalCA
import Proxy
import Recording
import FlowTerms
import Settings
import SetupActions
import Synchronization
import Tunnel
import TVHome

/// A live `tv run` session: the proxy, the flow database, pinned hosts, the control socket and
/// the periodic trust re-check, started together and stopped together (everything flushed).
public final class Session: Sendable {
    /// What `tv run` was asked for.
    public struct Options: Sendable {
        public var mode: ProxyMode = .regular
        public var listen: String?
        public var workers: Int?
        /// `--busy-poll MICROS` (0: off): see `BusyPollPolicy`.
        public var busyPollMicros = 0
        public var ignoreHosts: [String] = []
        /// `--client-cert HOST_PATTERN=FILE`, in order; the `tls.clientCerts`
        /// setting's entries follow them.
        public var clientCertificates: [ClientCertificateRule] = []
        public var allowHosts: [String] = []
        public var upstreamInsecure = false
        public var upstreamCAFile: String?
        public var keylogPath: String?
        /// A one-session CA from a combined key+certificate PEM (`--ca FILE`); not saved.
        public var caFile: String?
        /// The type of the key every leaf minted from `caFile` carries (`--leaf-key`; default
        /// ECDSA P-256). Only with `caFile`: the data folder's CA keeps the leaf key it was made with.
        public var caLeafKeyType: KeyType = .ecdsaP256
        /// Inspect this session whatever the trust store says (`--inspect`), for clients given
        /// the root directly (`curl --cacert`); never saved.
        public var forceInspection = false
        /// Keep decrypted content this session whatever `content.keep` says (`--keep-content`).
        public var forceContentKeep = false
        /// Remember hosts whose clients seem to pin (saved pins still apply only when on);
        /// `--no-pinning-detection` turns it off for the session, so load generators that close
        /// mid-handshake do not turn inspection into pass-through.
        public var pinningDetection = true
        /// The audit session this one records for (`tv run --audit`, i21-audit): while
        /// inspecting, both legs' TLS secrets go to its key log (`AuditKeyLog`); nil: the live
        /// one, if any, followed as `tv audit start` and `stop` say (`LiveAuditKeys`).
        public var auditSessionID: Int64?
        /// Say one sentence (through the session's `say`) when a host is newly kept private
        /// because its client refused tv's certificate (off with `--quiet`).
        public var announcesPinnedHosts = true
        /// Say what went through the TUN when a `--mode tun` session ends, as `tv exec` does
        /// (off with `--quiet`).
        public var announcesTunnelSummary = true
        /// Say what each retention pass deletes (off with `--quiet`; a pass that fails is said).
        public var announcesRetention = true
        /// `--log requests`: print one line per finished HTTP exchange to `printRequest` (also
        /// on with the `log.requests` setting).
        public var logRequests = false
        /// Where request lines go (standard output for `tv run`); nil: nowhere.
        public var printRequest: (@Sendable (String) -> Void)?
        /// Seconds between trust re-checks while running (0 = never).
        public var trustRecheckSeconds: Double = 60
        /// Seconds between the periodic retention passes (`SessionRetention`).
        public var retentionIntervalSeconds: Double = SessionRetention.defaultInterval
        /// `--store URL`: the shared store for this session (else the `store.url` setting).
        public var storeURL: String?
        /// `--head-timeout SECONDS`: the time a request head may take (nil: the engine's
        /// default, `ProxyConfiguration.headTimeout`).
        public var headTimeoutSeconds: Double?
        /// `--idle-timeout SECONDS`: the time a connection may carry no byte either way (nil: the
        /// engine's default, `ProxyConfiguration.idleTimeout`).
        public var idleTimeoutSeconds: Double?
        /// `--max-per-client N`: connections one client address may hold (nil: the engine's
        /// default, `ClientAddressLimit`; 0: no limit).
        public var maxConnectionsPerClient: Int?
        /// `--proxy-auth USER:PASSFILE`: the credentials the explicit and SOCKS5 modes require.
        public var proxyCredentials: ProxyCredentials?
        /// `--mode tun`: the device, routing table, mark and MTU.
        public var tun = HostTunnelOptions()
        /// Whether `run()` stops on SIGINT and SIGTERM (false for `tv exec --proxy`, whose
        /// command gets them and whose end stops the session).
        public var stopsOnSignals = true
        /// `--metrics HOST:PORT`: a listener bound by the caller (so a taken port fails before the
        /// session starts); the session serves its status values on it as Prometheus metrics
        /// (`MetricsExposition`) while it runs, and closes it when it stops.
        public var metrics: MetricsServer?
        public init() {}
    }

    public let home: TVHome
    public let options: Options
    /// The data folder's session lock, held until `run()` ends (`SessionLock`).
    let lock: SessionLock
    let wiring: SessionWiring
    let proxy: ProxyServer
    let environment: [String: String]
    let say: @Sendable (String) -> Void
    let stopSignal = DispatchSemaphore(value: 0)
    /// The stop signals' sources (`catchStopSignals`); empty until caught.
    private let signalSources = Mutex<[DispatchSourceSignal]>([])
    /// What was not saved, once the session has stopped (nil until then).
    let finalLosses = Mutex<RecordingLosses?>(nil)
    /// Signalled once the session has stopped and `finalLosses` is set (a `tv stop` waits on it).
    let stoppedSignal = DispatchSemaphore(value: 0)
    /// The TUN front-end of `--mode tun` (nil in the other modes).
    let tunnel: HostTunnel?
    /// The packet capture of `--mode tun` (nil in the other modes).
    let capture: SessionCapture?
    /// The banner shown at start.
    public let banner: RunBanner
    /// `ListenExposure.warning`: said at start whatever `--quiet` says (nil: nothing to warn of).
    public let exposureWarning: String?
    /// The mode in words, as the banner says it (`explicit proxy (HTTP CONNECT and plain HTTP)`).
    let modeLabel: String
    /// Where the session listens, as the banner says it (the TUN device in `--mode tun`).
    let listenLabel: String
    /// Retention passes: at start, periodically, and when a limit is saved (issue 19).
    let retention: SessionRetention
    /// When the session was made, µs since the epoch (`tv top`'s "This session").
    let startedAtMicros = Int64(Date().timeIntervalSince1970 * 1_000_000)

    var settings: SettingsStore { wiring.settings }
    var writer: FlowWriter { wiring.writer }
    var content: ContentRecorder { wiring.content }
    /// Whether the session has a CA now (one made or remade while it runs counts: `reloadCA`).
    var canInspect: Bool { proxy.authority != nil }
    /// Whether inspection follows the saved setting (not forced with --inspect or --ca).
    var followsSettings: Bool { !options.forceInspection && options.caFile == nil }

    /// Prepares everything and starts listening.
    /// - Parameters:
    ///   - lock: the data folder's lock, taken by the caller before it made anything (`tv run`);
    ///     nil: taken here, first (`tv exec --proxy`'s own session).
    ///   - say: where notices go (standard error for `tv run`).
    /// - Throws: `ProxyError` (e.g. the port is taken), `FlowStoreError`, `CAError`, `ControlError`
    ///   (`.alreadyRunning`: another session holds the lock), `SettingsError`, `TVHomeError`,
    ///   `TunnelError` (`--mode tun`), `TooManyOpenFiles`.
    public init(home: TVHome, options: Options, lock: SessionLock? = nil, environment: [String: String], now: Int64,
                say: @escaping @Sendable (String) -> Void) throws {
        self.home = home
        self.options = options
        self.environment = environment
        self.say = say
        // Refuse a second session before anything listens, routes or prints a banner.
        self.lock = try lock ?? SessionLock.take(home)
        wiring = try SessionWiring(home: home, options: options, environment: environment, now: now, say: say)
        var config = wiring.configuration
        // The TUN's names from DNS over TCP: the relays read the responses, the engine learns them.
        let tcpDNSAnswers = options.mode == .tun ? TCPDNSAnswers() : nil
        if options.mode == .tun {
            config.listens = false
            config.upstreamMark = options.tun.mark
            config.dnsAnswers = tcpDNSAnswers
        }
        if options.mode == .transparent {
            // Our own upstream sockets carry the mark the printed OUTPUT-chain rule skips; best
            // effort (it needs CAP_NET_ADMIN), the PREROUTING rules do not need it.
            config.upstreamMark = TransparentRules.canMark ? TransparentRules.mark : nil
        }
        proxy = ProxyServer(configuration: config)
        let address: Endpoint
        do {
            address = try proxy.start()
        } catch {
            wiring.close()
            throw error
        }
        // The explicit proxy's, SOCKS5's and reverse mode's clients connect to this address:
        // the program lookup asks the kernel for their sockets by four-tuple, not by a dump.
        wiring.programs.setListener(address: address.address, port: address.port)
        // Made before the capture, which asks it for a pass when a file rotates.
        let retention = SessionRetention(home: home, settings: wiring.settings, interval: options.retentionIntervalSeconds,
                                         announces: options.announcesRetention, carried: wiring.carriedEvidence, say: say)
        self.retention = retention
        // A decrypted capture file closed by its rotation (or a failed write) is retention's too:
        // `captures.maxBytes` and the expiry may delete it (the one being written, never).
        wiring.decryptedCapture?.setClosedHandler { retention.limitsChanged() }
        if options.mode == .tun {
            let capture = SessionCapture(home: home, record: (try? wiring.settings.read()) ?? SettingsRecord(),
                                         onRotated: { retention.limitsChanged() })
            if let notice = capture.notice { say(notice) }
            wiring.captureSecrets.attach(capture.writer)
            do {
                tunnel = try HostTunnel(options: options.tun, proxy: proxy, wiring: wiring, recorder: capture.recorder, dataFolder: home.path,
                                        tcpDNSAnswers: tcpDNSAnswers, say: say)
            } catch {
                capture.stop()
                proxy.stop()
                wiring.close()
                throw error
            }
            self.capture = capture
        } else {
            tunnel = nil
            capture = nil
            HostTunnel.repairLeftovers(say: say)
        }

        let modeLabel: String
        var extra: [String] = []
        switch options.mode {
        case .regular: modeLabel = "explicit proxy (HTTP CONNECT and plain HTTP)"
        case .socks5: modeLabel = "SOCKS5 proxy"
        case .reverse: modeLabel = "reverse proxy to \(String(options.mode.description.dropFirst("reverse:".count)))"
        case .transparent:
            modeLabel = "transparent proxy (connections your REDIRECT rules send here)"
            extra = TransparentRules.lines(listen: address, marked: config.upstreamMark != nil)
        case .tun:
            modeLabel = "whole host through a TUN (policy routing)"
            extra = tunnel?.summary ?? []
        }
        self.modeLabel = modeLabel
        listenLabel = options.mode == .tun ? (tunnel?.listenDescription ?? "") : address.description
        exposureWarning = ListenExposure.warning(mode: options.mode, listen: address, inspecting: wiring.inspecting,
                                                 authenticated: options.proxyCredentials != nil)
        var banner = RunBanner(listen: listenLabel, mode: modeLabel,
                           caFingerprint: wiring.authority.map { Hex.encode($0.root.sha256, separator: ":", uppercase: true) },
                           caPath: wiring.caPath, inspecting: wiring.inspecting, inspectionNote: wiring.inspectionNote,
                           dataFolder: home.path, keylogPath: config.keylogPath,
                           contentKeptFor: wiring.contentPolicy.keep ? wiring.contentPolicy.expiry.words : nil,
                           decryptedCapturePath: wiring.decryptedCapture?.path, extraLines: extra)
        banner.sharedStore = wiring.shared.map(SharedStoreWiring.bannerText)
        banner.metrics = options.metrics?.address.description
        banner.proxyUser = options.proxyCredentials?.user
        banner.upstreamInsecure = options.upstreamInsecure
        if case .reverse(tls: false, _, _) = options.mode { banner.reversePlain = true }
        let counters = proxy.counters
        banner.connectionCap = RunBanner.connectionCapLine(cap: counters.connectionCap, configured: config.maxConnections,
                                                           limit: counters.descriptorLimit)
        if options.forceContentKeep && !wiring.inspecting {
            banner.contentNotKept = "--keep-content keeps what inspected connections say, and this session inspects nothing; add --inspect, or turn inspection on with `tv inspect on`"
        }
        // A full disk (or one short of the history's reserve) is said at the banner, with what
        // cannot be saved and what frees room; the session runs on whatever it holds.
        var recorded: [DiskRoomAtStart.Recorded] = []
        if wiring.contentPolicy.keep, DiskSpace.sameDisk(home.contentDirectory, home.path) { recorded.append(.content) }
        let capturesHere = DiskSpace.sameDisk(home.captureDirectory, home.path)
        if wiring.decryptedCapture != nil, capturesHere { recorded.append(.decryptedCapture) }
        if options.mode == .tun, capturesHere { recorded.append(.packets) }
        banner.disk = DiskRoomAtStart(freeBytes: DiskSpace.freeBytes(at: home.path), flowsFailing: wiring.writer.counters.failing,
                                      recorded: recorded, holdings: DataFolderHoldings.read(home: home)).line
        self.banner = banner
        // An audit session started before any session ran learns what this one runs with.
        AuditRecording.adoptLive(home: home, values: statusValues(), now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        // One that has them, from another root (a second run with `--ca`), learns this root too.
        Session.noteAuditRoot(home: home, proxy: proxy)
    }

    /// Serves until `tv stop`, SIGINT or SIGTERM; then stops everything and flushes the database.
    /// - Throws: `ControlError` when the control socket cannot be opened (another session runs).
    public func run() throws {
        let control = try ControlServer(path: SessionPaths.controlSocket(home)) { [self] request in
            self.answer(request)
        }
        SessionStartRecord.clear(home)
        // An audit session started after the wiring read the live one, before the socket listened.
        try? wiring.auditKeys.refollow()
        catchStopSignals()
        let signals = signalSources.withLock { $0 }
        var recheck: DispatchSourceTimer?
        // Also without a CA at start: one made while the session runs is picked up, and its
        // trust asked again like the first's.
        if followsSettings && options.trustRecheckSeconds > 0 {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + options.trustRecheckSeconds, repeating: options.trustRecheckSeconds)
            timer.setEventHandler { [self] in self.recheckTrust() }
            timer.resume()
            recheck = timer
        }
        // The first retention pass is the last of the start-up work (it opens the database
        // once more): after it, the start-up code and constants are not needed again.
        retention.start { StartupPages.release(scope: .everyObject) }
        options.metrics?.start { [self] in MetricsExposition.render(self.statusValues()) }
        stopSignal.wait()
        options.metrics?.stop(started: true)
        recheck?.cancel()
        retention.stop()
        signals.forEach { $0.cancel() }
        // The proxy's connections close first, while the tunnel still carries what they send:
        // with the TUN gone first, a program's connection never heard the close (a trial's
        // keep-alive client hung in ESTABLISHED, tv's socket in FIN-WAIT-1 on the vanished tv0).
        proxy.stop(graceSeconds: 1)
        if let tunnel {
            // A margin (not measured) for the engine's loop to forward those closes before it stops.
            usleep(100_000)
            tunnel.stop()
            // What went through the TUN, as `tv exec` says it when its command exits (a trial
            // found `tv run --mode tun` ended without it); not under --quiet.
            if options.announcesTunnelSummary {
                let counters = tunnel.counters
                for line in TunnelCountersPresentation(counters: counters).lines
                    + TunnelNamesPresentation.lines(counters, namedFromLookups: wiring.tally.namedFromLookups) { say(line) }
            }
        }
        wiring.captureSecrets.attach(nil)
        if let capture, let sentence = capture.stop() { say(sentence) }
        // The decrypted capture's last file is closed before the last pass, which counts it.
        wiring.decryptedCapture?.setClosedHandler(nil)
        wiring.decryptedCapture?.stop()
        // The capture limits once more, over the files this session closed.
        if capture?.writer != nil || wiring.decryptedCapture != nil { retention.finalPass() }
        let losses = wiring.close()
        finalLosses.withLock { $0 = losses }
        stoppedSignal.signal()
        // After the writers closed, so a `tv stop` waiting in the handler hears what was saved.
        control.stop()
        // Last: the next session may start once this one has let go of everything.
        lock.release()
        if options.stopsOnSignals {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
            signal(SIGHUP, SIG_DFL)
        }
    }

    /// Asks the session to stop (as `tv stop` does).
    public func requestStop() { stopSignal.signal() }

    /// From now on SIGINT, SIGTERM and SIGHUP (a terminal or SSH session hanging up: it ended
    /// the session outright, and `--mode tun` left its routing behind) stop the session cleanly,
    /// also one arriving before `run()` waits (the banner is printed first: a Ctrl-C right
    /// after it killed the session with its routing in place, the tun test's rare flake). Once;
    /// nothing when the options say signals are not the session's.
    ///
    /// Returns once the sources are armed: `resume()` registers them on libdispatch's own thread
    /// later, and a signal arriving before that met only SIG_IGN and was lost (a loaded CI run's
    /// SIGHUP right after the banner left a `--mode tun` session running, killed after 10 s with
    /// its routing in place). At most 2 s is waited per source.
    public func catchStopSignals() {
        guard options.stopsOnSignals else { return }
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            signal(SIGHUP, SIG_IGN)
            let armed = DispatchSemaphore(value: 0)
            sources = [SIGINT, SIGTERM, SIGHUP].map { sig -> DispatchSourceSignal in
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { [self] in self.stopSignal.signal() }
                source.setRegistrationHandler { armed.signal() }
                source.resume()
                return source
            }
            for _ in sources { _ = armed.wait(timeout: .now() + 2) }
        }
    }

    /// What was not saved, once `run()` has returned (nil before): say it instead of "everything
    /// is saved" when it is not empty.
    public var losses: RecordingLosses? { finalLosses.withLock { $0 } }

    /// Where the proxy listens (nil in `--mode tun`, which listens nowhere).
    public var address: Endpoint? { options.mode == .tun ? nil : proxy.address }

    /// The live counters, for `tv status`.
    public var counters: ProxyCounters { proxy.counters }
}

/// Pinning memory for a session run with `--no-pinning-detection`: nothing is pinned, nothing is
/// remembered (the flow still records why its handshake ended).
final class NoPinningMemory: PinningMemory {
    func recall(_ key: PinKey) -> PinningRecall? { nil }
    func remember(_ key: PinKey, kind: PinKind, reason: String) {}
    var learns: Bool { false }
}
