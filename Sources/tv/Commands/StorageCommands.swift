import CommandLineParser
import ControlChannel
import FlowStore
import Recording
import Settings
import TVCore
import TVHome

/// `tv storage [show|apply|delete-everything|compact]`: what the history, the captures and the
/// decrypted content occupy beside their limits, applying the limits now, deleting everything,
/// and giving SQLite's free pages back.
enum StorageCommands {
    static let spec = CommandSpec(
        name: "storage", summary: "What tv's history, captures and decrypted content occupy, each beside its limit.",
        discussion: "Limits are settings: history.maxAge, captures.maxBytes, captures.maxAge (`tv settings set`), content.expiry and a fixed 512 MiB for decrypted content. They are applied when a session starts, every 10 minutes while it runs, whenever one is changed, and on `tv storage apply`. The capture file being recorded is never deleted. SQLite keeps the room of deleted rows for reuse, so the history's file does not shrink after a cleanup; `tv storage compact` gives it back.",
        options: [OptionSpec("json", help: "Print as JSON.")],
        subcommands: [
            CommandSpec(name: "show", summary: "Each store's size and limit, and the total (the default).",
                        options: [OptionSpec("json", help: "Print as JSON.")]),
            CommandSpec(name: "apply", summary: "Apply the limits now and say what went."),
            CommandSpec(name: "delete-everything", summary: "Delete the history, the captures and all decrypted content.",
                        discussion: "The capture file being recorded is spared and named. With a session running, the session does the deletion: it closes the content file it is writing so that goes too, and empties the history's write-ahead log; whatever stays (a file a running tv exec writes) is named. Without --yes on a terminal it asks first, naming what is lost.",
                        options: [OptionSpec("yes", help: "Do not ask for confirmation.")]),
            CommandSpec(name: "compact", summary: "Give the room of deleted history rows back to the file system.",
                        discussion: "The first compaction rewrites the file (VACUUM) and needs no session running; it also sets the file up so that later ones work while a session runs."),
        ],
        defaultSubcommand: "show")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "storage show": show, "storage apply": apply, "storage delete-everything": deleteEverything,
        "storage compact": compact,
    ]

    static func limits(_ inv: Invocation) throws -> StorageLimits {
        try StorageLimitsReading.limits(try inv.settingsStore().read())
    }

    static func show(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        let unsaved = try FlowCommands.askSessionToFlush(inv)
        let figures = try StorageFigures.read(home: home, limits: try limits(inv))
        if inv.json {
            inv.console.line(StoragePresentation.json(figures).adding([("unsavedFlows", UnsavedFlowsNotice.json(unsaved))]).serialized(pretty: true))
        } else {
            for line in StoragePresentation.lines(figures, now: inv.nowMicros, unsaved: unsaved) { inv.console.line(line) }
        }
        return 0
    }

    static func apply(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        let limits = try limits(inv)
        try FlowCommands.askSessionToFlush(inv)
        let outcome = try StorageManager.applyingLimits(home: home, limits: limits, now: FlowCommands.nowMicros())
        for line in StoragePresentation.applied(outcome) { inv.console.line(line) }
        return 0
    }

    /// The pass a changed limit runs when no session does: its lines (none when nothing went).
    static func applyAutomatically(_ inv: Invocation) throws -> [String] {
        let home = try inv.home()
        guard home.exists else { return [] }
        let limits = try limits(inv), now = FlowCommands.nowMicros()
        let manager = try StorageManager.opening(home: home, limits: limits, now: now)
        defer { manager.close() }
        let report = try manager.applyLimits(limits, recording: nil, now: now)
        return StoragePresentation.report(report, automatic: true)
    }

    static func deleteEverything(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        if !inv.yes {
            // What would go is said first, with a terminal or without (a script got only the refusal).
            let figures = try StorageFigures.read(home: home, limits: try limits(inv))
            for line in StoragePresentation.deletionWarning(figures) { inv.console.note(line) }
            guard inv.console.stdinIsTerminal else { throw StorageError.needsConfirmation }
            guard inv.console.confirm("Delete everything?") else {
                inv.console.line("Nothing was deleted.")
                return 1
            }
        }
        // A running session does it all itself: only it can close the content file it writes.
        if let answer = try LiveDeleteEverything.ask(home) {
            guard answer.ok else { throw UsageRefusal(TerminalText.line(answer.message), exitCode: 1) }
            for line in answer.message.split(separator: "\n", omittingEmptySubsequences: false) { inv.console.line(TerminalText.line(String(line))) }
            sharedCopyNote(inv)
            return 0
        }
        let now = FlowCommands.nowMicros()
        let manager = try StorageManager.opening(home: home, limits: try limits(inv), everything: true, now: now)
        defer { manager.close() }
        let report = try manager.deleteEverything(recording: nil, now: now)
        for line in StoragePresentation.deletedEverything(report, databaseFile: home.databasePath, session: false) { inv.console.line(line) }
        sharedCopyNote(inv)
        return 0
    }

    /// When this data folder's instance has written to a shared store, the sentence that the
    /// store keeps its copy, with the rows' instance id and the tables that hold them: a user
    /// deleting for privacy was not told that the metadata stayed in PostgreSQL (a trial), nor,
    /// for a session given `--store` with no `store.url` set, told anything (a later trial).
    static func sharedCopyNote(_ inv: Invocation) {
        guard let home = try? inv.existingHome(), let instance = InstanceIdentity.storedID(home),
              StoreHighestMark.read(home: home, instance: instance) != nil else { return }
        let url = (try? inv.settingsStore().read()[SettingKeys.storeURL]) ?? ""
        let which = url.isEmpty ? "The shared store this data folder's sessions wrote to (with --store)"
            : "The shared store at " + TerminalText.line((try? SharedStoreTarget(url).server) ?? SharedStoreTarget.redacted(url))
        inv.console.line("\(which) keeps its copy of this data folder's flows (metadata, no content) as instance \(instance); tv deletes nothing there: its owner can, with `DELETE FROM … WHERE instance_id = '\(instance)'` in \(sharedTables).")
    }

    /// The shared store's tables that hold an instance's rows, children first.
    static let sharedTables = "exchanges, flows, host_names, pinned_hosts, client_pins, audit_markers, audit_sessions and audit_projects"

    static func compact(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        let manager = try StorageManager(home: home)
        defer { manager.close() }
        let freed = try manager.compact(sessionRuns: ControlServer.isLive(path: SessionPaths.controlSocket(home)))
        inv.console.line(freed > 0 ? "Compacted the history: its file is \(Units.bytes(freed)) smaller."
                                   : "Compacted the history: there was no free room inside it to give back.")
        return 0
    }
}
