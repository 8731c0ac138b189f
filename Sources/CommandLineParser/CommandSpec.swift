/// The shape of one command of a command-line tool: its options, positionals and subcommands.
///
/// A tree of `CommandSpec` values describes the whole tool; `CommandLineParser.parse` walks it.
public struct CommandSpec: Sendable {
    /// The word that selects this command (`"create"` in `tv ca create`).
    public var name: String
    /// One line shown in the parent's list of subcommands.
    public var summary: String
    /// Paragraphs shown under the usage line of this command's `--help`.
    public var discussion: String
    /// Options this command takes (global options are added by the parser).
    public var options: [OptionSpec]
    /// Positional arguments, in order.
    public var positionals: [PositionalSpec]
    /// Subcommands; a command with subcommands and no positionals needs one of them, unless
    /// `defaultSubcommand` names the one to run when none is given (`tv pinned` = `tv pinned list`).
    public var subcommands: [CommandSpec]
    /// The subcommand run when none is named.
    public var defaultSubcommand: String?
    /// Everything after the first positional is a positional too, dashes included: the command
    /// runs another command line (`tv exec curl -sS URL`), like `env` and `sudo`.
    public var optionsEndAtFirstPositional = false
    /// Words that are no subcommand but name one with its options, as another tool spells it
    /// (`follow` → `flows --follow`): said instead of the nearest spelling when typed.
    public var pointers: [String: String] = [:]

    public init(name: String, summary: String, discussion: String = "", options: [OptionSpec] = [],
                positionals: [PositionalSpec] = [], subcommands: [CommandSpec] = [], defaultSubcommand: String? = nil) {
        self.defaultSubcommand = defaultSubcommand
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.subcommands = subcommands
    }
}

/// One `--long` option (with an optional `-s` short form); a flag when `valueName` is nil.
public struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes (`"key"` for `--key`).
    public var long: String
    /// The one-letter short form (`"o"` for `-o`), if any.
    public var short: Character?
    /// The placeholder for the value in help (`"TYPE"`); nil for a flag that takes no value.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// Whether the option may be given more than once (values are kept in order).
    public var repeatable: Bool
    /// The words a shell completes its value with (`regular`, `socks5` …); empty: file names.
    public var completions: [String]

    public init(_ long: String, short: Character? = nil, value: String? = nil, help: String, repeatable: Bool = false,
                completions: [String] = []) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
        self.completions = completions
    }

    /// Whether the option takes a value.
    public var takesValue: Bool { valueName != nil }
}

/// A positional argument: exactly one, optional, or a list (`variadic`) at the end.
public struct PositionalSpec: Sendable, Equatable {
    public var name: String
    public var help: String
    public var optional: Bool
    public var variadic: Bool
    /// The words a shell completes it with (`bash`, `zsh`, `fish`; setting names); empty: file
    /// names. Only a command's first positional is completed from its words.
    public var completions: [String]

    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false, completions: [String] = []) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
        self.completions = completions
    }
}
