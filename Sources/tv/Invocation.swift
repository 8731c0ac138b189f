import CommandLineParser
import Foundation
import TVHome

/// Everything a command needs: what was parsed, the environment, where to write, and the clock.
struct Invocation {
    let command: ParsedCommand
    let environment: [String: String]
    let console: Console
    /// Microseconds since 1970-01-01 UTC, read once per invocation.
    let nowMicros: Int64
    /// The same in whole seconds.
    var now: Int64 { nowMicros / 1_000_000 }

    init(command: ParsedCommand, environment: [String: String], console: Console, nowMicros: Int64 = Int64(Date().timeIntervalSince1970 * 1_000_000)) {
        self.command = command
        self.environment = environment
        self.console = console
        self.nowMicros = nowMicros
    }

    /// The columns of the terminal standard output is, nil when it is not one (piped output is
    /// never fitted to a width).
    var terminalColumns: Int? {
        console.stdoutIsTerminal ? Terminal.size(environment: environment)?.columns : nil
    }

    /// The data folder, from `--data-dir`, `TV_HOME`, `XDG_DATA_HOME` or `HOME`, refused when
    /// another user could change it (`TVHome.checkTrust`).
    func home() throws -> TVHome {
        let home = try TVHome.resolve(dataDir: command.value("data-dir"), environment: environment)
        try home.checkTrust()
        return home
    }

    /// The data folder for a command that only reads: it must exist already, so a typo'd
    /// `--data-dir` is said instead of silently made.
    /// - Throws: `TVHomeError.missing` ("There is no data folder at PATH yet; …"), `.noHome`, or
    ///   as `TVHome.checkTrust`.
    func existingHome() throws -> TVHome {
        try TVHome.resolve(dataDir: command.value("data-dir"), environment: environment).requireExisting()
    }

    /// Whether `--json` was given.
    var json: Bool { command.has("json") }
    /// Whether `--yes` was given.
    var yes: Bool { command.has("yes") }
}

/// A refusal from the command line layer itself (consent missing, conflicting options).
struct UsageRefusal: UserFacingError {
    let message: String
    let exitCode: Int32
    init(_ message: String, exitCode: Int32 = 2) {
        self.message = message
        self.exitCode = exitCode
    }
}
