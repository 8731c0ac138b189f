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

/// The session's answers on its control socket (`tv status`, `tv stop`, settings saved, the CA
/// changed, flushes for reading commands, capture rotation) and the status values `tv status`
/// shows.
extension Session {
    /// How long `tv stop` is answered after at most (s): the connections' second, the writers'
    /// flushes, the shared store's wait (`SessionWiring.sharedStopWait`), and room to spare.
    static let stopAnswerWait = SessionWiring.sharedStopWait + 6
    /// How long `tv stop` waits for that answer (s).
    public static let stopClientWait = Int(stopAnswerWait) + 4

    func answer(_ request: ControlRequest) -> ControlResponse {
        switch request.command {
        case "status":
            return ControlResponse(ok: true, message: "running", values: statusValues())
        case "stop":
            // Answered once the session has stopped, with what was not saved (`tv stop` says it):
            // past the wait for a shared store that does not answer, or the answer went without
            // it and `tv stop` said everything was saved (a trial's hung store).
            requestStop()
            guard stoppedSignal.wait(timeout: .now() + Self.stopAnswerWait) == .success else {
                return ControlResponse(ok: true, message: "Stopping: open connections are closed and everything is flushed.")
            }
            stoppedSignal.signal()  // for any later waiter
            return ControlResponse(ok: true, message: "stopped", values: finalLosses.withLock { $0 }?.values ?? [:])
        case LiveSessionFlush.request.command:
            // A reading command asks first, so what it shows is current (bounded: never hangs it).
            return wiring.flushAnswer(packets: capture?.writer)
        case "setting-saved":
            guard let record = try? settings.read() else {
                return ControlResponse(ok: false, message: "the session could not read \(settings.file.path)")
            }
            if let key = request.arguments["key"], let reason = SettingsAtStart.reason(key) {
                return ControlResponse(ok: true, message: reason, values: [SettingsAtStart.appliesKey: SettingsAtStart.atNextStart])
            }
            if request.arguments["key"] == SettingKeys.inspectionEnabled.name {
                let wanted = record[SettingKeys.inspectionEnabled]
                // `tv run --inspect` (or `--ca`) holds its own switch against the setting's changes
                // (a `tv ca remake` that turns the saved setting off for want of trust, say); the
                // user's `tv inspect off` reaches it separately (`inspection-off`), and then the
                // saved off is what it does.
                if options.forceInspection || options.caFile != nil {
                    if !wanted && !proxy.inspectionEnabled { return ControlResponse(ok: true, message: "applied") }
                    // On again after a `tv inspect off` (it is what the session was started for).
                    if wanted && canInspect {
                        proxy.setInspection(enabled: true)
                        applyContentPolicy(record)
                        return ControlResponse(ok: true, message: "applied")
                    }
                    let why = options.forceInspection ? "it was started with --inspect" : "it was started with its own --ca"
                    return ControlResponse(ok: true, message: why, values: [SettingsAtStart.appliesKey: SettingsAtStart.atNextStart])
                }
                // A CA made since the session started (e.g. by `tv setup`) is picked up here.
                if wanted && !canInspect { reloadCA() }
                if wanted && !canInspect {
                    return ControlResponse(ok: false, message: "this session has no usable CA, so it cannot inspect")
                }
                if !options.forceInspection && options.caFile == nil { proxy.setInspection(enabled: wanted) }
            }
            // A shorter content.expiry is swept by the content writer here, before the retention
            // pass (which then finds nothing of it): its deletion is said too (a re-check's
            // content went unsaid).
            let contentSwept = applyContentPolicy(record)
            // A limit's pass is waited for (bounded: the client waits 5 s for any answer), so
            // `tv settings set` prints what went, as it does with no session running.
            if let key = request.arguments["key"], StorageLimitsReading.isLimit(key) {
                var swept = StorageReport()
                if let contentSwept { swept.content = contentSwept }
                let pass = retention.limitsChanged(waitingUpTo: SessionRetention.answerWaitSeconds)
                let said = StoragePresentation.report(swept, automatic: true) + SessionRetention.lines(pass)
                return ControlResponse(ok: true, message: "applied", values: [SessionRetention.reportKey: said.joined(separator: "\n")])
            }
            // `tv run --keep-content` keeps content whatever the setting says: a saved off is
            // for the next start (it answered "applied" while content went on being kept: a trial).
            if request.arguments["key"] == SettingKeys.contentKeep.name, options.forceContentKeep, !record[SettingKeys.contentKeep] {
                return ControlResponse(ok: true, message: "it was started with --keep-content", values: [SettingsAtStart.appliesKey: SettingsAtStart.atNextStart])
            }
            return ControlResponse(ok: true, message: "applied")
        case "inspection-off":
            // `tv inspect off`: off always works (DESIGN §5; the seed's toggle stops inspection
            // immediately), also in a session started with --inspect or --ca, which a trial's
            // `tv inspect off` left decrypting. Sent before the setting is saved.
            let was = proxy.inspectionEnabled
            proxy.setInspection(enabled: false)
            applyContentPolicy((try? settings.read()) ?? SettingsRecord())
            return ControlResponse(ok: true, message: "off", values: ["wasInspecting": was ? "true" : "false"])
        case "ca-changed":
            // `tv ca create`, `import`, `remake`, `remove` and `tv setup` changed the data
            // folder's CA: mint from the one there now.
            guard options.caFile == nil else {
                return ControlResponse(ok: true, message: "this session uses its own CA (--ca); it keeps it")
            }
            // "Lacks tv's root" was said of the root before (`LacksRootMemory`).
            wiring.pinning.forget(kind: .lacksRoot)
            if let problem = reloadCA(), options.forceInspection {
                // Applied: the session took the change and inspects nothing until there is a CA
                // (not a failure to tell it: `tv ca remove` said "could not be told", a trial).
                return ControlResponse(ok: true, message: "this session was started with --inspect and now has no usable CA (\(problem)); it inspects nothing until there is one",
                                       values: ["inspection": proxy.inspectionEnabled ? "on" : "off"])
            }
            return ControlResponse(ok: true, message: "applied", values: ["inspection": proxy.inspectionEnabled ? "on" : "off"])
        case "pinned-forgotten":
            // `tv pinned forget` removed the rows first; the in-memory sets answer the loops.
            if request.arguments[ControlSocketNotifier.kindArgument] == ControlSocketNotifier.lacksRootKind {
                wiring.pinning.forget(kind: .lacksRoot)
                return ControlResponse(ok: true, message: "applied")
            }
            guard let host = request.arguments["host"], !host.isEmpty else {
                return ControlResponse(ok: false, message: "no host was named")
            }
            wiring.pinning.forget(host: host)
            proxy.forgetPinningEvidence(host: host)
            return ControlResponse(ok: true, message: "applied")
        case LiveDeleteEverything.request.command:
            return LiveDeleteEverything.answer(home: home, flows: writer, content: wiring.contentWriter, pinning: wiring.pinning,
                                               now: Int64(Date().timeIntervalSince1970 * 1_000_000))
        case LiveContentDelete.request.command:
            return LiveContentDelete.answer(home: home, content: wiring.contentWriter, rows: wiring.writer)
        case LiveAuditKeys.request.command:
            // `tv audit start` / `stop`: follow the live audit session's key log (issue 23).
            return wiring.auditKeys.answer(inspecting: proxy.inspectionEnabled)
        case CaptureRotationRequest.command:
            return SessionCaptureRotation.answer(packets: capture, decrypted: wiring.decryptedCapture)
        default:
            return ControlResponse(ok: false, message: "'\(request.command)' is not something this session knows; use the same version of tv.")
        }
    }

    /// What an audit session records of this one (`AuditRecording.settingsKeys` of its status).
    public var auditSettings: [String: String] {
        statusValues().filter { AuditRecording.settingsKeys.contains($0.key) }
    }

    func statusValues() -> [String: String] {
        var values = SessionStatusValues.common(proxy: proxy, wiring: wiring, home: home.path, tunnel: tunnel?.counters,
                                                capture: capture, canInspect: canInspect, startedAtMicros: startedAtMicros)
        values["listen"] = options.mode == .tun ? listenLabel : (proxy.address?.description ?? "")
        values["mode"] = options.mode.description
        values["modeLabel"] = modeLabel
        values["proxyAuth"] = options.proxyCredentials == nil ? "off" : "on"
        if options.mode == .transparent { values["notRedirected"] = String(proxy.counters.notRedirected) }
        if let tunnel { values.merge(tunnel.routingValues) { old, _ in old } }
        return values
    }
}
