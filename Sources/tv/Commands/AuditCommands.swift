import CommandLineParser
import ControlChannel
import FlowStore
import Foundation
import LocalCA
import TVCore
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// `tv audit …`: projects, sessions, markers, the evidence bundle and its verification (issue 23).
enum AuditCommands {
    static let json = FlowCommands.json
    static let yes = OptionSpec("yes", help: "Do not ask for confirmation (needed without a terminal).")

    static let spec = CommandSpec(
        name: "audit", summary: "Record audit sessions in projects, mark moments, and write evidence bundles anyone can check for damage.",
        discussion: "A session holds every flow first written while it records (by `tv run` or `tv exec`), with their packets, capture files and kept content; at most one records at a time. Its evidence is exempt from retention until the session is deleted.",
        subcommands: [
            CommandSpec(name: "project", summary: "Make or show a project.", subcommands: [
                CommandSpec(name: "new", summary: "Make a project.", options: [OptionSpec("note", value: "TEXT", help: "A note kept with it.")],
                            positionals: [PositionalSpec("NAME", help: "The project's name.")]),
                CommandSpec(name: "show", summary: "Show a project and its sessions.", options: [json],
                            positionals: [PositionalSpec("NAME", help: "The project's name.")]),
            ]),
            CommandSpec(name: "projects", summary: "List the projects.", options: [json]),
            CommandSpec(name: "start", summary: "Start recording a session of PROJECT (running `tv run` and `tv exec` sessions are told at once).",
                        options: [OptionSpec("note", value: "TEXT", help: "A note kept with the session.")],
                        positionals: [PositionalSpec("PROJECT", help: "The project's name.")]),
            CommandSpec(name: "stop", summary: "Stop the session recording."),
            CommandSpec(name: "mark", summary: "Put a marker in the live session, now.",
                        positionals: [PositionalSpec("TEXT", help: "What happened (\"opened the login screen\").", variadic: true)]),
            CommandSpec(name: "sessions", summary: "List sessions (of PROJECT).", options: [json],
                        positionals: [PositionalSpec("PROJECT", help: "Only this project's.", optional: true)]),
            CommandSpec(name: "show", summary: "Show a session: span, flows, hosts, programs, bytes, markers.", options: [json],
                        positionals: [PositionalSpec("SESSION", help: "The session's id.")]),
            CommandSpec(name: "delete", summary: "Delete a session's record and markers; its evidence then ages under retention.", options: [yes],
                        positionals: [PositionalSpec("SESSION", help: "The session's id.")]),
            CommandSpec(name: "bundle", summary: "Write a session's evidence as one verifiable archive (.tar.gz).",
                        discussion: "Holds manifest.json (every file's size and SHA-256, tv's version, the CA's fingerprint, the machine, the span, the settings), project.json, session.json, markers.json, flows.json (as `tv flows --json`, with each server's certificate chain; connections open since before the session began are there too, marked carriedIntoSession), packets.pcapng (the captured packets of the span with the TLS secrets), keys.log, and with content decrypted.pcapng, requests.har and content/ (the kept turns): captures, requests and turns only from within the span. On a terminal it says what is inside and asks first. The file is written whole or not at all (0600).",
                        options: [OptionSpec("output", short: "o", value: "FILE", help: "The archive to write (required; - writes it to standard output)."),
                                  OptionSpec("no-content", help: "Leave decrypted content out (turns, HAR, decrypted capture)."),
                                  OptionSpec("no-keys", help: "Leave TLS secrets out (keys.log and the pcapng's secrets)."),
                                  yes],
                        positionals: [PositionalSpec("SESSION", help: "The session's id.")]),
            CommandSpec(name: "verify", summary: "Check a bundle's files against its manifest: intact, or which file is not.",
                        discussion: "Exit status: 0 intact; 1 not intact (a file changed, missing or unlisted, a name held twice or unsafe, bytes appended, the archive cut or damaged, or the manifest's seal taken out); 2 nothing could be checked (the file cannot be read, or its bundle format is newer than this tv).",
                        positionals: [PositionalSpec("FILE", help: "The bundle; - reads it from standard input.")]),
        ])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "audit project new": projectNew, "audit project show": projectShow, "audit projects": projects,
        "audit start": start, "audit stop": stop, "audit mark": mark, "audit sessions": sessions,
        "audit show": show, "audit delete": delete, "audit bundle": bundle, "audit verify": verify,
    ]

    /// The store of an existing data folder: every audit command but `project new` needs what
    /// one holds (a project, a session), so a mistyped `--data-dir` is said, not made (a trial's
    /// `tv audit sessions` made one and answered "No audit sessions").
    static func writableStore(_ inv: Invocation) throws -> FlowStore { try FlowStore(home: try inv.existingHome()) }

    static func sessionID(_ inv: Invocation) throws -> Int64 {
        let text = inv.command.positionals.first ?? ""
        guard let id = Int64(text), id > 0 else { throw UsageRefusal("'\(text)' is not a session id; `tv audit sessions` lists them.") }
        return id
    }

    static func projectNew(_ inv: Invocation) throws -> Int32 {
        let store = try FlowStore(home: try inv.home())
        defer { store.close() }
        let p = try store.audit.newProject(name: inv.command.positionals.first ?? "", note: inv.command.value("note") ?? "",
                                           now: FlowCommands.nowMicros())
        // A name that starts with '-' reads as an option unless after `--` (a trial's hint failed).
        let word = (p.name.hasPrefix("-") ? "-- " : "") + ShellWord.quote(p.name)
        inv.console.line("Made project '\(TerminalText.line(p.name))'; `tv audit start \(TerminalText.line(word))` records a session in it.")
        return 0
    }

    static func projects(_ inv: Invocation) throws -> Int32 {
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let list = try store.audit.projects()
        if inv.json { inv.console.line(JSONValue.array(list.map(AuditPresentation.json)).serialized(pretty: true)); return 0 }
        for line in AuditPresentation.projects(list) { inv.console.line(line) }
        return 0
    }

    static func projectShow(_ inv: Invocation) throws -> Int32 {
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let name = inv.command.positionals.first ?? ""
        guard let p = try store.audit.project(named: name) else { throw AuditError.noProject(name) }
        let list = try store.audit.sessions(project: name)
        if inv.json {
            inv.console.line(JSONValue.object([("project", AuditPresentation.json(p)),
                                               ("sessions", .array(list.map(AuditPresentation.json)))]).serialized(pretty: true))
            return 0
        }
        for line in AuditPresentation.projects([p]) { inv.console.line(line) }
        for line in AuditPresentation.sessions(list, now: FlowCommands.nowMicros(), project: name) { inv.console.line("  " + line) }
        return 0
    }

    /// The running `tv run`'s mode and settings, asked over its control socket; nil when none runs.
    static func liveRunSettings(_ home: TVHome) -> [String: String]? {
        guard let client = try? ControlClient(path: SessionPaths.controlSocket(home)),
              let answer = try? client.send(ControlRequest(command: "status"), timeoutSeconds: 2), answer.ok else { return nil }
        var settings: [String: String] = [:]
        for key in AuditRecording.settingsKeys { if let v = answer.values[key] { settings[key] = v } }
        return settings
    }

    static func start(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        if let closed = AuditRecording.closeAbandoned(home: home) { inv.console.note(closed) }
        let run = liveRunSettings(home)
        let session = try AuditRecording.start(home: home, project: inv.command.positionals.first ?? "",
                                               note: inv.command.value("note") ?? "", settings: run ?? [:],
                                               now: FlowCommands.nowMicros())
        // The running sessions (`tv run`, each `tv exec`) follow its key log from now.
        inv.console.line(AuditPresentation.started(session, told: AuditKeysNotifier.tellAll(home: home)))
        return 0
    }

    static func stop(_ inv: Invocation) throws -> Int32 {
        // A session whose `tv run --audit` was killed ends where its recording did, not now (a
        // trial's span grew past the kill); that is the stop asked for.
        if let closed = AuditRecording.closeAbandoned(home: try inv.existingHome()) {
            inv.console.line(closed)
            return 0
        }
        // What a running session holds is written before the end is set.
        try? FlowCommands.askSessionToFlush(inv)
        let store = try writableStore(inv)
        defer { store.close() }
        let session = try store.audit.stop(now: FlowCommands.nowMicros())
        // Ended first, then told: the running sessions read that none records and close its key log.
        let told = AuditKeysNotifier.tellAll(home: try inv.existingHome())
        inv.console.line(AuditPresentation.stopped(session, summary: try store.audit.summary(session: session.id), told: told))
        return 0
    }

    static func mark(_ inv: Invocation) throws -> Int32 {
        // A session whose `tv run --audit` was killed takes no more markers: it is closed first
        // (a trial marked one after the kill, and the session's span grew to hold it).
        if let closed = AuditRecording.closeAbandoned(home: try inv.existingHome()) { inv.console.note(closed) }
        let store = try writableStore(inv)
        defer { store.close() }
        let marker = try store.audit.mark(inv.command.positionals.joined(separator: " "), now: FlowCommands.nowMicros())
        inv.console.line(AuditPresentation.marked(marker))
        return 0
    }

    static func sessions(_ inv: Invocation) throws -> Int32 {
        // Not "recording now" for a session whose `tv run --audit` is gone (a re-check).
        if let closed = AuditRecording.closeAbandoned(home: try inv.existingHome()) { inv.console.note(closed) }
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let list = try store.audit.sessions(project: inv.command.positionals.first)
        if inv.json { inv.console.line(JSONValue.array(list.map(AuditPresentation.json)).serialized(pretty: true)); return 0 }
        for line in AuditPresentation.sessions(list, now: FlowCommands.nowMicros(), project: inv.command.positionals.first) { inv.console.line(line) }
        return 0
    }

    static func show(_ inv: Invocation) throws -> Int32 {
        let id = try sessionID(inv)
        if let closed = AuditRecording.closeAbandoned(home: try inv.existingHome()) { inv.console.note(closed) }
        try FlowCommands.askSessionToFlush(inv)
        let store = try FlowCommands.openStoreForReading(inv)
        defer { store.close() }
        let session = try store.audit.session(id)
        let summary = try store.audit.summary(session: id)
        let markers = try store.audit.markers(session: id)
        if inv.json {
            inv.console.line(JSONValue.object([
                ("session", AuditPresentation.json(session)), ("flows", .int(Int64(summary.flows))),
                ("bytesUp", .int(summary.bytesUp)), ("bytesDown", .int(summary.bytesDown)),
                ("hosts", .array(summary.hosts.map { .object([("name", .string($0.name ?? "")), ("flows", .int(Int64($0.flows)))]) })),
                ("programs", .array(summary.programs.map { .object([("name", $0.name.map(JSONValue.string) ?? .null), ("flows", .int(Int64($0.flows)))]) })),
                ("packets", .int(Int64(summary.packets))), ("captures", .array(summary.captures.map { .int(Int64($0)) })),
                ("contentTurns", .int(Int64(summary.contentTurns))), ("markers", .array(markers.map(AuditPresentation.json))),
            ]).serialized(pretty: true))
            return 0
        }
        for line in AuditPresentation.show(session, summary: summary, markers: markers, now: FlowCommands.nowMicros()) { inv.console.line(line) }
        return 0
    }

    static func delete(_ inv: Invocation) throws -> Int32 {
        let id = try sessionID(inv)
        let store = try writableStore(inv)
        defer { store.close() }
        let session = try store.audit.session(id)
        if session.isLive { throw AuditError.deleteLive(id) }
        if !inv.yes {
            // What stops being evidence is said first, with a terminal or without (a trial's
            // script got only "add --yes").
            inv.console.note(AuditPresentation.deletionQuestion(session, summary: try store.audit.summary(session: id)))
            guard inv.console.stdinIsTerminal else {
                throw UsageRefusal("Nothing was deleted: with no terminal to ask on, add --yes to delete it.")
            }
            guard inv.console.confirm("Delete it?") else { inv.console.note("Nothing was deleted."); return 1 }
        }
        inv.console.line(AuditPresentation.deleted(try store.audit.delete(session: id)))
        // Its key log (both legs' secrets) goes with it.
        unlink(AuditKeyLog.path(home: try inv.existingHome(), session: id))
        return 0
    }

    static func bundle(_ inv: Invocation) throws -> Int32 {
        let c = inv.command
        guard let output = c.value("output") else {
            throw UsageRefusal("`tv audit bundle` needs -o FILE: the bundle can carry decrypted content and keys, so it goes to a file you name.")
        }
        let file = try inv.outputFile(output)
        if file == .standardOutput && inv.console.stdoutIsTerminal {
            throw UsageRefusal("The bundle is a gzip archive and standard output is a terminal; write it with -o FILE or redirect it.", exitCode: 1)
        }
        let id = try sessionID(inv)
        let home = try inv.existingHome()
        try FlowCommands.askSessionToFlush(inv)
        let request = EvidenceBundleRequest(session: id, includeContent: !c.has("no-content"), includeKeys: !c.has("no-keys"),
                                            tvVersion: TVVersion.number, machine: machineName(), now: FlowCommands.nowMicros())
        let bundle = try EvidenceBundle.gather(home: home, request: request)
        if !inv.yes {
            // What the bundle holds is said first, with a terminal or without.
            let replacing = file.path.map { FileManager.default.fileExists(atPath: $0) } ?? false
            for line in AuditPresentation.bundleContents(bundle, file: file, replacing: replacing) { inv.console.note(line) }
            guard inv.console.stdinIsTerminal else {
                throw UsageRefusal("Nothing was written: with no terminal to ask on, pass --yes to write it (and --no-content / --no-keys to leave those out).")
            }
            guard inv.console.confirm("Write it?") else { inv.console.note("Nothing was written."); return 1 }
        }
        try bundle.write(to: file, output: inv.console)
        let written = AuditPresentation.bundleWritten(bundle, file: file)
        // Standard output holds the archive alone: the sentence goes beside it.
        if file == .standardOutput { inv.console.note(written) } else { inv.console.line(written) }
        return 0
    }

    static func verify(_ inv: Invocation) throws -> Int32 {
        let file = inv.command.positionals.first ?? ""
        let verdict = BundleVerifier.verify(path: file)
        inv.console.line(verdict.sentence(file: file == "-" ? "The bundle on standard input" : file))
        return verdict.exitCode
    }

    /// This machine's name (gethostname(2)).
    static func machineName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(cString: name)
    }
}
