import ControlChannel
import FlowStore
import Foundation
import LocalCA
import Proxy
import Recording
import Settings
import SetupActions
import TVHome

/// A live `tv run` session: the proxy, the flow database, pinned hosts, the control socket and
/// the periodic trust re-check, started together and stopped together (everything flushed).
public final class Session: Sendable {
    /// What `tv run` was asked for.
    public struct Options: Sendable {
        public var mode: ProxyMode = .regular
        public var listen: String?
        public var workers: Int?
        public var ignoreHosts: [String] = []
        public var allowHosts: [String] = []
        public var upstreamInsecure = false
        public var upstreamCAFile: String?
        public var keylogPath: String?
        /// A one-session CA from a combined key+certificate PEM (`--ca FILE`); not saved.
        public var caFile: String?
        /// Inspect this session whatever the trust store says (`--inspect`), for clients given
        /// the root directly (`curl --cacert`); never saved.
        public var forceInspection = false
        /// Keep decrypted content this session whatever `content.keep` says (`--keep-content`).
        public var forceContentKeep = false
        /// Remember hosts whose clients seem to pin (saved pins still apply only when on);
        /// `--no-pinning-detection` turns it off for the session, so load generators that close
        /// mid-handshake do not turn inspection into pass-through.
        public var pinningDetection = true
        /// Seconds between trust re-checks while running (0 = never).
        public var trustRecheckSeconds: Double = 60
        public init() {}
    }

    public let home: TVHome
    public let options: Options
    private let proxy: ProxyServer
    private let store: FlowStore
    private let writer: FlowWriter
    private let pinning: PersistentPinningMemory
    private let contentWriter: ContentWriter
    private let content: ContentRecorder
    private let settings: SettingsStore
    private let environment: [String: String]
    private let canInspect: Bool
    private let say: @Sendable (String) -> Void
    private let stopSignal = DispatchSemaphore(value: 0)
    /// The banner shown at start.
    public let banner: RunBanner

    /// Prepares everything and starts listening.
    /// - Parameter say: where notices go (standard error for `tv run`).
    /// - Throws: `ProxyError` (e.g. the port is taken), `FlowStoreError`, `CAError`, `ControlError`,
    ///   `SettingsError`, `TVHomeError`.
    public init(home: TVHome, options: Options, environment: [String: String], now: Int64,
                say: @escaping @Sendable (String) -> Void) throws {
        self.home = home
        self.options = options
        self.environment = environment
        self.say = say
        try home.ensureExists()
        try home.ensureDirectory(home.runDirectory)
        settings = SettingsStore(file: SettingsFile(home: home))

        // The CA: a one-session file, or the data folder's (absent or in doubt: no inspection).
        var authority: CertificateAuthority?
        var caPath: String?
        var note: String
        if let file = options.caFile {
            authority = try CertificateAuthority.fromCombinedPEM(path: file, now: now)
            caPath = nil
            note = "forced for this session with --ca \(file)"
        } else {
            let folder = CAFolder(home: home)
            switch folder.load() {
            case .present(let ca): authority = ca; caPath = folder.rootPath; note = ""
            case .absent: note = "there is no CA yet; `tv setup` makes one and walks you through trusting it"
            case .doubt(let doubt): note = doubt.message
            }
        }

        // Inspection: the saved setting after re-asking trust, unless forced for this session.
        var inspecting = false
        if authority != nil {
            if options.forceInspection || options.caFile != nil {
                inspecting = true
                if options.caFile == nil { note = "forced for this session with --inspect; clients must trust \(caPath ?? "the root") themselves" }
            } else {
                let report = try InspectionGuard.recheck(home: home, settings: settings, environment: environment, now: now)
                for notice in report.notices { say(notice) }
                inspecting = report.record[SettingKeys.inspectionEnabled]
                note = inspecting ? "the root is trusted for TLS by the \(report.store) store"
                                  : "turn it on with `tv inspect on` once `tv setup` says ready (or pass --inspect for this session)"
            }
        }
        canInspect = authority != nil

        store = try FlowStore(home: home)
        writer = try store.makeWriter()
        pinning = try PersistentPinningMemory(store: store.pinnedHosts)

        // Decrypted content: kept only while inspecting, under the saved policy.
        let record = (try? settings.read()) ?? SettingsRecord()
        let policy = Session.contentPolicy(record, inspecting: inspecting, force: options.forceContentKeep)
        contentWriter = try ContentWriter(ContentWriterConfiguration(databasePath: home.databasePath,
                                                                     directory: home.contentDirectory,
                                                                     expiry: policy.expiry))
        content = ContentRecorder(writer: contentWriter, policy: policy)

        var config = ProxyConfiguration()
        config.mode = options.mode
        if let listen = options.listen { try config.setListen(listen) }
        config.workers = options.workers
        config.inspectionEnabled = inspecting
        config.authority = authority
        config.leafCache = authority.map { LeafCache(authority: $0) }
        config.ignoreHosts = options.ignoreHosts
        config.allowHosts = options.allowHosts
        config.upstreamInsecure = options.upstreamInsecure
        config.upstreamCAFile = options.upstreamCAFile
        config.keylogPath = options.keylogPath ?? environment["SSLKEYLOGFILE"].flatMap { $0.isEmpty ? nil : $0 }
        config.firstFlowID = UInt64(writer.allocateID())
        config.flowSink = FlowStoreSink(writer: writer)
        config.pinningMemory = options.pinningDetection ? pinning : NoPinningMemory()
        config.chunkRecorder = ContentRecordingBridge(content: content)
        proxy = ProxyServer(configuration: config)
        let address = try proxy.start()

        let modeLabel: String
        switch options.mode {
        case .regular: modeLabel = "explicit proxy (HTTP CONNECT and plain HTTP)"
        case .socks5: modeLabel = "SOCKS5 proxy"
        case .reverse: modeLabel = "reverse proxy to \(String(options.mode.description.dropFirst("reverse:".count)))"
        }
        banner = RunBanner(listen: address.description, mode: modeLabel,
                           caFingerprint: authority.map { Hex.encode($0.root.sha256, separator: ":", uppercase: true) },
                           caPath: caPath, inspecting: inspecting, inspectionNote: note,
                           dataFolder: home.path, keylogPath: config.keylogPath)
    }

    /// Serves until `tv stop`, SIGINT or SIGTERM; then stops everything and flushes the database.
    /// - Throws: `ControlError` when the control socket cannot be opened (another session runs).
    public func run() throws {
        let control = try ControlServer(path: SessionPaths.controlSocket(home)) { [self] request in
            self.answer(request)
        }
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let signals = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in self.stopSignal.signal() }
            source.resume()
            return source
        }
        var recheck: DispatchSourceTimer?
        if canInspect && !options.forceInspection && options.caFile == nil && options.trustRecheckSeconds > 0 {
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + options.trustRecheckSeconds, repeating: options.trustRecheckSeconds)
            timer.setEventHandler { [self] in self.recheckTrust() }
            timer.resume()
            recheck = timer
        }
        stopSignal.wait()
        recheck?.cancel()
        signals.forEach { $0.cancel() }
        control.stop()
        proxy.stop(graceSeconds: 1)
        content.stop()
        contentWriter.close()
        pinning.flush()
        writer.close()
        store.close()
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Asks the session to stop (as `tv stop` does).
    public func requestStop() { stopSignal.signal() }

    /// The live counters, for `tv status`.
    public var counters: ProxyCounters { proxy.counters }

    private func recheckTrust() {
        let now = Int64(Date().timeIntervalSince1970)
        guard let report = try? InspectionGuard.recheck(home: home, settings: settings, environment: environment, now: now) else { return }
        for notice in report.notices { say(notice) }
        let wanted = report.record[SettingKeys.inspectionEnabled]
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
            requestStop()
            return ControlResponse(ok: true, message: "Stopping: open connections are closed and everything is flushed.")
        case "setting-saved":
            guard let record = try? settings.read() else {
                return ControlResponse(ok: false, message: "the session could not read \(settings.file.path)")
            }
            if request.arguments["key"] == SettingKeys.inspectionEnabled.name {
                let wanted = record[SettingKeys.inspectionEnabled]
                if wanted && !canInspect {
                    return ControlResponse(ok: false, message: "this session has no usable CA, so it cannot inspect")
                }
                if !options.forceInspection && options.caFile == nil { proxy.setInspection(enabled: wanted) }
            }
            applyContentPolicy(record)
            return ControlResponse(ok: true, message: "applied")
        case "pinned-forgotten":
            // `tv pinned forget` removed the row first; the in-memory set answers the loops.
            guard let host = request.arguments["host"], !host.isEmpty else {
                return ControlResponse(ok: false, message: "no host was named")
            }
            pinning.forget(host)
            return ControlResponse(ok: true, message: "applied")
        default:
            return ControlResponse(ok: false, message: "'\(request.command)' is not something this session knows; use the same version of tv.")
        }
    }

    private func statusValues() -> [String: String] {
        let c = proxy.counters
        var values: [String: String] = [
            "listen": proxy.address?.description ?? "",
            "mode": options.mode.description,
            "inspection": proxy.inspectionEnabled ? "on" : "off",
            "openConnections": String(c.openConnections),
            "accepted": String(c.accepted),
            "refusedByCap": String(c.refusedByCap),
            "bytesFromClients": String(c.bytesFromClients),
            "bytesFromServers": String(c.bytesFromServers),
            "pinnedHostsRemembered": String(c.pinnedHostsRemembered),
            "flowEventsDropped": String(writer.counters.dropped),
            "contentKeeping": content.isKeeping ? "on" : "off",
            "dataFolder": home.path,
            "pid": String(getpid()),
        ]
        for (kind, n) in c.closedByStatus { values["closed." + kind.rawValue] = String(n) }
        return values
    }
}

/// Pinning memory for a session run with `--no-pinning-detection`: nothing is pinned, nothing is
/// remembered (the flow still records why its handshake ended).
final class NoPinningMemory: PinningMemory {
    func isPinned(_ host: String) -> Bool { false }
    func remember(_ host: String, reason: String) {}
}
