import CommandLineParser
import Foundation
import TVCore
import TVHome

/// `tv man` and `tv completions`: the manual pages and the shell completion scripts, made from
/// the command tree `--help` is made from (`ManPage`, `CommandLineParser.completionScript`).
enum DocCommands {
    static let manSpec = CommandSpec(
        name: "man", summary: "Print tv's manual page, or a command's (tv man ca), or write them all with --out DIR.",
        discussion: "The pages are made from the same command descriptions as --help: tv.1 lists the commands, tv-COMMAND.1 holds a command and every command under it. Read one with `tv man ca | man -l -`; Scripts/package installs them.",
        options: [OptionSpec("out", value: "DIR", help: "Write every page (tv.1, tv-COMMAND.1, …) into DIR (made if missing) instead of printing one.")],
        positionals: [PositionalSpec("COMMAND", help: "The command whose page to print (default: tv's own).", optional: true)])

    static let completionsSpec = CommandSpec(
        name: "completions", summary: "Print the completion script for bash, zsh or fish.",
        discussion: "Made from the same command descriptions as --help. bash: `source <(tv completions bash)` in ~/.bashrc; zsh: save it as _tv in a folder on $fpath; fish: save it as ~/.config/fish/completions/tv.fish. The Debian package installs all three.",
        positionals: [PositionalSpec("SHELL", help: "bash, zsh or fish.", completions: ["bash", "zsh", "fish"])])

    static let handlers: [String: @Sendable (Invocation) throws -> Int32] = ["man": man, "completions": completions]

    static func man(_ inv: Invocation) throws -> Int32 {
        let pages = CommandTree.parser.manPages(source: TVVersion.line)
        if let dir = inv.command.value("out") {
            if let name = inv.command.positionals.first {
                throw UsageRefusal("--out writes every page; leave out '\(name)', or print its page without --out.")
            }
            // Not among tv's own files (as every -o; a trial wrote the pages into the data folder).
            if let home = try? inv.home() { try OutputOutsideDataFolder.check(dir, home: home) }
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                for page in pages {
                    let path = (dir as NSString).appendingPathComponent(page.fileName)
                    try Data(page.text.utf8).write(to: URL(fileURLWithPath: path))
                    _ = chmod(path, 0o644)
                }
            } catch {
                throw UsageRefusal("Could not write the manual pages into \(dir) (\(error.localizedDescription)); choose a folder you can write.", exitCode: 1)
            }
            // Not ending in the folder's name: `--out .` read "into ..".
            inv.console.line("Wrote \(pages.count) manual pages into \(dir); `man -l \(dir.hasSuffix("/") ? dir : dir + "/")tv.1` reads the first.")
            return 0
        }
        let name = inv.command.positionals.first.map { "tv-\($0).1" } ?? "tv.1"
        guard let page = pages.first(where: { $0.fileName == name }) else {
            let commands = pages.dropFirst().map { String($0.fileName.dropFirst(3).dropLast(2)) }
            let word = inv.command.positionals.first ?? ""
            let near = Spelling.closest(to: word, among: commands).map { " (did you mean '\($0)'?)" } ?? ""
            throw UsageRefusal("'\(word)' is not a tv command\(near); `tv --help` lists them.")
        }
        inv.console.out(page.text)
        return 0
    }

    static func completions(_ inv: Invocation) throws -> Int32 {
        let word = inv.command.positionals[0]
        guard let shell = CompletionShell(rawValue: word) else {
            throw UsageRefusal("tv completions takes bash, zsh or fish, not '\(word)'.")
        }
        inv.console.out(CommandTree.parser.completionScript(shell))
        return 0
    }
}
