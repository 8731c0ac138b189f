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
    private let wiring: SessionWiring
    private let proxy: ProxyServer
    private let environment: [String: String]
    private let say: @Sendable (String) -> Void
    private let stopSignal = DispatchSemaphore(value: 0)
    /// What was not saved, once the session has stopped (nil until then).
    private let finalLosses = Mutex<RecordingLosses?>(nil)
    /// Signalled once the session has stopped and `finalLosses` is set (a `tv stop` waits on it).
    private let stoppedSignal = DispatchSemaphore(value: 0)
    /// The TUN front-end of `--mode tun` (nil in the other modes).
    private let tunnel: HostTunnel?
    /// The packet capture of `--mode tun` (nil in the other modes).
    private let capture: SessionCapture?
    /// The banner shown at start.
    public let banner: RunBanner
    /// `ListenExposure.warning`: said at start whatever `--quiet` says (nil: nothing to warn of).
    public let exposureWarning: String?
    /// The mode in words, as the banner says it (`explicit proxy (HTTP CONNECT and plain HTTP)`).
    private let modeLabel: String
    /// Where the session listens, as the banner says it (the TUN device in `--mode tun`).
    private let listenLabel: String
    /// Retention passes: at start, periodically, and when a limit is saved (issue 19).
    private let retention: SessionRetention
    /// When the session was made, µs since the epoch (`tv top`'s "This session").
    private let startedAtMicros = Int64(Date().timeIntervalSince1970 * 1_000_000)

    private var settings: SettingsStore { wiring.settings }
    private var writer: FlowWriter { wiring.writer }
    private var content: ContentRecorder { wiring.content }
    /// Whether the session has a CA now (one made or remade while it runs counts: `reloadCA`).
    private var canInspect: Bool { proxy.authority != nil }
    /// Whether inspection follows the saved setting (not forced with --inspect or --ca).
    private var followsSettings: Bool { !options.forceInspection && options.caFile == nil }

    /// Prepares everything and starts listening.
    /// - Parameter say: where notices go (standard error for `tv run`).
    /// - Throws: `ProxyError` (e.g. the port is taken), `FlowStoreError`, `CAError`, `ControlError`,
    ///   `SettingsError`, `TVHomeError`, `TunnelError` (`--mode tun`).
    public init(home: TVHome, options: Options, environment: [String: String], now: Int64,
                say: @escaping @Sendable (String) -> Void) throws {
        self.home = home
        self.options = options
        self.environment = environment
        self.say = say
        // Refuse a second session before anything listens, routes or prints a banner.
        try ControlServer.refuseIfLive(path: SessionPaths.controlSocket(home))
        wiring = try SessionWiring(home: home, options: options, environment: environment, now: now, say: say)
        var config = wiring.configuration
        if options.mode == .tun {
            config.listens = false
            config.upstreamMark = options.tun.mark
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
        if options.mode == .tun {
            let capture = SessionCapture(home: home, record: (try? wiring.settings.read()) ?? SettingsRecord())
            if let notice = capture.notice { say(notice) }
            wiring.captureSecrets.attach(capture.writer)
            do {
                tunnel = try HostTunnel(options: options.tun, proxy: proxy, wiring: wiring, recorder: capture.recorder, say: say)
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
        retention = SessionRetention(home: home, settings: wiring.settings, interval: options.retentionIntervalSeconds, say: say)
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
        self.banner = banner
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
        if options.stopsOnSignals {
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
        }
        let signals = (options.stopsOnSignals ? [SIGINT, SIGTERM] : []).map { sig -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in self.stopSignal.signal() }
            source.resume()
            return source
        }
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
        tunnel?.stop()
        wiring.captureSecrets.attach(nil)
        if let sentence = capture?.stop() { say(sentence) }
        proxy.stop(graceSeconds: 1)
        let losses = wiring.close()
        finalLosses.withLock { $0 = losses }
        stoppedSignal.signal()
        // After the writers closed, so a `tv stop` waiting in the handler hears what was saved.
        control.stop()
        if options.stopsOnSignals {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    /// Asks the session to stop (as `tv stop` does).
    public func requestStop() { stopSignal.signal() }

    /// What was not saved, once `run()` has returned (nil before): say it instead of "everything
    /// is saved" when it is not empty.
    public var losses: RecordingLosses? { finalLosses.withLock { $0 } }

    /// Where the proxy listens (nil in `--mode tun`, which listens nowhere).
    public var address: Endpoint? { options.mode == .tun ? nil : proxy.address }

    /// The live counters, for `tv status`.
    public var counters: ProxyCounters { proxy.counters }

    /// Reads the data folder's CA again and mints from it (a CA made, remade or removed since
    /// the session started), then applies the saved inspection setting after asking trust again.
    /// A `--ca FILE` session keeps its own CA. Returns the sentence to answer with when the
    /// folder's CA cannot be used.
    @discardableResult
    private func reloadCA() -> String? {
        guard options.caFile == nil else { return nil }
        let folder = CAFolder(home: home)
        var problem: String?
        switch folder.load() {
        case .present(let ca):
            if proxy.authority?.root.sha256 != ca.root.sha256 { proxy.setAuthority(ca) }
        case .absent:
            proxy.setAuthority(nil)
            problem = "there is no CA in \(folder.directory)"
        case .doubt(let doubt):
            proxy.setAuthority(nil)
            problem = doubt.message
        }
        if followsSettings {
            recheckTrust()
        } else {
            applyContentPolicy((try? settings.read()) ?? SettingsRecord())
        }
        return problem
    }

    private func recheckTrust() {
        let now = Int64(Date().timeIntervalSince1970)
        if options.caFile == nil, proxy.authority == nil, case .present(let ca) = CAFolder(home: home).load() {
            proxy.setAuthority(ca)
        }
        guard let report = try? InspectionGuard.recheck(home: home, settings: settings, environment: environment, now: now) else { return }
        for notice in report.notices { say(notice) }
        let wanted = report.record[SettingKeys.inspectionEnabled] && canInspect
        if proxy.inspectionEnabled != wanted {
            proxy.setInspection(enabled: wanted)
            applyContentPolicy(report.record)
        }
    }

    /// The content policy in force: the saved one, kept only while inspecting (or forced).
    static func contentPolicy(_ record: SettingsRecord, inspecting: Bool, force: Bool) -> ContentPolicy {
        ContentPolicy(keep: force ? inspecting : (record[SettingKeys.contentKeep] && inspecting),
                      expiry: ContentExpiry(text: record[SettingKeys.contentExpiry]) ?? .default,
                      flowBudget: record[SettingKeys.contentFlowBudget])
    }

    private func applyContentPolicy(_ record: SettingsRecord) {
        let policy = Session.contentPolicy(record, inspecting: proxy.inspectionEnabled, force: options.forceContentKeep)
        do { try content.apply(policy) } catch let error as UserFacingError { say(error.message) } catch { say("\(error)") }
    }

    private func answer(_ request: ControlRequest) -> ControlResponse {
        switch request.command {
        case "status":
            return ControlResponse(ok: true, message: "running", values: statusValues())
        case "stop":
            // Answered once the session has stopped, with what was not saved (`tv stop` says it).
            requestStop()
            guard stoppedSignal.wait(timeout: .now() + 14) == .success else {
                return ControlResponse(ok: true, message: "Stopping: open connections are closed and everything is flushed.")
            }
            stoppedSignal.signal()  // for any later waiter
            return ControlResponse(ok: true, message: "stopped", values: finalLosses.withLock { $0 }?.values ?? [:])
        case LiveSessionFlush.request.command:
            // A reading command asks first, so what it shows is current (bounded: never hangs it).
            var writers: [(DispatchTime) -> Bool] = [writer.flush(waitingUntil:), wiring.contentWriter.flush(waitingUntil:)]
            if let packets = capture?.writer { writers.append(packets.flush(waitingUntil:)) }
            if let decrypted = wiring.decryptedCapture { writers.append(decrypted.flush(waitingUntil:)) }
            return LiveSessionFlush.answer(flushing: writers)
        case "reserve-flow-ids":
            // A `tv exec` writing to the same database takes a block of ids so that its flows
            // never overwrite this session's (both upsert by id).
            guard let count = request.arguments["count"].flatMap(Int64.init), count > 0, count <= 1 << 32 else {
                return ControlResponse(ok: false, message: "reserve-flow-ids needs a count from 1 to 2^32")
            }
            guard let first = proxy.reserveFlowIDs(UInt64(count)) else {
                return ControlResponse(ok: false, message: "the session is stopping")
            }
            return ControlResponse(ok: true, message: "reserved", values: ["first": String(first)])
        case "setting-saved":
            guard let record = try? settings.read() else {
                return ControlResponse(ok: false, message: "the session could not read \(settings.file.path)")
            }
            if request.arguments["key"] == SettingKeys.clientCertificates.name {
                // Read and checked once, when the proxy starts (`ProxyConfiguration.clientCertificates`).
                return ControlResponse(ok: false, message: "client certificates are read when a session starts")
            }
            if request.arguments["key"]?.hasPrefix("capture.") == true {
                // The capture writer is made with them as the session starts (`SessionCapture`).
                return ControlResponse(ok: false, message: "capture settings are read when a session starts")
            }
            if request.arguments["key"] == SettingKeys.inspectionEnabled.name {
                let wanted = record[SettingKeys.inspectionEnabled]
                // A CA made since the session started (e.g. by `tv setup`) is picked up here.
                if wanted && !canInspect { reloadCA() }
                if wanted && !canInspect {
                    return ControlResponse(ok: false, message: "this session has no usable CA, so it cannot inspect")
                }
                if !options.forceInspection && options.caFile == nil { proxy.setInspection(enabled: wanted) }
            }
            applyContentPolicy(record)
            if let key = request.arguments["key"], StorageLimitsReading.isLimit(key) { retention.limitsChanged() }
            return ControlResponse(ok: true, message: "applied")
        case "ca-changed":
            // `tv ca create`, `import`, `remake`, `remove` and `tv setup` changed the data
            // folder's CA: mint from the one there now.
            guard options.caFile == nil else {
                return ControlResponse(ok: true, message: "this session uses its own CA (--ca); it keeps it")
            }
            if let problem = reloadCA(), options.forceInspection {
                return ControlResponse(ok: false, message: "this session was started with --inspect and now has no usable CA (\(problem)); it inspects nothing until there is one")
            }
            return ControlResponse(ok: true, message: "applied", values: ["inspection": proxy.inspectionEnabled ? "on" : "off"])
        case "pinned-forgotten":
            // `tv pinned forget` removed the rows first; the in-memory sets answer the loops.
            guard let host = request.arguments["host"], !host.isEmpty else {
                return ControlResponse(ok: false, message: "no host was named")
            }
            wiring.pinning.forget(host: host)
            return ControlResponse(ok: true, message: "applied")
        case LiveDeleteEverything.request.command:
            return LiveDeleteEverything.answer(home: home, flows: writer, content: wiring.contentWriter,
                                               now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        case LiveAuditKeys.request.command:
            // `tv audit start` / `stop`: follow the live audit session's key log (issue 23).
            return wiring.auditKeys.answer(inspecting: proxy.inspectionEnabled)
        case "rotate-capture":
            guard let capture else { return ControlResponse(ok: false, message: CaptureSessionWords.notCapturing) }
            let result = capture.rotate()
            return ControlResponse(ok: result.ok, message: result.message, values: result.values)
        default:
            return ControlResponse(ok: false, message: "'\(request.command)' is not something this session knows; use the same version of tv.")
        }
    }

    private func statusValues() -> [String: String] {
        let c = proxy.counters
        var values: [String: String] = [
            "listen": options.mode == .tun ? listenLabel : (proxy.address?.description ?? ""),
            "mode": options.mode.description,
            "modeLabel": modeLabel,
            "inspection": proxy.inspectionEnabled ? "on" : "off",
            "openConnections": String(c.openConnections),
            "accepted": String(c.accepted),
            "refusedByCap": String(c.refusedByCap),
            "refusedPerClient": String(c.refusedPerClient),
            "headTimeouts": String(c.headTimeouts),
            "exchangeReadingStopped": String(c.exchangeReadingStopped),
            "busyPollsFoundNothing": String(c.busyPollsFoundNothing),
            "busyPollsFoundWork": String(c.busyPollsFoundWork),
            "acceptsFailedForDescriptors": String(c.acceptsFailedForDescriptors),
            "connectionCap": String(c.connectionCap),
            "descriptorLimit": String(c.descriptorLimit),
            "bytesFromClients": String(c.bytesFromClients),
            "bytesFromServers": String(c.bytesFromServers),
            "pinningDetections": String(c.pinningDetections),
            "clientLacksRoot": String(c.clientLacksRoot),
            "possiblePinning": String(c.possiblePinning),
            "clientLeft": String(c.clientLeft),
            "contentKeeping": content.isKeeping ? "on" : "off",
            "dataFolder": home.path,
            "pid": String(getpid()),
            "proxyAuth": options.proxyCredentials == nil ? "off" : "on",
        ]
        for (kind, n) in c.closedByStatus { values[SessionStatusPresentation.closedKey(kind)] = String(n) }
        values.merge(wiring.losses.values) { old, _ in old }
        if let shared = wiring.shared { values.merge(SharedStoreWiring.statusValues(shared)) { old, _ in old } }
        if options.mode == .transparent { values["notRedirected"] = String(c.notRedirected) }
        if let tunnel { for (key, n) in tunnel.counters { values["tunnel." + key] = String(n) } }
        if let capture { values.merge(capture.statusValues) { old, _ in old } }
        values.merge(ProgramLookupStatus.values(wiring.programs.counters)) { old, _ in old }
        values.merge(QueueStatus.values(flows: writer.counters, decrypted: wiring.decryptedCapture?.counters)) { old, _ in old }
        values.merge(DiagnosticsCounters.values(proxy: c, caLoaded: canInspect, content: wiring.contentWriter.counters,
                                                tally: wiring.tally, startedAtMicros: startedAtMicros)) { old, _ in old }
        return values
    }
}

/// Pinning memory for a session run with `--no-pinning-detection`: nothing is pinned, nothing is
/// remembered (the flow still records why its handshake ended).
final class NoPinningMemory: PinningMemory {
    func recall(_ key: PinKey) -> PinningRecall? { nil }
    func remember(_ key: PinKey, kind: PinKind, reason: String) {}
    var learns: Bool { false }
}
