import Capture
import ControlChannel
import FlowStore
import Foundation
import LocalCA
import ProgramLookup
import Proxy
import Recording
import FlowTerms
import Settings
import SetupActions
import TVHome
import Tunnel

/// What every session shares, whatever its front-end (`tv run` in any mode, `tv exec`): the CA
/// and the inspection decision, the flow database and its writer, pinned hosts, decrypted-content
/// recording, and the proxy configuration built from them. Made once, closed once.
final class SessionWiring: Sendable {
    let settings: SettingsStore
    let store: FlowStore
    let writer: FlowWriter
    /// The data folder.
    let home: TVHome
    /// The shared store this session also writes to (`--store`, `store.url`); nil for none.
    let shared: SharedStoreWiring?
    /// Run with `--store ''`: the first id of its flows, which stay here (`StoreKeptLocal`).
    let keptLocalFirst: Int64?
    /// Names the program behind each flow (its own thread; answers go to `writer`).
    let programs: ProgramLookup
    let pinning: PersistentPinningMemory
    let contentWriter: ContentWriter
    /// The flows carried into audit sessions: published by the session's retention passes, read
    /// by the content writer's sweeps.
    let carriedEvidence = CarriedEvidence()
    let content: ContentRecorder
    /// The content policy the session started with (the banner says whether content is kept).
    let contentPolicy: ContentPolicy
    /// The decrypted capture (`capture.decrypted`, only while inspecting); nil when off.
    let decryptedCapture: DecryptedCapture?
    /// The client legs' TLS secrets for a TUN session's capture file (attached once it has one).
    let captureSecrets: CaptureSecrets
    /// On once a capture or an audit session wants the TLS secrets (`KeyLogSwitch`): until then
    /// the proxy's contexts make no key log lines.
    let keyLogSwitch = KeyLogSwitch()
    /// Both legs' TLS secrets for the recording audit session (`Options.auditSessionID`, or the
    /// live one `tv audit start` started), followed as sessions start and stop (`LiveAuditKeys`).
    let auditKeys: LiveAuditKeys
    /// The proxy configuration for these options (mode, listen address and flow ids are the
    /// caller's to adjust before starting).
    let configuration: ProxyConfiguration
    let authority: CertificateAuthority?
    /// The file clients trust: the data folder's root, or the `--ca FILE` (nil: no CA).
    let caPath: String?
    let inspecting: Bool
    /// One sentence: why inspection is on or off.
    let inspectionNote: String
    /// Prints finished requests (`--log requests`), when asked.
    let requestLog: RequestLog?
    /// What `tv diag` and `tv top` read of the flows closed so far.
    let tally = SessionTally()

    /// - Throws: `FlowStoreError`, `CAError`, `SettingsError`, `TVHomeError`, `ProxyError`
    ///   (a bad --listen), `ForcedInspectionError` (--inspect or --keep-content without a usable CA).
    /// - Parameter peersAreServers: each flow's server is its client socket's peer (`tv exec`'s
    ///   TUN); nil: so in the TUN and transparent modes only.
    init(home: TVHome, options: Session.Options, environment: [String: String], now: Int64, peersAreServers: Bool? = nil,
         say: @escaping @Sendable (String) -> Void) throws {
        try home.ensureExists()
        try home.ensureDirectory(home.runDirectory)
        // Room for the stop's record while there is room (`LastStopRecord`: a stop on a full disk
        // writes it in place).
        LastStopRecord.reserve(home)
        settings = SettingsStore(file: SettingsFile(home: home))
        captureSecrets = CaptureSecrets(environment: environment, keyLogSwitch: keyLogSwitch)

        // The CA: a one-session file, or the data folder's (absent or in doubt: no inspection).
        var authority: CertificateAuthority?
        var caPath: String?
        var note: String
        if let file = options.caFile {
            let ca = try CertificateAuthority.fromCombinedPEM(path: file, leafKeyType: options.caLeafKeyType, now: now)
            authority = ca
            // What clients trust: the file's certificate alone, copied where the banner's example
            // names it (it named FILE, which holds the CA's private key: a re-check; before, it
            // named nothing: a trial). FILE itself is never suggested to hand to clients.
            let root = home.runDirectory + "/session-root.pem"
            if (try? FileModes.writeAtomically(ca.root.pem, to: root, mode: 0o600)) != nil {
                caPath = root
            }
            note = "forced for this session with --ca \(file)"
        } else {
            let folder = CAFolder(home: home)
            switch folder.load() {
            case .present(let ca):
                if let remade = ca.leafKeyRemade { say(remade.sentence) }
                if let problem = ca.rootProblem(now: now) {
                    // Every leaf it signed would be refused: no inspection, said as a doubt is.
                    if let asked = ForcedSessionOption.asked(by: options) { throw ForcedInspectionError.caCannotSign(asked, problem) }
                    note = CAError.rootNotValid(problem).message
                    if (try? settings.read())?[SettingKeys.inspectionEnabled] == true { say(note) }
                } else {
                    authority = ca; caPath = folder.rootPath; note = ""
                }
            case .absent:
                if let asked = ForcedSessionOption.asked(by: options) { throw ForcedInspectionError.noCA(asked, directory: folder.directory) }
                note = "there is no CA yet; `tv setup` makes one and walks you through trusting it"
            case .doubt(let doubt):
                // A file that could not be opened for want of a descriptor: the CA is fine, the start is not.
                if let shortage = doubt.shortage { throw shortage }
                if let asked = ForcedSessionOption.asked(by: options) { throw ForcedInspectionError.caInDoubt(asked, doubt) }
                note = doubt.message
                // Asked for in the settings and not happening: said, whatever --quiet says.
                if (try? settings.read())?[SettingKeys.inspectionEnabled] == true { say(InspectionDoubtNotice.sentence(doubt)) }
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
        self.authority = authority
        self.caPath = caPath
        self.inspecting = inspecting
        inspectionNote = note

        // A full disk does not stop a session: it forwards, reading the database it cannot
        // write (settings, pinned hosts), while the writers say so and retry until there is room.
        do {
            store = try FlowStore(home: home)
        } catch FlowStoreError.diskFull {
            store = try FlowStore(readingHome: home)
        }
        for repaired in CapturesLeftByKilledSessions.repair(home: home) { say(repaired) }
        // What was recorded stays the owner's, whatever a chmod since made of it.
        CaptureFolder(path: home.captureDirectory).tightenFileModes()
        FileModes.tightenFiles(in: home.contentDirectory)
        AuditKeyLog.tightenModes(home: home)
        // The shared store (issue 25): an explicit act, so a bad URL or an unreachable server is
        // said before anything listens; once running, its writer only mirrors the local one.
        let storeSetting = ((try? settings.read()) ?? SettingsRecord())[SettingKeys.storeURL]
        shared = try SharedStoreWiring.url(option: options.storeURL, setting: storeSetting)
            .map { try SharedStoreWiring.start(url: $0, home: home, say: say) }
        // A full disk is said at once (one line), and again when recording resumes; flows
        // starting to be given up while it lasts, once.
        writer = try store.makeWriter(mirror: shared?.writer,
                                      onHealthChange: { change, counters in
                                          say(RecordingPresentation.flowNotice(change, counters, wayOn: SessionWiring.wayOn(change, home)))
                                      },
                                      onGivingUp: { counters in say(RecordingPresentation.flowsGivenUpNotice(counters)) })
        // Its ids go on past the shared store's for this instance, before any flow is made; also
        // in a session without the store, past what the store was last known to hold
        // (`StoreHighestMark`: a later backfill would write its flows over others').
        if let shared {
            shared.idFloor.attach(writer)
        } else if let instance = InstanceIdentity.storedID(home), let mark = StoreHighestMark.read(home: home, instance: instance) {
            writer.raiseIDFloor(above: mark)
        }
        // `--store ''`: this session's flows stay here (`StoreKeptLocal`); a line a killed
        // session left open closes before this session's first id either way.
        keptLocalFirst = options.storeURL == "" ? writer.ids.upcoming : nil
        if let error = StoreKeptLocal.sessionStarts(home: home, first: writer.ids.upcoming, keptLocal: keptLocalFirst != nil), keptLocalFirst != nil {
            throw FlowStoreError.cannotOpen(path: home.path + "/" + StoreKeptLocal.fileName, reason: "\(error)")
        }
        self.home = home
        if let sentence = InterruptedFlowsNotice.sentence(writer.interruptedAtStart) { say(sentence) }
        var announce: (@Sendable (PinKey, PinKind, String) -> Void)?
        if options.announcesPinnedHosts {
            announce = { key, kind, reason in say(PinnedHostNotice.sentence(key: key, kind: kind, reason: reason)) }
        }
        pinning = try PersistentPinningMemory(store: store, announce: announce)

        // Decrypted content: kept only while inspecting, under the saved policy.
        let record = (try? settings.read()) ?? SettingsRecord()
        let policy = Session.contentPolicy(record, inspecting: inspecting, force: options.forceContentKeep)
        var contentConfiguration = ContentWriterConfiguration(databasePath: home.databasePath, directory: home.contentDirectory, expiry: policy.expiry)
        contentConfiguration.carried = carriedEvidence
        // The flow history first on a disk they share (`HistoryFirst`): a trial's kept content
        // took the room freed on a full disk before the waiting flows could.
        let historyFirst = writer.historyFirst
        contentConfiguration.historyFirst = DiskSpace.sameDisk(home.contentDirectory, home.databasePath) ? historyFirst : nil
        contentWriter = try ContentWriter(contentConfiguration) { change, counters in
            say(RecordingPresentation.contentNotice(change, counters, wayOn: SessionWiring.wayOn(change, home)))
        }
        content = ContentRecorder(writer: contentWriter, policy: policy)
        contentPolicy = policy

        var config = ProxyConfiguration()
        config.mode = options.mode
        if let listen = options.listen { try config.setListen(listen) }
        config.workers = options.workers
        config.busyPollMicros = options.busyPollMicros
        config.inspectionEnabled = inspecting
        config.authority = authority
        config.leafCache = authority.map { LeafCache(authority: $0) }
        config.ignoreHosts = options.ignoreHosts
        config.allowHosts = options.allowHosts
        config.upstreamInsecure = options.upstreamInsecure
        config.upstreamCAFile = options.upstreamCAFile
        config.clientCertificates = try options.clientCertificates
            + record[SettingKeys.clientCertificates].map { try ClientCertificateRule(parsing: $0) }
        config.proxyCredentials = options.proxyCredentials
        config.keylogPath = options.keylogPath ?? environment["SSLKEYLOGFILE"].flatMap { $0.isEmpty ? nil : $0 }
        config.flowIDs = writer.ids
        config.readsExchanges = record[SettingKeys.requestsRecord]
        let logsRequests = options.logRequests || record[SettingKeys.logRequests]
        requestLog = logsRequests ? options.printRequest.map { RequestLog(print: $0) } : nil
        let flowWriter = writer
        // In the TUN and transparent modes a flow's server is its client socket's peer: the
        // program lookup asks for that one socket, once the flow's server is known.
        let peersAreServers = peersAreServers ?? { switch options.mode { case .tun, .transparent: true; default: false } }()
        programs = ProgramLookup(peersAreServers: peersAreServers) { id, program in _ = flowWriter.enqueue(.program(flowID: id, program)) }
        config.flowSink = FlowStoreSink(writer: writer, requestLog: requestLog, programs: programs, tally: tally,
                                        lookUpWhenServerKnown: peersAreServers)
        config.pinningMemory = options.pinningDetection ? pinning : NoPinningMemory()
        // A full disk is said at once (one line), and again when recording resumes, as for flows and content.
        let decrypted = try DecryptedCaptureSetup.make(home: home, record: record, inspecting: inspecting,
                                                       historyFirst: DiskSpace.sameDisk(home.captureDirectory, home.databasePath) ? historyFirst : nil) { change, counters in
            say(RecordingPresentation.decryptedCaptureNotice(change, counters, wayOn: SessionWiring.wayOn(change, home)))
        }
        decryptedCapture = decrypted
        // Attached whether or not inspecting now (inspection may be turned on while it runs);
        // the contexts make no lines until a capture or an audit session is first followed
        // (`keyLogSwitch`), and with no audit session live, lines go nowhere.
        let keys = LiveAuditKeys(home: home, keyLogSwitch: keyLogSwitch)
        if let id = options.auditSessionID {
            try keys.follow(id)
        } else {
            do { try keys.refollow() } catch let error as UserFacingError { say(error.message) }
        }
        auditKeys = keys
        config.clientLegSecrets = SecretsFanOut(first: captureSecrets, second: keys)
        config.upstreamLegSecrets = keys
        config.keyLogSwitch = keyLogSwitch
        if let decrypted {
            config.chunkRecorder = ChunkRecorderPair(content, decrypted)
        } else {
            config.chunkRecorder = content
        }
        if let seconds = options.headTimeoutSeconds { config.headTimeout = seconds }
        if let seconds = options.idleTimeoutSeconds { config.idleTimeout = seconds }
        config.maxConnectionsPerClient = options.maxConnectionsPerClient
        // Refusals and descriptor shortages are said even under --quiet: they are why clients fail.
        config.notices = { notice in say(notice.message) }
        configuration = config
    }

    /// How long a stop waits for the shared store's last writes (seconds).
    static let sharedStopWait = 15.0

    /// The full disk's way on for `home` as it holds now (`DataFolderHoldings`), read when a
    /// writer starts failing (its line names the command that frees room there); nil otherwise.
    static func wayOn(_ change: WriteHealth.Change, _ home: TVHome) -> String? {
        change == .startedFailing ? DataFolderHoldings.wayOn(home: home) : nil
    }

    /// Stops recording and flushes everything to disk (content, pinned hosts, flows).
    /// - Returns: what was not saved (exact counts; empty when everything was).
    @discardableResult
    func close() -> RecordingLosses {
        // The lookups still queued answer before the flow writer closes.
        programs.stop()
        content.stop()
        // A last sweep: bytes of turns deleted while the session ran (a history limit, an expiry
        // within the last minute) are cleared now, not left in plaintext until the next session
        // or command (a trial grep'd 60 deleted tokens from a segment after `tv stop`).
        _ = try? contentWriter.sweep()
        contentWriter.close()
        decryptedCapture?.stop()
        auditKeys.stop()
        pinning.flush()
        // The proxy has stopped: every flow was closed, so one still open lost its close.
        writer.close(interruptingOpenFlows: true)
        // A server that stopped answering mid-write held `tv stop` and SIGTERM for as long as
        // it hung (a trial: minutes); the local history has every flow, so the stop waits no longer.
        let sharedFinished = shared?.writer.close(waitingAtMost: Self.sharedStopWait) ?? true
        requestLog?.drain()
        store.closeEmptyingWAL()
        if let first = keptLocalFirst { StoreKeptLocal.sessionStops(home: home, first: first, last: writer.highestAllocatedID) }
        var final = losses
        defer { LastStopRecord(atMicros: EngineClock.wallMicros(), pid: getpid(), losses: final).write(home) }
        if let shared {
            // What this session may have sent: a start after a restore, with the store not
            // answering, goes on past it.
            if let highest = writer.highestAllocatedID { StoreHighestMark.raise(home: home, instance: shared.instance.id, to: highest) }
            let counters = shared.writer.counters
            final.sharedFlowsNotSaved = counters.flowsNotSaved
            final.sharedEventsDropped = counters.dropped
            final.sharedUnanswered = !sharedFinished
            final.sharedServer = shared.target.server
            final.sharedURL = shared.target.url
        }
        return final
    }

    /// What was not saved so far (flows, content, the decrypted capture), from the writers' counters.
    var losses: RecordingLosses {
        RecordingLosses(flows: writer.counters, content: contentWriter.counters, decrypted: decryptedCapture?.counters)
    }
}

extension SessionWiring {
    /// The answer to `LiveSessionFlush.request`, from `tv run`'s socket and a `tv exec`'s alike:
    /// every writer of the session flushed in turn (flows, content, the packet capture when there
    /// is one, the decrypted capture), within `LiveSessionFlush`'s bound. A `tv exec` answered no
    /// flush, so `tv flows --follow` said no session ran beside one (a trial).
    func flushAnswer(packets: CaptureWriter?) -> ControlResponse {
        var writers: [(DispatchTime) -> Bool] = [writer.flush(waitingUntil:), contentWriter.flush(waitingUntil:)]
        if let packets { writers.append(packets.flush(waitingUntil:)) }
        if let decryptedCapture { writers.append(decryptedCapture.flush(waitingUntil:)) }
        // With what is not being saved, so the reading command can say its list lacks it.
        var values = losses.values
        values["pid"] = String(getpid())
        return LiveSessionFlush.answer(flushing: writers, values: values)
    }
}
