import Testing
@testable import CommandLineParser

/// The man pages and completion tables made from the small tree of `CommandLineParserTests`.
@Suite struct ManPageTests {
    static let tool = CommandLineParser(root: tree, globalOptions: [OptionSpec("data-dir", value: "DIR", help: "Data folder.")], version: "t 1.0")

    @Test("the program's page and one page per top-level command, exact text")
    func pages() {
        let pages = Self.tool.manPages(source: "t 1.0")
        #expect(pages.map(\.fileName) == ["t.1", "t-ca.1"])
        #expect(pages[0].text == #"""
            .\" Made by 't man' from the command specs its --help is made from; do not edit.
            .TH T 1 "" "t 1.0" "User Commands"
            .SH NAME
            t \- The tool.
            .SH SYNOPSIS
            .B t
            \fIcommand\fR [\fIoptions\fR]
            .br
            .B t
            \-\-version
            .br
            .B t help
            [\fIcommand\fR ...]
            .SH DESCRIPTION
            .PP
            The tool.
            .SH COMMANDS
            .TP
            .B ca
            The CA.
            .TP
            .B help
            Show this help, or a command's: 't help COMMAND\[u2026]' (the same as 't COMMAND\[u2026] --help').
            .SH OPTIONS
            .TP
            \fB\-\-data\-dir\fR \fIDIR\fR
            Data folder.
            .TP
            \fB\-\-version\fR
            Print t's version and exit.
            .TP
            \fB\-h\fR, \fB\-\-help\fR
            Show this help.
            .SH SEE ALSO
            .BR t-ca (1)

            """#)
        #expect(pages[1].text == #"""
            .\" Made by 't man' from the command specs its --help is made from; do not edit.
            .TH T-CA 1 "" "t 1.0" "User Commands"
            .SH NAME
            t-ca \- The CA.
            .SH SYNOPSIS
            .B t ca create
            [\fIoptions\fR]
            .br
            .B t ca issue
            [\fIoptions\fR] \fINAME\fR ...
            .br
            .B t ca export
            [\fIoptions\fR] [\fIFORMAT\fR]
            .br
            .B t ca show
            [\fIoptions\fR] \fIWHAT\fR
            .SH DESCRIPTION
            .PP
            The CA.
            .PP
            About the CA.
            .SH OPTIONS
            .TP
            \fB\-\-data\-dir\fR \fIDIR\fR
            Data folder.
            .TP
            \fB\-h\fR, \fB\-\-help\fR
            Show this help.
            .SH COMMANDS
            .SS "t ca create"
            .PP
            Make it.
            .PP
            Options:
            .TP
            \fB\-\-key\fR \fITYPE\fR
            Key type.
            .TP
            \fB\-\-json\fR
            As JSON.
            .SS "t ca issue"
            .PP
            Issue one.
            .PP
            Arguments:
            .TP
            \fINAME\fR
            Names.
            .PP
            Options:
            .TP
            \fB\-\-out\-dir\fR \fIDIR\fR
            Where.
            .TP
            \fB\-\-tag\fR \fIT\fR
            A tag. (May be given more than once.)
            .SS "t ca export"
            .PP
            Export it.
            .PP
            Arguments:
            .TP
            \fIFORMAT\fR
            Which form.
            .PP
            Options:
            .TP
            \fB\-o\fR, \fB\-\-output\fR \fIFILE\fR
            Where to.
            .TP
            \fB\-y\fR, \fB\-\-yes\fR
            Confirm.
            .SS "t ca show"
            .PP
            Show one.
            .PP
            Arguments:
            .TP
            \fIWHAT\fR
            What.
            .SH SEE ALSO
            .BR t (1)

            """#)
    }

    @Test("troff escaping: backslash, a leading dot or quote, control characters, non-ASCII")
    func escaping() {
        #expect(ManPage.escape(#"a\b"#) == #"a\eb"#)
        #expect(ManPage.escape(".x") == #"\&.x"#)
        #expect(ManPage.escape("'x") == #"\&'x"#)
        #expect(ManPage.escape("a.b 'c'") == "a.b 'c'")
        #expect(ManPage.escape("µs ↑ 😀") == #"\[u00B5]s \[u2191] \[u1F600]"#)
        #expect(ManPage.escape("a\nb\u{1B}c") == "a bc")
        #expect(ManPage.paragraphs("one\ntwo\n\nthree") == [".PP", "one two", ".PP", "three"])
        #expect(ManPage.paragraphs("") == [])
    }

    @Test("the completion table: every command path with its subcommands and options (globals, --version at the top, -h)")
    func completionTable() {
        let table = Self.tool.completionTable()
        #expect(table.map(\.path) == ["", "ca", "ca create", "ca issue", "ca export", "ca show"])
        #expect(table[0].subcommands.map(\.name) == ["ca", "help"])
        #expect(table[0].options.map(\.long) == ["data-dir", "version", "help"])
        #expect(table[4].options.map(\.long) == ["output", "yes", "data-dir", "help"])
        let bash = Self.tool.completionScript(.bash)
        #expect(bash.contains("\n        'subcommands ca') REPLY='create issue export show' ;;\n"))
        #expect(bash.contains("\n        'options ca export') REPLY='--output -o --yes -y --data-dir --help -h' ;;\n"))
        #expect(bash.contains("\n        'values ca export') REPLY='--output -o --data-dir' ;;\n"))
        #expect(bash.hasSuffix("complete -o default -F _t t\n"))
        let zsh = Self.tool.completionScript(.zsh)
        #expect(zsh.hasPrefix("#compdef t\n"))
        #expect(zsh.contains("\n    ('subcommands ca') reply=('create:Make it.' 'issue:Issue one.' 'export:Export it.' 'show:Show one.') ;;\n"))
        let fish = Self.tool.completionScript(.fish)
        #expect(fish.contains("\ncomplete -c t -f -n '__t_at \\'ca\\' --subcommand' -a 'create' -d 'Make it.'\n"))
        #expect(fish.contains("\ncomplete -c t -n '__t_at \\'ca export\\'' -l 'output' -s 'o' -r -F -d 'Where to.'\n"))
        #expect(CommandLineParser.posixQuote("it's") == #"'it'\''s'"#)
        #expect(CommandLineParser.fishQuote(#"it's \"#) == #"'it\'s \\'"#)
        #expect(CompletionShell.zsh.installPath(program: "tv") == "usr/share/zsh/vendor-completions/_tv")
    }
}
