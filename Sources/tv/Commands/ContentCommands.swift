import CommandLineParser
import FlowStore
import Foundation
import Recording
import TVCore
import TVHome

/// `tv content status|delete`: what decrypted content occupies, and deleting all of it (index
/// and bytes together (a running session deletes through its own writer: `LiveContentDelete`), and that is said
/// before anything is deleted).
enum ContentCommands {
    static let spec = CommandSpec(
        name: "content", summary: "See or delete the decrypted content tv kept.",
        subcommands: [
            CommandSpec(name: "status", summary: "How much decrypted content is kept, and where (the default).",
                        options: [OptionSpec("json", help: "Print as JSON.")]),
            CommandSpec(name: "delete", summary: "Delete all decrypted content: the index and the bytes.",
                        discussion: "While a tv run session runs, it does the deleting itself: it closes the segment it writes first, so nothing of the content stays. The decrypted captures go too, but the one a session is writing (named; `tv content delete` again after the session stops deletes it), and the TLS secrets in packet captures are blanked (they let Wireshark read the inspected connections; the packets stay, encrypted), but in the one being recorded. Flows stay in the history; only their content goes.",
                        options: [OptionSpec("yes", help: "Do not ask for confirmation.")]),
        ],
        defaultSubcommand: "status")

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = [
        "content status": status, "content delete": delete,
    ]

    static func status(_ inv: Invocation) throws -> Int32 {
        let home = try inv.existingHome()
        let store = try ContentStore(readingHome: home)
        defer { store.close() }
        let usage = try store.usage()
        let captures = DecryptedCaptureFiles.summary(home: home), secrets = CaptureSecretsFiles.summary(home: home)
        if inv.json {
            inv.console.line(ContentUsagePresentation.json(usage, captures: captures, secrets: secrets).serialized(pretty: true))
        } else {
            for line in ContentUsagePresentation.lines(usage, captures: captures, secrets: secrets) { inv.console.line(line) }
        }
        return 0
    }

    static func delete(_ inv: Invocation) throws -> Int32 {
        // What a running session holds is written first, so it is counted and said (a turn
        // ended a moment ago read as "no decrypted content to delete").
        try FlowCommands.askSessionToFlush(inv)
        let home = try inv.existingHome()
        // Read through a store that works on a full disk, and the files go before the rows
        // (`deleteFilesFirst`): on a full disk the delete failed and freed nothing (a trial).
        let reader = try ContentStore(readingHome: home)
        defer { reader.close() }
        let usage = try reader.usage()
        let captures = DecryptedCaptureFiles.summary(home: home)
        let secrets = CaptureSecretsFiles.summary(home: home)
        guard usage.turns > 0 || !usage.segments.isEmpty || captures.files > 0 || secrets.files > 0 else {
            inv.console.line("There is no decrypted content to delete.")
            return 0
        }
        // A running session deletes it itself: only it can close the segment it writes.
        let bySession = LiveContentDelete.sessionRuns(home)
        for line in ContentUsagePresentation.deletionWarning(usage, captures: captures, secrets: secrets, bySession: bySession) { inv.console.note(line) }
        if !inv.yes {
            guard inv.console.stdinIsTerminal else {
                throw UsageRefusal("Deleting decrypted content needs confirmation; add --yes when running without a terminal.")
            }
            guard inv.console.confirm("Delete it?") else {
                inv.console.line("Nothing was deleted.")
                return 1
            }
        }
        if bySession, let answer = try LiveContentDelete.ask(home) {
            guard answer.ok else { throw UsageRefusal(answer.message, exitCode: 1) }
            inv.console.line(answer.message)
            return 0
        }
        let freed = try reader.deleteFilesFirst()
        reader.close()
        let store = try ContentStore(home: home)
        defer { store.close() }
        var report = try store.deleteAll()
        report.filesDeleted += freed.filesDeleted
        report.bytesFreed += freed.bytesFreed
        report.spared = report.spared ?? freed.spared
        let deleted = try DecryptedCaptureFiles.deleteAll(home: home)
        let blanked = try CaptureSecretsFiles.scrubAll(home: home)
        for line in ContentUsagePresentation.deletionReport(report, captures: deleted, secrets: blanked) { inv.console.line(line) }
        return 0
    }
}
