/// Manual pages (groff's `man` macros, man-pages(7)) made from the same `CommandSpec` tree as
/// `--help`, so the two never disagree: `PROGRAM(1)` lists the commands and the global options,
/// and one `PROGRAM-GROUP(1)` per top-level command holds that command and every command under it.
///
/// The text is escaped for troff once (`ManPage.escape`): backslashes, a leading `.` or `'`,
/// and every non-ASCII character as `\[uXXXX]`, so `groff -man` renders it without preconv.
public struct ManPage: Sendable, Equatable {
    /// The file name (`tv.1`, `tv-ca.1`).
    public var fileName: String
    /// The page, in groff's `man` macros.
    public var text: String
}

extension CommandLineParser {
    /// Every page: the program's first, then one per top-level command in the tree's order.
    /// - Parameter source: the `.TH` footer's source (`tv 0.1`); no date, so the pages are
    ///   the same from one build to the next.
    public func manPages(source: String) -> [ManPage] {
        let root = documentedRoot
        var pages = [ManPage(fileName: root.name + ".1", text: rootPage(root, source: source))]
        for group in root.subcommands where group.name != Self.helpWord {
            pages.append(ManPage(fileName: root.name + "-" + group.name + ".1", text: groupPage(group, source: source)))
        }
        return pages
    }

    /// The root as the top-level help shows it: with `help` among its commands.
    var documentedRoot: CommandSpec {
        var root = root
        if !root.subcommands.contains(where: { $0.name == Self.helpWord }) { root.subcommands.append(helpSpec) }
        return root
    }

    private func rootPage(_ root: CommandSpec, source: String) -> String {
        let name = root.name
        var lines = header(title: name, source: source)
        lines += [".SH NAME", "\(name) \\- " + ManPage.escape(root.summary)]
        lines += [".SH SYNOPSIS", ".B \(name)", ManPage.italic("command") + " [" + ManPage.italic("options") + "]",
                  ".br", ".B \(name)", "\\-\\-version", ".br", ".B \(name) help", "[" + ManPage.italic("command") + " ...]"]
        lines += [".SH DESCRIPTION"] + ManPage.paragraphs(root.summary) + ManPage.paragraphs(root.discussion)
        lines += [".SH COMMANDS"]
        for sub in root.subcommands {
            lines += [".TP", ".B " + ManPage.escape(sub.name), ManPage.escape(sub.summary)]
        }
        lines += [".SH OPTIONS"] + optionItems(globalOptions + versionOption + [Self.helpOption])
        let groups = root.subcommands.filter { $0.name != Self.helpWord }.map { "\(name)-\($0.name)" }
        lines += [".SH SEE ALSO"] + seeAlso(groups)
        return lines.joined(separator: "\n") + "\n"
    }

    private func groupPage(_ group: CommandSpec, source: String) -> String {
        let title = root.name + "-" + group.name
        var lines = header(title: title, source: source)
        lines += [".SH NAME", ManPage.escape(title) + " \\- " + ManPage.escape(group.summary)]
        var commands: [([String], CommandSpec)] = []
        func walk(_ spec: CommandSpec, _ path: [String]) {
            commands.append((path, spec))
            for sub in spec.subcommands { walk(sub, path + [sub.name]) }
        }
        walk(group, [group.name])
        // The group itself when it runs, and every command under it that runs.
        let runnable = commands.filter { $0.1.subcommands.isEmpty || $0.1.defaultSubcommand != nil || !$0.1.positionals.isEmpty }
        lines += [".SH SYNOPSIS"]
        for (i, (path, spec)) in (runnable.isEmpty ? [commands[0]] : runnable).enumerated() {
            if i > 0 { lines.append(".br") }
            lines += synopsis(path, spec)
        }
        lines += [".SH DESCRIPTION"] + ManPage.paragraphs(group.summary) + ManPage.paragraphs(group.discussion)
        lines += arguments(group.positionals)
        lines += [".SH OPTIONS"] + optionItems(group.options + globalOptions + [Self.helpOption])
        if commands.count > 1 {
            lines += [".SH COMMANDS"]
            for (path, spec) in commands.dropFirst() {
                lines += [".SS \"" + ManPage.escape(([root.name] + path).joined(separator: " ")) + "\""]
                lines += ManPage.paragraphs(spec.summary) + ManPage.paragraphs(spec.discussion)
                if let fallback = spec.defaultSubcommand {
                    lines += [".PP", ManPage.escape("With no subcommand: '\(([root.name] + path + [fallback]).joined(separator: " "))'.")]
                }
                lines += arguments(spec.positionals)
                if !spec.options.isEmpty {
                    lines += [".PP", "Options:"] + optionItems(spec.options)
                }
                if !spec.subcommands.isEmpty {
                    lines += [".PP", "Subcommands:"]
                    for sub in spec.subcommands { lines += [".TP", ".B " + ManPage.escape(sub.name), ManPage.escape(sub.summary)] }
                }
            }
        }
        lines += [".SH SEE ALSO"] + seeAlso([root.name])
        return lines.joined(separator: "\n") + "\n"
    }

    private func header(title: String, source: String) -> [String] {
        [".\\\" Made by '\(root.name) man' from the command specs its --help is made from; do not edit.",
         ".TH \(ManPage.escape(title.uppercased())) 1 \"\" \"\(ManPage.escape(source))\" \"User Commands\""]
    }

    /// `.B tv ca issue` then `[options] NAME [NAME…]`, as the help's usage line.
    private func synopsis(_ path: [String], _ spec: CommandSpec) -> [String] {
        var words: [String] = []
        if !spec.subcommands.isEmpty && spec.positionals.isEmpty { words.append(ManPage.italic("subcommand")) }
        words.append("[" + ManPage.italic("options") + "]")
        for p in spec.positionals {
            let word = ManPage.italic(p.name) + (p.variadic ? " ..." : "")
            words.append(p.optional ? "[" + word + "]" : word)
        }
        return [".B " + ManPage.escape(([root.name] + path).joined(separator: " ")), words.joined(separator: " ")]
    }

    private func arguments(_ positionals: [PositionalSpec]) -> [String] {
        guard !positionals.isEmpty else { return [] }
        var lines = [".PP", "Arguments:"]
        for p in positionals { lines += [".TP", ManPage.italic(p.name), ManPage.escape(p.help)] }
        return lines
    }

    private func optionItems(_ options: [OptionSpec]) -> [String] {
        var lines: [String] = []
        for option in options {
            var label = option.short.map { "\\fB\\-\(ManPage.escape(String($0)))\\fR, " } ?? ""
            // Option dashes as \- (man-pages(7)): a minus, never a typographic hyphen.
            label += "\\fB\\-\\-" + ManPage.escape(option.long).replacingOccurrences(of: "-", with: "\\-") + "\\fR"
            if let value = option.valueName { label += " " + ManPage.italic(value) }
            lines += [".TP", label, ManPage.escape(option.help) + (option.repeatable ? " (May be given more than once.)" : "")]
        }
        return lines
    }

    private func seeAlso(_ names: [String]) -> [String] {
        names.enumerated().map { i, name in ".BR " + ManPage.escape(name) + " (1)" + (i < names.count - 1 ? "," : "") }
    }

    /// `-h, --help`, as every help lists it.
    static var helpOption: OptionSpec { OptionSpec("help", short: "h", help: "Show this help.") }
}

extension ManPage {
    /// `text` as troff input for one line of running text: `\` as `\e`, `-` kept, a leading `.`
    /// or `'` behind `\&` (else troff takes the line for a request), non-ASCII as `\[uXXXX]`.
    public static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "\n": out += " "
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: continue
            case _ where scalar.isASCII: out.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    /// `word` in italics, as man-pages(7) writes placeholders.
    static func italic(_ word: String) -> String { "\\fI" + escape(word) + "\\fR" }

    /// Text split at blank lines into `.PP` paragraphs (nothing for empty text).
    static func paragraphs(_ text: String) -> [String] {
        let trimmed = text.split(separator: "\n", omittingEmptySubsequences: false)
        var out: [String] = []
        var current: [String] = []
        func flush() {
            if !current.isEmpty { out += [".PP", escape(current.joined(separator: " "))] }
            current = []
        }
        for line in trimmed {
            if line.allSatisfy(\.isWhitespace) { flush() } else { current.append(String(line)) }
        }
        flush()
        return out
    }
}
