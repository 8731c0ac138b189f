import CertificateSetup
import CommandLineParser
import LocalCA
import SetupActions
import Settings
import TrustStore
import TVHome

/// `tv ca status` (and `show`): the CA's facts, then for each trust store both answers, the setup
/// stage and whether inspection is on — asked now, turning inspection off when the root stopped
/// being usable.
enum CAStatusCommand {
    /// `tv ca status` in the `tv ca` list and its help.
    static let statusSummary = "Say whether a CA exists, whether each trust store has it and trusts it for TLS, and the setup stage."
    /// `tv ca show`: the same report, described for what someone asking to see the CA looks for.
    static let showSummary = "Show the CA's root (subject, key, validity, serial, fingerprints, file), whether each trust store has it and trusts it for TLS, and the setup stage."

    static let options = [
        OptionSpec("trust-store", value: "STORE", help: "Trust store to ask (repeatable): system, file:PATH, dir:PATH or nss:DIR (default: the saved trust.store).", repeatable: true),
        OptionSpecs.json,
    ]

    static func run(_ inv: Invocation) throws -> Int32 {
        let home = try inv.home()
        // Nothing here writes; a missing data folder is said (a typo'd --data-dir) and the answer follows.
        if !home.exists { inv.console.note(TVHomeError.missing(path: home.path).message) }
        let folder = CAFolder(home: home)
        let settings = try inv.settingsStore()
        var notices: [String] = []
        var report: InspectionGuard.Report?
        var exitCode: Int32 = 0
        do {
            report = try InspectionGuard.recheck(home: home, settings: settings, environment: inv.environment, now: inv.now)
            notices += report!.notices
            if report!.saveProblem != nil { exitCode = 1 }
        } catch let error as UserFacingError {
            notices.append(error.message)
        }
        let given = try inv.command.values("trust-store").map(TrustStoreSpec.init(parsing:))
        let stores = given.isEmpty ? [report?.store ?? .system] : given
        let enabled = report?.record[SettingKeys.inspectionEnabled]
        var snapshots: [SetupSnapshot] = []
        for store in stores {
            if let report, report.store == store { snapshots.append(report.snapshot) }
            else {
                let snapshot = SetupSnapshot.read(home: home, store: store, inspectionEnabled: enabled ?? false,
                                                  environment: inv.environment, now: inv.now)
                // The read that made a new leaf key says so (the settings could not be read first).
                if let remade = snapshot.leafKeyNotice { notices.append(remade) }
                snapshots.append(snapshot)
            }
        }
        let caReport = CAStatusReport(state: snapshots[0].caState, folder: folder)
        if caReport.state == .doubt || caReport.rootProblem(now: inv.now) != nil { exitCode = 1 }
        let stage = CertificateSetupPolicy.stage(snapshots[0].facts)
        // Whatever is in doubt exits 1, as a CA in doubt does (an unreadable trust store said
        // "Something is in doubt (failed)" and exited 0: a trial).
        if stage.step == .closedDoor { exitCode = 1 }
        for notice in notices { inv.console.note(notice) }

        if inv.json {
            var fields = caReport.jsonFields()
            fields.append(("inspection", enabled.map { .string($0 ? "on" : "off") } ?? .string("unknown")))
            fields.append(("stores", .array(snapshots.compactMap { $0.trust.map(SetupRendering.trustJSON) })))
            fields.append(("stage", SetupRendering.stageJSON(stage, dataDir: (try? inv.home().path) ?? "")))
            fields.append(("notices", .array(notices.map(JSONValue.string))))
            inv.console.line(JSONValue.object(fields).serialized(pretty: true))
            return exitCode
        }
        for line in caReport.lines(now: inv.now) { inv.console.line(line) }
        inv.console.line("")
        for snapshot in snapshots {
            if let trust = snapshot.trust { for line in SetupRendering.trustLines(trust) { inv.console.line(line) } }
        }
        inv.console.line("Inspection: \(enabled.map { $0 ? "on" : "off" } ?? "unknown (the settings cannot be read)")")
        for line in SetupRendering.stageLines(stage, dataDir: (try? inv.home().path) ?? "") { inv.console.line(line) }
        return exitCode
    }
}
