/// Renders `--help` for one command: usage line, summary, arguments, options, subcommands.
enum HelpText {
    /// - Parameters:
    ///   - program: the root command's name (`"tv"`).
    ///   - path: the subcommand words from the root to `command`.
    ///   - extraOptions: listed just before `--help` (the top level's `--version`).
    static func render(command: CommandSpec, program: String, path: [String], globalOptions: [OptionSpec],
                       extraOptions: [OptionSpec] = []) -> String {
        let invocation = ([program] + path).joined(separator: " ")
        var usage = "USAGE: " + invocation
        if !command.subcommands.isEmpty && command.positionals.isEmpty { usage += " <subcommand>" }
        usage += " [options]"
        for positional in command.positionals {
            let word = positional.name + (positional.variadic ? "…" : "")
            usage += positional.optional ? " [\(word)]" : " \(word)"
        }
        var lines = [usage, "", command.summary]
        if !command.discussion.isEmpty {
            lines += ["", command.discussion]
        }
        if !command.positionals.isEmpty {
            lines += ["", "ARGUMENTS:"]
            let width = command.positionals.map(\.name.count).max() ?? 0
            for p in command.positionals {
                lines.append("  " + pad(p.name, width) + "  " + p.help)
            }
        }
        let options = command.options + globalOptions + extraOptions + [OptionSpec("help", short: "h", help: "Show this help.")]
        let labels = options.map(label)
        let width = labels.map(\.count).max() ?? 0
        lines += ["", "OPTIONS:"]
        for (option, text) in zip(options, labels) {
            lines.append("  " + pad(text, width) + "  " + option.help)
        }
        if !command.subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"]
            let w = command.subcommands.map(\.name.count).max() ?? 0
            for sub in command.subcommands {
                lines.append("  " + pad(sub.name, w) + "  " + sub.summary)
            }
            lines += ["", "See '\(invocation) <subcommand> --help' for more."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func label(_ option: OptionSpec) -> String {
        var text = option.short.map { "-\($0), " } ?? "    "
        text += "--" + option.long
        if let value = option.valueName { text += " " + value }
        return text
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
