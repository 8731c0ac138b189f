import TVCore
import CertificateSetup
import ControlChannel
import CommandLineParser
import SetupActions
import Settings
import TrustStore
import TVHome

/// `tv inspect on|off|status` (bare `tv inspect` is `status`): the inspection switch, saved first and applied to a live session second.
enum InspectCommands {
    static let spec = CommandSpec(
        name: "inspect",
        summary: "Turn TLS inspection on or off, or say whether it is on.",
        discussion: "On is accepted only when the trust store accepts a leaf from the root for TLS (see `tv setup`). Off always works, whatever else is broken. Every use re-asks the trust store and turns inspection off, and says so, when the root is no longer usable.",
        subcommands: [
            CommandSpec(name: "on", summary: "Turn inspection on (only when the setup stage is ready).",
                        options: [OptionSpec("trust-store", value: "STORE", help: "Check against STORE and remember it as trust.store (system, file:PATH, dir:PATH, nss:DIR).")]),
            CommandSpec(name: "off", summary: "Turn inspection off (always works)."),
            CommandSpec(name: "status", summary: "Say whether inspection is on, after asking the trust store again (the default).",
                        options: [OptionSpecs.json]),
        ],
        defaultSubcommand: "status"
    )

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "inspect on": on,
        "inspect off": off,
        "inspect status": status,
    ]

    static func on(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        let settings = try inv.settingsStore()
        let report = try InspectionGuard.recheck(home: home, settings: settings, environment: inv.environment, now: inv.now)
        for notice in report.notices { inv.console.note(notice) }
        let store = try inv.trustStoreOption() ?? report.store
        let snapshot = store == report.store
            ? report.snapshot
            : SetupSnapshot.read(home: home, store: store, inspectionEnabled: false, environment: inv.environment, now: inv.now)
        switch CertificateSetupPolicy.inspectOn(snapshot.facts) {
        case .alreadyOn:
            inv.console.line("Inspection is already on (\(StoreWords.name(store)) accepts leaves from the root for TLS).")
            return 0
        case .refuse(let sentence):
            inv.console.note("tv: " + sentence)
            return 1
        case .turnOn:
            let (record, deliveries) = try settings.update { record in
                record.setting(SettingKeys.inspectionEnabled, to: true).setting(SettingKeys.trustStore, to: store.description)
            }
            inv.console.line("Inspection is on: \(StoreWords.name(store)) accepts leaves from the root for TLS.")
            for line in SetupText.whenOn(contentKept: record[SettingKeys.contentKeep]) { inv.console.line("  " + line) }
            for (_, delivery) in deliveries { if let s = delivery.sentence { inv.console.line(s) } }
            return 0
        }
    }

    static func off(_ inv: Invocation) throws -> Int32 {
        let settings = try inv.settingsStore()
        // Every running session stops inspecting first, one started with --inspect or --ca too
        // (off always works: a trial's such session went on decrypting); then the setting.
        let (stopped, wereInspecting) = stopInspectingEverywhere(inv)
        let outcome: InspectionOffOutcome
        do {
            outcome = try settings.turnInspectionOff()
        } catch let SettingsError.saveFailed(path, key, reason) {
            // The sessions were told; only the saved value stayed (a read-only data folder):
            // "nothing changed" was not true.
            let sessions = stopped == 0 ? "" : stopped == 1 ? "The running session stopped inspecting, but the" : "\(stopped) running sessions stopped inspecting, but the"
            throw UsageRefusal("Could not save \(key) to \(path) (\(reason)). \(sessions.isEmpty ? "The" : sessions) saved setting still says on, so the next session would inspect; make the data folder writable (or free space), then run `tv inspect off` again.", exitCode: 1)
        }
        // The saved setting was off, but a session inspected by its own switch (--inspect, --ca):
        // said as stopped, not "(it already was)" (a trial).
        let savedWasOff: Bool
        switch outcome {
        case .wasAlreadyOff, .turnedOff(wasOn: false, _): savedWasOff = true
        default: savedWasOff = false
        }
        if savedWasOff, wereInspecting > 0 {
            inv.console.line(wereInspecting == 1
                ? "Inspection is now off: the running session, started with --inspect, stopped inspecting (the saved setting was already off)."
                : "Inspection is now off: \(wereInspecting) running sessions, started with --inspect, stopped inspecting (the saved setting was already off).")
            return 0
        }
        inv.console.line(outcome.sentence(settingsPath: settings.file.path))
        return 0
    }

    /// Tells every running session (`tv run` and each `tv exec`) to stop inspecting, one started
    /// with --inspect or --ca too; how many answered, and how many of those were inspecting.
    static func stopInspectingEverywhere(_ inv: Invocation) -> (stopped: Int, wereInspecting: Int) {
        var stopped = 0, wereInspecting = 0
        guard let home = try? inv.home(), home.exists else { return (0, 0) }
        for socket in AuditKeysNotifier.sockets(home: home) {
            guard let answer = try? ControlClient(path: socket).send(ControlRequest(command: "inspection-off"), timeoutSeconds: 5), answer.ok else { continue }
            stopped += 1
            if answer.values["wasInspecting"] == "true" { wereInspecting += 1 }
        }
        return (stopped, wereInspecting)
    }

    static func status(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        // Nothing here writes when inspection is off (always so without a data folder).
        if !home.exists { inv.console.note(TVHomeError.missing(path: home.path).message) }
        let settings = try inv.settingsStore()
        let report = try InspectionGuard.recheck(home: home, settings: settings, environment: inv.environment, now: inv.now)
        let enabled = report.record[SettingKeys.inspectionEnabled]
        let stage = CertificateSetupPolicy.stage(report.snapshot.facts)
        for notice in report.notices { inv.console.note(notice) }
        // The running session's own switch: `tv run --inspect` inspects whatever the setting
        // (a trial's screens said "off" beside a session inspecting).
        let session = (try? LiveSessionStatus.answer(home: home, timeoutSeconds: 2))?.values["inspection"]
        if inv.json {
            var fields: [(String, JSONValue)] = [("inspection", .string(enabled ? "on" : "off")),
                                                 ("sessionInspection", session.map(JSONValue.string) ?? .null),
                                                 ("trustStore", .string(report.store.description))]
            fields.append(("trust", report.snapshot.trust.map(SetupRendering.trustJSON) ?? .null))
            fields.append(("stage", SetupRendering.stageJSON(stage, dataDir: (try? inv.home().path) ?? "")))
            fields.append(("notices", .array(report.notices.map(JSONValue.string))))
            inv.console.line(JSONValue.object(fields).serialized(pretty: true))
        } else {
            inv.console.line("Inspection: \(enabled ? "on" : "off")")
            if let session, session != (enabled ? "on" : "off") {
                inv.console.line(session == "on"
                    ? "  the running session inspects anyway: it was started with --inspect (`tv inspect off` stops it too)"
                    : "  the running session does not inspect (its CA is in doubt or missing; `tv diag` says why)")
            }
            if let trust = report.snapshot.trust { for line in SetupRendering.trustLines(trust) { inv.console.line(line) } }
            for line in SetupRendering.stageLines(stage, dataDir: (try? inv.home().path) ?? "") { inv.console.line(line) }
            if enabled { for line in SetupText.whenOn(contentKept: report.record[SettingKeys.contentKeep]) { inv.console.line("  " + line) } }
        }
        return report.saveProblem == nil ? 0 : 1
    }
}
