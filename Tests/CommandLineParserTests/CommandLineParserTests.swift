import Testing
@testable import CommandLineParser

/// A small tree shaped like `tv`'s: `t ca create|issue|export`, one global option.
let tree = CommandSpec(
    name: "t", summary: "The tool.",
    subcommands: [
        CommandSpec(name: "ca", summary: "The CA.", discussion: "About the CA.", subcommands: [
            CommandSpec(name: "create", summary: "Make it.",
                        options: [OptionSpec("key", value: "TYPE", help: "Key type."),
                                  OptionSpec("json", help: "As JSON.")]),
            CommandSpec(name: "issue", summary: "Issue one.",
                        options: [OptionSpec("out-dir", value: "DIR", help: "Where."),
                                  OptionSpec("tag", value: "T", help: "A tag.", repeatable: true)],
                        positionals: [PositionalSpec("NAME", help: "Names.", variadic: true)]),
            CommandSpec(name: "export", summary: "Export it.",
                        options: [OptionSpec("output", short: "o", value: "FILE", help: "Where to."),
                                  OptionSpec("yes", short: "y", help: "Confirm.")],
                        positionals: [PositionalSpec("FORMAT", help: "Which form.", optional: true)]),
            CommandSpec(name: "show", summary: "Show one.",
                        positionals: [PositionalSpec("WHAT", help: "What.")]),
        ]),
    ])

let parser = CommandLineParser(root: tree, globalOptions: [OptionSpec("data-dir", value: "DIR", help: "Data folder.")])

/// The command a line runs, or a recorded issue.
func run(_ line: [String]) throws -> ParsedCommand {
    guard case .run(let command) = try parser.parse(line) else {
        throw CommandLineError("expected a command to run for \(line)")
    }
    return command
}

/// The refusal for a line (message and exit code), or nil if it parsed.
func refusal(_ line: [String]) -> CommandLineError? {
    do {
        _ = try parser.parse(line)
        return nil
    } catch let error as CommandLineError {
        return error
    } catch {
        return nil
    }
}

@Suite("CommandLineParser")
struct CommandLineParserTests {
    @Test("a command that runs a command line: options end at its first positional, `--` optional")
    func commandLineTail() throws {
        var exec = CommandSpec(name: "exec", summary: "Run a command.",
                               options: [OptionSpec("yes", help: "Go ahead."), OptionSpec("mtu", value: "N", help: "MTU.")],
                               positionals: [PositionalSpec("COMMAND", help: "What to run.", variadic: true)])
        exec.optionsEndAtFirstPositional = true
        let p = CommandLineParser(root: CommandSpec(name: "t", summary: "T.", subcommands: [exec]),
                                  globalOptions: [OptionSpec("data-dir", value: "DIR", help: "Data folder.")])
        func parse(_ line: [String]) throws -> ParsedCommand {
            guard case .run(let command) = try p.parse(line) else { throw CommandLineError("no command") }
            return command
        }
        let a = try parse(["exec", "--yes", "--mtu", "1500", "curl", "-sS", "--yes", "-o", "x", "https://a.test/"])
        #expect(a.has("yes") && a.value("mtu") == "1500")
        #expect(a.positionals == ["curl", "-sS", "--yes", "-o", "x", "https://a.test/"])
        let b = try parse(["--data-dir", "d", "exec", "--", "sh", "-c", "exit 3", "--", "--help"])
        #expect(b.value("data-dir") == "d" && !b.has("yes"))
        #expect(b.positionals == ["sh", "-c", "exit 3", "--", "--help"])
        // Without a command, --help is tv's.
        guard case .help = try p.parse(["exec", "--help"]) else { Issue.record("expected help"); return }
    }

    @Test("a parent with a default subcommand takes that subcommand's options (tv content --json = tv content status --json); others are still refused, named by the parent")
    func defaultSubcommandsOptions() throws {
        let content = CommandSpec(name: "content", summary: "Content.", subcommands: [
            CommandSpec(name: "status", summary: "Status.", options: [OptionSpec("json", help: "JSON.")]),
            CommandSpec(name: "delete", summary: "Delete.", options: [OptionSpec("yes", help: "Agree.")]),
        ], defaultSubcommand: "status")
        let p = CommandLineParser(root: CommandSpec(name: "t", summary: "T.", subcommands: [content]),
                                  globalOptions: [OptionSpec("data-dir", value: "DIR", help: "Data folder.")])
        #expect(try p.parse(["content", "--json"]) == .run(ParsedCommand(path: ["content", "status"], options: ["json": [""]])))
        #expect(try p.parse(["content", "--data-dir", "d", "--json"])
                == .run(ParsedCommand(path: ["content", "status"], options: ["data-dir": ["d"], "json": [""]])))
        #expect(try p.parse(["content"]) == .run(ParsedCommand(path: ["content", "status"])))
        #expect(throws: CommandLineError("'t content' has no option --yes; see 't content --help'.")) { try p.parse(["content", "--yes"]) }
        #expect(try p.parse(["content", "delete", "--yes"]) == .run(ParsedCommand(path: ["content", "delete"], options: ["yes": [""]])))
    }

    @Test("a plain command with options and flags")
    func plain() throws {
        let command = try run(["ca", "create", "--key", "rsa-2048", "--json"])
        #expect(command.path == ["ca", "create"])
        #expect(command.value("key") == "rsa-2048")
        #expect(command.has("json"))
        #expect(!command.has("data-dir"))
        #expect(command.positionals.isEmpty)
    }

    @Test("--name=value is the same as --name value; short -oFILE and -o FILE too")
    func inlineValues() throws {
        #expect(try run(["ca", "create", "--key=rsa-2048"]) == run(["ca", "create", "--key", "rsa-2048"]))
        #expect(try run(["ca", "create", "--key="]).value("key") == "")
        #expect(try run(["ca", "create", "--key=a=b"]).value("key") == "a=b")
        #expect(try run(["ca", "export", "-oout.pem"]).value("output") == "out.pem")
        #expect(try run(["ca", "export", "-o", "out.pem"]).value("output") == "out.pem")
        #expect(try run(["ca", "export", "--output=out.pem"]).value("output") == "out.pem")
        // A value may itself look like an option when given separately.
        #expect(try run(["ca", "create", "--key", "--json"]).value("key") == "--json")
    }

    @Test("a flag given a value is refused")
    func flagWithValue() {
        let error = refusal(["ca", "create", "--json=yes"])
        #expect(error?.message == "Option --json takes no value; write it alone.")
        #expect(error?.exitCode == 2)
        #expect(refusal(["ca", "export", "-yx"])?.message == "'t ca export' has no option -yx; see 't ca export --help'.")
    }

    @Test("a dash and a digit is a value, not an option: a positional (-5d) or an option's value (-1); the command judges it")
    func negativeValues() throws {
        #expect(try run(["ca", "show", "-5d"]).positionals == ["-5d"])
        #expect(try run(["ca", "export", "-1", "-y"]).positionals == ["-1"])
        #expect(try run(["ca", "create", "--key", "-2"]).value("key") == "-2")
        #expect(refusal(["ca", "create", "-5d"])?.message == "'t ca create' does not take the argument '-5d'; see 't ca create --help'.")
        #expect(refusal(["ca", "create", "-x5"])?.message == "'t ca create' has no option -x5; see 't ca create --help'.")
    }

    @Test("unknown options are refused with one sentence and exit code 2")
    func unknownOption() {
        let long = refusal(["ca", "create", "--bogus"])
        #expect(long?.message == "'t ca create' has no option --bogus; see 't ca create --help'.")
        #expect(long?.exitCode == 2)
        #expect(refusal(["ca", "create", "--bogus=1"])?.message == "'t ca create' has no option --bogus; see 't ca create --help'.")
        #expect(refusal(["ca", "create", "-z"])?.message == "'t ca create' has no option -z; see 't ca create --help'.")
        // An option of another command is unknown here.
        #expect(refusal(["ca", "create", "--out-dir", "x"])?.message.contains("has no option --out-dir") == true)
        // An option before the subcommand that names it belongs to the parent, which lacks it.
        #expect(refusal(["ca", "--key", "x", "create"])?.message == "'t ca' has no option --key; see 't ca --help'.")
    }

    @Test("a missing value is refused naming the option and its value")
    func missingValue() {
        let error = refusal(["ca", "create", "--key"])
        #expect(error?.message == "Option --key needs a value (TYPE); see 't ca create --help'.")
        #expect(error?.exitCode == 2)
        #expect(refusal(["ca", "export", "-o"])?.message == "Option --output needs a value (FILE); see 't ca export --help'.")
        #expect(refusal(["--data-dir"])?.message == "Option --data-dir needs a value (DIR); see 't --help'.")
    }

    @Test("every refusal is one sentence on one line")
    func oneSentence() {
        let lines: [[String]] = [["ca", "create", "--bogus"], ["ca", "create", "--key"], ["nope"], ["ca"], ["help", "nope"],
                                 ["help", "ca", "create", "x"], ["ca", "help"],
                                 ["ca", "issue"], ["ca", "show"], ["ca", "show", "a", "b"], ["ca", "create", "extra"],
                                 ["ca", "create", "--key", "a", "--key", "b"], ["-"], ["ca", "create", "--json=1"]]
        for line in lines {
            guard let error = refusal(line) else { Issue.record("\(line) was accepted"); continue }
            #expect(error.exitCode == 2)
            #expect(!error.message.contains("\n"), "\(line)")
            #expect(error.message.hasSuffix("."), "\(line): \(error.message)")
            #expect(error.message.first?.isUppercase == true || error.message.first == "'", "\(line): \(error.message)")
        }
    }

    @Test("-- ends options: everything after it is positional, even --help")
    func doubleDash() throws {
        let command = try run(["ca", "issue", "a.test", "--", "--not-a-flag", "-x", "--help", "--"])
        #expect(command.positionals == ["a.test", "--not-a-flag", "-x", "--help", "--"])
        #expect(command.options.isEmpty)
        #expect(try run(["ca", "issue", "--", "-dash.test"]).positionals == ["-dash.test"])
        // Options before -- still count.
        #expect(try run(["ca", "issue", "--out-dir", "d", "--", "--out-dir"]).value("out-dir") == "d")
    }

    @Test("--help and -h at every level print that level's help")
    func helpEverywhere() throws {
        let cases: [([String], [String], String)] = [
            (["--help"], [], "USAGE: t <subcommand> [options]"),
            (["-h"], [], "USAGE: t <subcommand> [options]"),
            (["ca", "--help"], ["ca"], "USAGE: t ca <subcommand> [options]"),
            (["ca", "create", "--help"], ["ca", "create"], "USAGE: t ca create [options]"),
            (["ca", "create", "-h"], ["ca", "create"], "USAGE: t ca create [options]"),
            (["ca", "issue", "--help"], ["ca", "issue"], "USAGE: t ca issue [options] NAME…"),
            (["ca", "export", "--help"], ["ca", "export"], "USAGE: t ca export [options] [FORMAT]"),
            (["--help", "ca", "create"], ["ca", "create"], "USAGE: t ca create [options]"),
            (["ca", "create", "--key", "x", "--help"], ["ca", "create"], "USAGE: t ca create [options]"),
            (["--data-dir", "/x", "ca", "--help"], ["ca"], "USAGE: t ca <subcommand> [options]"),
            // Help wins over what is missing: no names given, no subcommand given.
            (["ca", "issue", "-h"], ["ca", "issue"], "USAGE: t ca issue [options] NAME…"),
            // An unknown word after --help stops at the deepest known command.
            (["ca", "--help", "nope"], ["ca"], "USAGE: t ca <subcommand> [options]"),
        ]
        for (line, path, usage) in cases {
            guard case .help(let gotPath, let text) = try parser.parse(line) else {
                Issue.record("\(line) did not ask for help")
                continue
            }
            #expect(gotPath == path, "\(line)")
            #expect(text.hasPrefix(usage + "\n"), "\(line): \(text.prefix(60))")
            #expect(text.hasSuffix("\n"))
            #expect(parser.help(for: path) == text)
        }
    }

    @Test("the help text lists options (with the global ones and --help), arguments and subcommands")
    func helpContents() throws {
        let ca = try #require(parser.help(for: ["ca"]))
        #expect(ca.contains("\nThe CA.\n\nAbout the CA.\n"))
        #expect(ca.contains("SUBCOMMANDS:\n  create  Make it.\n  issue   Issue one.\n  export  Export it.\n  show    Show one.\n"))
        #expect(ca.contains("See 't ca <subcommand> --help' for more."))
        let export = try #require(parser.help(for: ["ca", "export"]))
        #expect(export.contains("ARGUMENTS:\n  FORMAT  Which form.\n"))
        // Labels are padded to the widest one ("    --data-dir DIR", 18 characters).
        #expect(export.contains("""
            OPTIONS:
              -o, --output FILE   Where to.
              -y, --yes           Confirm.
                  --data-dir DIR  Data folder.
              -h, --help          Show this help.

            """))
        #expect(parser.help(for: ["nope"]) == nil)
        #expect(parser.help(for: ["ca", "create", "deeper"]) == nil)
    }

    @Test("--version at the top level gives the version line; only when the program has one, and only there")
    func version() throws {
        let versioned = CommandLineParser(root: tree, globalOptions: parser.globalOptions, version: "t 9.9")
        #expect(try versioned.parse(["--version"]) == .version("t 9.9\n"))
        #expect(try versioned.parse(["--data-dir", "/x", "--version"]) == .version("t 9.9\n"))
        #expect(throws: CommandLineError("'t ca create' has no option --version; see 't ca create --help'.")) {
            try versioned.parse(["ca", "create", "--version"])
        }
        #expect(refusal(["--version"])?.message == "'t' has no option --version; see 't --help'.")
        #expect(versioned.help(for: [])?.contains("\n      --version       Print t's version and exit.\n") == true)
        #expect(versioned.help(for: ["ca"])?.contains("--version") == false)
        #expect(parser.help(for: [])?.contains("--version") == false)
    }

    @Test("variadic positionals take every name; at least one is needed")
    func variadic() throws {
        #expect(try run(["ca", "issue", "a.test"]).positionals == ["a.test"])
        #expect(try run(["ca", "issue", "a.test", "b.test", "127.0.0.1", "::1"]).positionals == ["a.test", "b.test", "127.0.0.1", "::1"])
        // Options may sit between positionals.
        let mixed = try run(["ca", "issue", "a.test", "--out-dir", "d", "b.test"])
        #expect(mixed.positionals == ["a.test", "b.test"])
        #expect(mixed.value("out-dir") == "d")
        let none = refusal(["ca", "issue"])
        #expect(none?.message == "'t ca issue' needs at least one NAME; see 't ca issue --help'.")
        #expect(refusal(["ca", "issue", "--out-dir", "d"])?.exitCode == 2)
    }

    @Test("optional and required single positionals")
    func singlePositionals() throws {
        #expect(try run(["ca", "export"]).positionals == [])
        #expect(try run(["ca", "export", "pem"]).positionals == ["pem"])
        #expect(refusal(["ca", "export", "pem", "der"])?.message == "'t ca export' does not take the argument 'der'; see 't ca export --help'.")
        #expect(refusal(["ca", "show"])?.message == "'t ca show' needs WHAT; see 't ca show --help'.")
        #expect(refusal(["ca", "create", "x"])?.message == "'t ca create' does not take the argument 'x'; see 't ca create --help'.")
        // A lone "-" is a positional (conventionally standard input), not an option.
        #expect(try run(["ca", "show", "-"]).positionals == ["-"])
    }

    @Test("unknown and missing subcommands are refused")
    func subcommands() {
        #expect(refusal(["nope"])?.message == "'t nope' is not a command; see 't --help' for the list.")
        #expect(refusal(["ca", "nope"])?.message == "'t ca nope' is not a command; see 't ca --help' for the list.")
        #expect(refusal(["ca"])?.message == "'t ca' needs a subcommand (create, issue, export, show); see 't ca --help'.")
        #expect(refusal(["ca"])?.exitCode == 2)
    }

    @Test("`t help WORDS…` is `t WORDS… --help`; the bare program name is `t --help`; the top level lists help")
    func helpWord() throws {
        let top = try #require(parser.help(for: []))
        // `t help help`: help's own help is the top level's (it was "not a command": a trial).
        for (line, path) in [([String](), [String]()), (["help"], []), (["help", "help"], []), (["--data-dir", "/x"], []), (["--data-dir", "/x", "help"], []),
                             (["help", "ca"], ["ca"]), (["help", "ca", "issue"], ["ca", "issue"]), (["help", "ca", "show", "--data-dir", "/x"], ["ca", "show"])] {
            #expect(try parser.parse(line) == .help(path: path, text: try #require(parser.help(for: path))), "\(line)")
        }
        #expect(try parser.parse([]) == .help(path: [], text: top))
        #expect(top.contains("SUBCOMMANDS:\n  ca    The CA.\n  help  Show this help, or a command's: 't help COMMAND…' (the same as 't COMMAND… --help').\n"))
        // Below the top level, help is not listed: `t ca help` is not a command.
        #expect(parser.help(for: ["ca"])?.contains("\n  help ") == false)
        #expect(refusal(["ca", "help"])?.message == "'t ca help' is not a command; see 't ca --help' for the list.")
        // Unknown words after help are refused as the command line would be, with a near miss named.
        #expect(refusal(["help", "nope"])?.message == "'t nope' is not a command; see 't --help' for the list.")
        #expect(refusal(["help", "ca", "isseu"])?.message == "'t ca isseu' is not a command (did you mean 't ca issue'?); see 't ca --help' for the list.")
        #expect(refusal(["help", "ca", "issue", "x"])?.message == "'t ca issue' has no subcommands, so 'x' is not one; see 't ca issue --help'.")
        #expect(refusal(["hepl"])?.message == "'t hepl' is not a command (did you mean 't help'?); see 't --help' for the list.")
        // A program whose tree has its own `help` command keeps it.
        let own = CommandLineParser(root: CommandSpec(name: "u", summary: "U.", subcommands: [CommandSpec(name: "help", summary: "Mine.")]))
        #expect(try own.parse(["help"]) == .run(ParsedCommand(path: ["help"])))
    }

    @Test("a near miss is named: 'did you mean' for a subcommand or an option within two edits")
    func nearMisses() {
        #expect(refusal(["ca", "exprot"])?.message == "'t ca exprot' is not a command (did you mean 't ca export'?); see 't ca --help' for the list.")
        #expect(refusal(["ca", "isue"])?.message == "'t ca isue' is not a command (did you mean 't ca issue'?); see 't ca --help' for the list.")
        #expect(refusal(["ca", "create", "--ky", "x"])?.message == "'t ca create' has no option --ky (did you mean --key?); see 't ca create --help'.")
        #expect(refusal(["ca", "create", "--colour"])?.message == "'t ca create' has no option --colour; see 't ca create --help'.")
    }

    @Test("global options work before, between and after subcommand words")
    func globalOptions() throws {
        for line in [["--data-dir", "/x", "ca", "create"], ["ca", "--data-dir", "/x", "create"],
                     ["ca", "create", "--data-dir", "/x"], ["ca", "create", "--data-dir=/x"]] {
            let command = try run(line)
            #expect(command.path == ["ca", "create"], "\(line)")
            #expect(command.value("data-dir") == "/x", "\(line)")
        }
    }

    @Test("a non-repeatable value option given twice is refused; a repeated flag is harmless; a repeatable option keeps every value")
    func repetition() throws {
        #expect(refusal(["ca", "create", "--key", "a", "--key=b"])?.message == "Option --key was given twice; give it once.")
        #expect(refusal(["ca", "create", "--key", "a", "--key=b"])?.exitCode == 2)
        #expect(try run(["ca", "create", "--json", "--json"]).has("json"))
        let command = try run(["ca", "issue", "a", "--tag", "x", "--tag=y", "--tag", "z"])
        #expect(command.values("tag") == ["x", "y", "z"])
        #expect(command.value("tag") == "z")
        #expect(command.values("out-dir") == [])
    }
}
