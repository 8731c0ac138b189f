import TVHome
/// What a command line asked for: run a command, or show a help text.
public enum ParseOutcome: Sendable, Equatable {
    case run(ParsedCommand)
    /// The help text of the command at `path`, to print to standard output (exit 0).
    case help(path: [String], text: String)
    /// `--version` at the top level: the version line to print to standard output (exit 0).
    case version(String)
}

/// A command line resolved against a `CommandSpec` tree.
public struct ParsedCommand: Sendable, Equatable {
    /// The subcommand words from the root, e.g. `["ca", "create"]`.
    public var path: [String]
    /// Option values by long name, in the order given (flags hold an empty list entry per use).
    public var options: [String: [String]]
    /// Positional arguments, including everything after `--`.
    public var positionals: [String]

    public init(path: [String], options: [String: [String]] = [:], positionals: [String] = []) {
        self.path = path
        self.options = options
        self.positionals = positionals
    }

    /// The last value given for `--long`, if any.
    public func value(_ long: String) -> String? { options[long]?.last }
    /// Every value given for a repeatable `--long`.
    public func values(_ long: String) -> [String] { options[long] ?? [] }
    /// Whether `--long` was given.
    public func has(_ long: String) -> Bool { options[long] != nil }
}

/// A command line that cannot be run as typed; printed as one sentence, exit code 2.
public struct CommandLineError: Error, Sendable, Equatable {
    /// One sentence naming what is wrong and where to look.
    public var message: String
    public init(_ message: String) { self.message = message }
    public var exitCode: Int32 { 2 }
}

/// Parses command lines against a `CommandSpec` tree.
///
/// Rules: subcommand words come first; options may follow in any order with positionals;
/// `--name=value` and `--name value` are the same; `--` ends options; `-h`/`--help` anywhere
/// before `--` asks for the help of the deepest command named so far. `PROGRAM help [WORD…]`
/// asks for the help of the command those words name (`tv help ca issue`), and the bare program
/// name, with no subcommand word, for the top-level help. Unknown options, missing values,
/// unknown words (with a "did you mean" when one is close) and surplus positionals are
/// `CommandLineError`s (exit code 2).
public struct CommandLineParser: Sendable {
    public let root: CommandSpec
    /// Options every command accepts (e.g. `--data-dir`).
    public let globalOptions: [OptionSpec]
    /// The line `--version` prints (`"tv 0.1"`), or nil when the program has no `--version`.
    /// It is taken only before any subcommand word, and listed in the top-level help.
    public let version: String?

    public init(root: CommandSpec, globalOptions: [OptionSpec] = [], version: String? = nil) {
        self.root = root
        self.globalOptions = globalOptions
        self.version = version
    }

    /// Parses `arguments` (without the program name).
    /// - Throws: `CommandLineError` when the line cannot be run as typed.
    public func parse(_ arguments: [String]) throws -> ParseOutcome {
        var command = root
        var path: [String] = []
        var index = 0
        // Subcommand words first; options may sit between them (e.g. `tv --data-dir X ca create`).
        var options: [String: [String]] = [:]
        var positionals: [String] = []
        var afterDoubleDash = false
        var wantsHelp = false
        var wantsVersion = false
        // The words after `help` at the top level, once `help` was given there.
        var helpWords: [String]?

        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if afterDoubleDash || (command.optionsEndAtFirstPositional && !positionals.isEmpty) {
                positionals.append(arg)
                continue
            }
            if arg == "--" {
                afterDoubleDash = true
                continue
            }
            if arg == "--help" || arg == "-h" {
                wantsHelp = true
                continue
            }
            if arg == "--version", version != nil, path.isEmpty {
                wantsVersion = true
                continue
            }
            // A dash and a digit is a value (`-5d`, `-1`), never an option: no option is a
            // digit, and the command then says what it takes instead of "has no option -5d".
            if arg.hasPrefix("-") && arg.count > 1 && !arg.dropFirst().first!.isASCIIDigit {
                let spec: OptionSpec, inlineValue: String?
                do {
                    (spec, inlineValue) = try resolveOption(arg, in: command, path: path)
                } catch let error as CommandLineError {
                    // An option of the default subcommand given to its parent (`tv content --json`
                    // runs `tv content status --json`): the parent runs that subcommand, so it
                    // takes that subcommand's options too.
                    guard positionals.isEmpty, let fallback = command.defaultSubcommand,
                          let sub = command.subcommands.first(where: { $0.name == fallback }),
                          let found = try? resolveOption(arg, in: sub, path: path + [fallback]) else { throw error }
                    (spec, inlineValue) = found
                    command = sub
                    path.append(fallback)
                }
                if spec.takesValue {
                    var value = inlineValue
                    if value == nil {
                        guard index < arguments.count else {
                            throw CommandLineError("Option --\(spec.long) needs a value (\(spec.valueName!)); see '\(display(path)) --help'.")
                        }
                        value = arguments[index]
                        index += 1
                    }
                    if !spec.repeatable, options[spec.long] != nil {
                        throw CommandLineError("Option --\(spec.long) was given twice; give it once.")
                    }
                    options[spec.long, default: []].append(value!)
                } else {
                    if inlineValue != nil {
                        throw CommandLineError("Option --\(spec.long) takes no value; write it alone.")
                    }
                    options[spec.long, default: []].append("")
                }
                continue
            }
            if helpWords != nil {
                helpWords!.append(arg)
                continue
            }
            if path.isEmpty, positionals.isEmpty, arg == Self.helpWord, !root.subcommands.contains(where: { $0.name == arg }) {
                helpWords = []
                continue
            }
            if positionals.isEmpty, !command.subcommands.isEmpty {
                guard let sub = command.subcommands.first(where: { $0.name == arg }) else {
                    if wantsHelp { break }
                    throw notACommand(arg, under: command, path: path)
                }
                // Options given before a subcommand must belong to the subcommand too.
                command = sub
                path.append(arg)
                continue
            }
            positionals.append(arg)
        }

        if var words = helpWords {
            // `tv help help`: the help of `help` is the top level's, which says what it does (it
            // read "'tv help' is not a command" of a command the list names: a trial).
            if words.first == Self.helpWord, !root.subcommands.contains(where: { $0.name == Self.helpWord }) { words.removeFirst() }
            var target = root
            for (depth, word) in words.enumerated() {
                guard let sub = target.subcommands.first(where: { $0.name == word }) else {
                    throw notACommand(word, under: target, path: Array(words.prefix(depth)))
                }
                target = sub
            }
            return .help(path: words, text: render(target, path: words))
        }
        if wantsHelp {
            return .help(path: path, text: render(command, path: path))
        }
        if wantsVersion, let version { return .version(version + "\n") }
        if path.isEmpty, positionals.isEmpty, !root.subcommands.isEmpty, root.positionals.isEmpty, root.defaultSubcommand == nil {
            // The bare program name: what it can do.
            return .help(path: [], text: render(root, path: []))
        }
        if !command.subcommands.isEmpty && command.positionals.isEmpty,
           let fallback = command.defaultSubcommand, let sub = command.subcommands.first(where: { $0.name == fallback }) {
            command = sub
            path.append(fallback)
        }
        if !command.subcommands.isEmpty && command.positionals.isEmpty {
            // Up to ten choices are named; more than that, the help lists them.
            if command.subcommands.count > 10 {
                throw CommandLineError("'\(display(path))' needs a subcommand; see '\(display(path)) --help' for the list.")
            }
            throw CommandLineError("'\(display(path))' needs a subcommand (\(command.subcommands.map(\.name).joined(separator: ", "))); see '\(display(path)) --help'.")
        }
        try checkPositionals(positionals, of: command, path: path)
        return .run(ParsedCommand(path: path, options: options, positionals: positionals))
    }

    /// The help text of the command at `path` (e.g. `["ca"]`), or nil if no such command.
    public func help(for path: [String]) -> String? {
        var command = root
        for word in path {
            guard let sub = command.subcommands.first(where: { $0.name == word }) else { return nil }
            command = sub
        }
        return render(command, path: path)
    }

    /// The word that asks for help at the top level (`tv help CMD`).
    static let helpWord = "help"

    /// The help of `command` at `path`; the top level also lists `--version` and `help`.
    private func render(_ command: CommandSpec, path: [String]) -> String {
        var command = command
        if path.isEmpty, !command.subcommands.contains(where: { $0.name == Self.helpWord }) {
            command.subcommands.append(helpSpec)
        }
        return HelpText.render(command: command, program: root.name, path: path, globalOptions: globalOptions,
                               extraOptions: path.isEmpty ? versionOption : [])
    }

    /// How the top-level help lists `help`.
    var helpSpec: CommandSpec {
        CommandSpec(name: Self.helpWord, summary: "Show this help, or a command's: '\(root.name) \(Self.helpWord) COMMAND…' (the same as '\(root.name) COMMAND… --help').")
    }

    /// "'tv ca bogus' is not a command (did you mean …?)": `word` is not a subcommand of `command` at `path`.
    private func notACommand(_ word: String, under command: CommandSpec, path: [String]) -> CommandLineError {
        if command.subcommands.isEmpty {
            return CommandLineError("'\(display(path))' has no subcommands, so '\(word)' is not one; see '\(display(path)) --help'.")
        }
        var names = command.subcommands.map(\.name)
        if path.isEmpty { names.append(Self.helpWord) }
        let near = command.pointers[word.lowercased()] ?? Spelling.closest(to: word, among: names)
        return CommandLineError("'\(display(path)) \(word)' is not a command\(near.map { " (did you mean '\(display(path)) \($0)'?)" } ?? ""); see '\(display(path)) --help' for the list.")
    }

    /// `--version`, listed in the top-level help when there is a version line.
    var versionOption: [OptionSpec] {
        version == nil ? [] : [OptionSpec("version", help: "Print \(root.name)'s version and exit.")]
    }

    private func resolveOption(_ arg: String, in command: CommandSpec, path: [String]) throws -> (OptionSpec, String?) {
        let all = command.options + globalOptions
        if arg.hasPrefix("--") {
            let body = arg.dropFirst(2)
            let name: Substring
            var inline: String?
            if let eq = body.firstIndex(of: "=") {
                name = body[..<eq]
                inline = String(body[body.index(after: eq)...])
            } else {
                name = body
            }
            guard let spec = all.first(where: { $0.long == name }) else {
                let near = Spelling.closest(to: String(name), among: all.map(\.long))
                throw CommandLineError("'\(display(path))' has no option --\(name)\(near.map { " (did you mean --\($0)?)" } ?? ""); see '\(display(path)) --help'.")
            }
            return (spec, inline)
        }
        let body = arg.dropFirst()
        guard let letter = body.first else {
            throw CommandLineError("'\(arg)' is not an option; see '\(display(path)) --help'.")
        }
        guard let spec = all.first(where: { $0.short == letter }) else {
            throw CommandLineError("'\(display(path))' has no option -\(body); see '\(display(path)) --help'.")
        }
        let rest = body.dropFirst()
        if !rest.isEmpty {
            guard spec.takesValue else {
                throw CommandLineError("'\(display(path))' has no option -\(body); see '\(display(path)) --help'.")
            }
            return (spec, String(rest))
        }
        return (spec, nil)
    }

    private func checkPositionals(_ given: [String], of command: CommandSpec, path: [String]) throws {
        let specs = command.positionals
        let required = specs.filter { !$0.optional && !$0.variadic }.count
        let variadic = specs.last?.variadic ?? false
        if given.count < required {
            let missing = specs[given.count]
            throw CommandLineError("'\(display(path))' needs \(missing.name); see '\(display(path)) --help'.")
        }
        if variadic, let last = specs.last, !last.optional, given.count < specs.count {
            throw CommandLineError("'\(display(path))' needs at least one \(last.name); see '\(display(path)) --help'.")
        }
        if !variadic && given.count > specs.count {
            let extra = given[specs.count]
            throw CommandLineError("'\(display(path))' does not take the argument '\(extra)'; see '\(display(path)) --help'.")
        }
    }

    private func display(_ path: [String]) -> String {
        ([root.name] + path).joined(separator: " ")
    }
}

extension Character {
    /// 0 to 9 (ASCII only).
    var isASCIIDigit: Bool { isASCII && isNumber }
}
