import CommandLineParser

/// The whole command tree of `tv`, and which function runs each command.
enum CommandTree {
    static let globalOptions: [OptionSpec] = [
        OptionSpec("data-dir", value: "DIR", help: "Data folder (default $TV_HOME, else $XDG_DATA_HOME/tunnelvision, else ~/.local/share/tunnelvision)."),
    ]

    static let root = CommandSpec(
        name: "tv",
        summary: "TunnelVision: see which servers your machine talks to, and what your own TLS connections say.",
        discussion: "Everything stays on this machine: no account, no upload, no telemetry.",
        subcommands: [CACommands.spec, FlowCommands.flowsSpec, FlowCommands.flowSpec, FlowCommands.pinnedSpec,
                      TurnsCommand.spec, ContentCommands.spec, ExportCommands.spec]
    )

    /// Handlers by command path (`"ca create"`); each returns the exit code.
    static let handlers: [String: @Sendable (Invocation) throws -> Int32] =
        CACommands.handlers.merging(FlowCommands.handlers) { a, _ in a }
            .merging(TurnsCommand.handlers) { a, _ in a }
            .merging(ContentCommands.handlers) { a, _ in a }
            .merging(ExportCommands.handlers) { a, _ in a }
}
