import CommandLineParser
import FlowStore
import Foundation
import TVCore
import TVHome
import Tunnel

// `tv`: parse, dispatch, print one sentence on error. Exit codes: 0 done, 1 refused or failed,
// 2 the command line cannot be run as typed.
let console = Console()
let parser = CommandTree.parser
// A migration over a large history is said before it runs (it can take seconds).
FlowSchema.migrationNotice.withLock {
    $0 = { path, bytes, from, to in Console().note("tv: " + MigrationNotice.sentence(path: path, bytes: bytes, from: from, to: to)) }
}
let arguments = Array(CommandLine.arguments.dropFirst())
// `tv exec`'s guard of its namespace (`ExecNamespaceGuard`): no command line of the user's.
if arguments.first == ExecNamespaceGuard.command { ExecNamespaceGuard.run(Array(arguments.dropFirst())) }

// The data folder of the command run, for a full disk's way on (`DataFolderHoldings`).
var dataFolder: TVHome?

do {
    switch try parser.parse(arguments) {
    case .help(_, let text), .version(let text):
        console.out(text)
        // As for every command: text that did not reach standard output is no success (a re-check).
        if let failure = console.standardOutputFailure {
            console.note("tv: " + StandardOutputWriteError(code: failure).message)
            exit(1)
        }
        exit(0)
    case .run(let parsed):
        guard let handler = CommandTree.handlers[parsed.path.joined(separator: " ")] else {
            console.out(parser.help(for: parsed.path) ?? "")
            exit(2)
        }
        let invocation = Invocation(command: parsed, environment: ProcessInfo.processInfo.environment, console: console)
        dataFolder = try? TVHome.resolve(dataDir: parsed.value("data-dir"), environment: invocation.environment)
        let code = try handler(invocation)
        // A result that did not all reach standard output (a full disk behind `>`) is not a
        // success, whatever the command concluded from what it wrote.
        if code == 0, let failure = console.standardOutputFailure {
            console.note("tv: " + StandardOutputWriteError(code: failure).message)
            exit(1)
        }
        exit(code)
    }
} catch let error as CommandLineError {
    console.note("tv: " + error.message)
    exit(error.exitCode)
} catch let error as UserFacingError {
    // A full disk's way on follows what the data folder holds (it named `tv content delete`
    // where there was no content: trial 44); "tv: " names the speaker; a message that already
    // starts with "tv " does not repeat it.
    let message = (error as? DataFolderFullSaying).flatMap { full in
        dataFolder.flatMap { full.fullDiskMessage(wayOn: DataFolderHoldings.wayOn(home: $0)) }
    } ?? error.message
    console.note(message.hasPrefix("tv ") ? message : "tv: " + message)
    exit(error.exitCode)
} catch {
    console.note("tv: unexpected error: \(error); please report it with the command you ran.")
    exit(1)
}
