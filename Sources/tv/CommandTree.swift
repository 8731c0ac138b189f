import CertificateSetup
import CommandLineParser
import LocalCA

/// The whole command tree of `tv`, and which function runs each command.
enum CommandTree {
    static let globalOptions: [OptionSpec] = [
        OptionSpec("data-dir", value: "DIR", help: "Data folder (default $TV_HOME, else $XDG_DATA_HOME/tunnelvision, else ~/.local/share/tunnelvision)."),
    ]

    static let root = withValueWords(pointing(CommandSpec(
        name: "tv",
        summary: "TunnelVision: see which servers your machine talks to, and what your own TLS connections say.",
        discussion: "Everything stays on this machine: no account, no upload, no telemetry.",
        subcommands: [RunCommands.runSpec, ExecCommand.spec, RunCommands.statusSpec, RunCommands.stopSpec, DiagCommand.spec, TopCommand.spec, RunCommands.introSpec,
                      caSpec, SetupCommand.spec, InspectCommands.spec, SettingsCommands.spec,
                      FlowCommands.flowsSpec, FlowCommands.flowSpec, ActivityCommand.spec, FlowCommands.pinnedSpec,
                      RequestCommands.requestsSpec, RequestCommands.requestSpec,
                      CaptureCommands.packetsSpec, PacketCommand.spec, CaptureCommands.capturesSpec,
                      TurnsCommand.spec, ContentCommands.spec, StorageCommands.spec, SharedStoreCommands.spec, ExportCommands.spec,
                      AuditCommands.spec, WebCommand.spec, ServiceCommand.spec, DocCommands.manSpec, DocCommands.completionsSpec, TVVersion.spec]
    )))

    /// The words other tools use for what tv spells otherwise (a trial's `tv follow` was told
    /// "did you mean 'tv flow'").
    static func pointing(_ spec: CommandSpec) -> CommandSpec {
        var spec = spec
        spec.pointers = ["follow": "flows --follow", "tail": "flows --follow", "log": "flows --follow",
                         "dashboard": "top", "ui": "web", "start": "run", "list": "flows"]
        return spec
    }

    /// The words an option's value completes to, by what the value is (one list each, wherever
    /// the option appears): key types, trust stores, platforms. A trial found `--key`,
    /// `--leaf-key`, `--platform` and `--trust-store` completing file names.
    static func valueWords(_ option: OptionSpec) -> [String]? {
        switch (option.long, option.valueName) {
        case ("key", "TYPE"?), ("leaf-key", "TYPE"?): return KeyType.allCases.map(\.name)
        case ("trust-store", _): return ["system", "file:", "dir:", "nss:"]
        case ("platform", _): return TrustTarget.platformNames
        default: return nil
        }
    }

    /// `spec` with `valueWords` given to every option that has none, through the whole tree.
    static func withValueWords(_ spec: CommandSpec) -> CommandSpec {
        var spec = spec
        for i in spec.options.indices where spec.options[i].completions.isEmpty {
            if let words = valueWords(spec.options[i]) { spec.options[i].completions = words }
        }
        spec.subcommands = spec.subcommands.map(withValueWords)
        return spec
    }

    /// The parser of the whole tree (`--help`, `tv man`, `tv completions` all read it).
    static let parser = CommandLineParser(root: root, globalOptions: globalOptions, version: TVVersion.line)

    /// `tv ca`: the CA toolchain's commands, with `status`/`show` asking the trust store too, and
    /// `trust`, `remake`, `remove` from the setup flow.
    static let caSpec: CommandSpec = {
        var spec = CACommands.spec
        for i in spec.subcommands.indices {
            switch spec.subcommands[i].name {
            case "status": spec.subcommands[i].summary = CAStatusCommand.statusSummary
            case "show": spec.subcommands[i].summary = CAStatusCommand.showSummary
            default: continue
            }
            spec.subcommands[i].options = CAStatusCommand.options
        }
        spec.subcommands += [CATrustCommand.spec, CARemakeCommand.spec, CARemoveCommand.spec]
        return spec
    }()

    /// Handlers by command path (`"ca create"`); each returns the exit code.
    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = CACommands.handlers
        .merging([
            "ca status": CAStatusCommand.run,
            "ca show": CAStatusCommand.run,
            "ca trust": CATrustCommand.run,
            "ca remake": CARemakeCommand.run,
            "ca remove": CARemoveCommand.run,
            "setup": SetupCommand.run,
        ]) { _, new in new }
        .merging(InspectCommands.handlers) { _, new in new }
        .merging(FlowCommands.handlers) { _, new in new }
        .merging(RequestCommands.handlers) { _, new in new }
        .merging(CaptureCommands.handlers) { _, new in new }
        .merging(PacketCommand.handlers) { _, new in new }
        .merging(TurnsCommand.handlers) { _, new in new }
        .merging(ContentCommands.handlers) { _, new in new }
        .merging(StorageCommands.handlers) { _, new in new }
        .merging(SharedStoreCommands.handlers) { _, new in new }
        .merging(ExportCommands.handlers) { _, new in new }
        .merging(RunCommands.handlers) { _, new in new }
        .merging(ExecCommand.handlers) { _, new in new }
        .merging(SettingsCommands.handlers) { _, new in new }
        .merging(["version": TVVersion.run]) { _, new in new }
        .merging(DiagCommand.handlers) { _, new in new }
        .merging(TopCommand.handlers) { _, new in new }
        .merging(ActivityCommand.handlers) { _, new in new }
        .merging(AuditCommands.handlers) { _, new in new }
        .merging(WebCommand.handlers) { _, new in new }
        .merging(ServiceCommand.handlers) { _, new in new }
        .merging(DocCommands.handlers) { _, new in new }
}
