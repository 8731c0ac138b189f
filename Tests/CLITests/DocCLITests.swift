import Foundation
import Testing

/// `tv man` and `tv completions` through the real binary: the pages render with groff without a
/// warning and hold every command `tv help` lists (the tree read back from --help, not from the
/// specs), and the completion scripts complete in real bash and fish and pass zsh's syntax check.
@Suite("CLI: man pages and shell completions (issue 22)", .timeLimit(.minutes(5)))
struct DocCLITests {
    /// Every command path `tv help` shows, read from the SUBCOMMANDS sections recursively, with
    /// the long options each command's help lists.
    static func helpTree(_ s: Sandbox) throws -> [(path: [String], options: [String], subcommands: [String])] {
        var out: [(path: [String], options: [String], subcommands: [String])] = []
        func visit(_ path: [String]) throws {
            let help = try s.tvArgs(["help"] + path, dataDir: false)
            try #require(help.status == 0, "\(help)")
            var section = ""
            var options: [String] = [], subs: [String] = []
            for line in help.out.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasSuffix(":"), !line.hasPrefix(" ") { section = String(line); continue }
                guard line.hasPrefix("  ") else { continue }
                let words = line.split(separator: " ")
                if section == "SUBCOMMANDS:", let word = words.first { subs.append(String(word)) }
                if section == "OPTIONS:", let long = words.first(where: { $0.hasPrefix("--") }) { options.append(String(long)) }
            }
            out.append((path, options, subs))
            for sub in subs where !(path.isEmpty && sub == "help") { try visit(path + [sub]) }
        }
        try visit([])
        return out
    }

    @Test("tv man --out: every page renders with groff -man -ww without a warning; every command and option of --help is in its page")
    func manPages() throws {
        try withSandbox { s in
            let dir = s.root + "/man"
            let wrote = try s.tvArgs(["man", "--out", dir], dataDir: false)
            #expect(wrote.status == 0, "\(wrote)")
            let tree = try Self.helpTree(s)
            let groups = tree.filter { $0.path.count == 1 }.map { $0.path[0] }
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            #expect(files == (["tv.1"] + groups.map { "tv-\($0).1" }).sorted(), "\(files)")
            #expect(wrote.out == "Wrote \(files.count) manual pages into \(dir); `man -l \(dir)/tv.1` reads the first.\n")
            // Not into the data folder, as every -o.
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
            let inside = try s.tvArgs(["man", "--out", s.dataDir + "/man"])
            #expect(inside.status != 0 && inside.err.contains("is inside tv's data folder"), "\(inside)")
            for file in files {
                let check = try s.tool("groff", ["-ww", "-z", "-man", "-Tutf8", dir + "/" + file])
                #expect(check.status == 0 && check.err.isEmpty, "\(file): \(check)")
                let rendered = try s.tool("groff", ["-man", "-Tutf8", "-P", "-cbou", dir + "/" + file])
                #expect(rendered.status == 0 && rendered.out.contains("NAME") && rendered.out.contains("SYNOPSIS"), "\(file)")
            }
            let root = s.text(dir + "/tv.1")
            for (path, options, subs) in tree {
                if path.isEmpty {
                    for sub in subs { #expect(root.contains(".B \(sub)\n"), "tv.1 lists \(sub)") }
                    continue
                }
                let page = s.text(dir + "/tv-\(path[0]).1")
                if path.count > 1 { #expect(page.contains(".SS \"tv \(path.joined(separator: " "))\"\n"), "tv-\(path[0]).1 has tv \(path.joined(separator: " "))") }
                for option in options {
                    #expect(page.contains("\\fB\\-\\-\(option.dropFirst(2).replacingOccurrences(of: "-", with: "\\-"))\\fR"), "tv-\(path[0]).1 has \(option) of tv \(path.joined(separator: " "))")
                }
            }
            // tv man GROUP prints the same page; an unknown one is refused with a near name.
            #expect(try s.tvArgs(["man", "ca"], dataDir: false).out == s.text(dir + "/tv-ca.1"))
            #expect(try s.tvArgs(["man"], dataDir: false).out == root)
            let bad = try s.tvArgs(["man", "sevrice"], dataDir: false)
            #expect(bad.status == 2 && bad.err == "tv: 'sevrice' is not a tv command (did you mean 'service'?); `tv --help` lists them.\n", "\(bad)")
        }
    }

    /// What `_tv` puts in COMPREPLY for the words typed (the last one being completed), in bash.
    static func bashComplete(_ s: Sandbox, _ script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let r = try s.tool("bash", ["--norc", "-c", "source \(script) && COMP_WORDS=(\(quoted)) && COMP_CWORD=\(words.count - 1) && _tv && printf '%s\\n' \"${COMPREPLY[@]}\""])
        try #require(r.status == 0 && r.err.isEmpty, "\(r)")
        return r.out.split(separator: "\n").map(String.init)
    }

    @Test("bash: subcommands, nested subcommands, options, files or the option's words after a value option, a first positional's words, nothing after a positional")
    func bash() throws {
        try withSandbox { s in
            let script = try s.write("tv.bash", try s.tvArgs(["completions", "bash"], dataDir: false).out)
            let tree = try Self.helpTree(s)
            let rootSubs = tree.first { $0.path.isEmpty }!.subcommands
            let caSubs = tree.first { $0.path == ["ca"] }!.subcommands
            #expect(try Self.bashComplete(s, script, ["tv", "se"]) == rootSubs.filter { $0.hasPrefix("se") })
            #expect(try Self.bashComplete(s, script, ["tv", "se"]) == ["setup", "settings", "service"])
            #expect(try Self.bashComplete(s, script, ["tv", "ca", "re"]) == caSubs.filter { $0.hasPrefix("re") })
            #expect(try Self.bashComplete(s, script, ["tv", "--data-dir", "/x", "ca", "cr"]) == ["create"])
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--lis"]) == ["--listen"])
            #expect(try Self.bashComplete(s, script, ["tv", "service", "install", "--u"]) == ["--user"])
            _ = try s.write("afile.pem", "x")
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--upstream-ca", "afi"]) == ["afile.pem"])
            #expect(try Self.bashComplete(s, script, ["tv", "exec", "curl", "-"]) == [])
            // Value words (a trial found files offered after --mode, and nothing for SHELL or a setting's name).
            #expect(try Self.bashComplete(s, script, ["tv", "completions", ""]) == ["bash", "zsh", "fish"])
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--mode", "t"]) == ["transparent", "tun"])
            #expect(try Self.bashComplete(s, script, ["tv", "settings", "set", "capture.s"]) == ["capture.snaplen"])
            #expect(try Self.bashComplete(s, script, ["tv", "settings", "set", "capture.snaplen", ""]) == [])
            // Key types, stores and platforms wherever those options appear (a trial found files offered);
            // `tv ca import --key` takes a FILE and still completes files; `set` does not offer inspection.enabled.
            #expect(try Self.bashComplete(s, script, ["tv", "ca", "create", "--leaf-key", ""]) == ["ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-3072"])
            #expect(try Self.bashComplete(s, script, ["tv", "ca", "remake", "--key", "rsa"]) == ["rsa-2048", "rsa-3072"])
            #expect(try Self.bashComplete(s, script, ["tv", "setup", "--trust-store", ""]) == ["system", "file:", "dir:", "nss:"])
            #expect(try Self.bashComplete(s, script, ["tv", "ca", "trust", "--platform", "n"]) == ["nss", "node"])
            #expect(try Self.bashComplete(s, script, ["tv", "ca", "import", "--key", "afi"]) == ["afile.pem"])
            #expect(try !Self.bashComplete(s, script, ["tv", "settings", "set", "insp"]).contains("inspection.enabled"))
            // bash splits a value at : and = (COMP_WORDBREAKS): completion goes on after it (a
            // trial's `tv run --listen 127.0.0.1:25100 --insp<TAB>` rang the bell).
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--listen", "127.0.0.1", ":", "25100", "--insp"]) == ["--inspect"])
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--store", "postgresql", ":", "//db/h", "--mode", "t"]) == ["transparent", "tun"])
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--listen", "=", "127.0.0.1", ":", "1", "--insp"]) == ["--inspect"])
            #expect(try Self.bashComplete(s, script, ["tv", "run", "--store", "postgresql", ":", "//tvu", "@", "127.0.0.1", ":", "26432/tvdb", "--insp"]) == ["--inspect"])
        }
    }

    @Test("fish completes the same way (complete -C), and fish -n and zsh -n accept their scripts")
    func fishAndZsh() throws {
        try withSandbox { s in
            let fish = try s.write("tv.fish", try s.tvArgs(["completions", "fish"], dataDir: false).out)
            let zsh = try s.write("_tv", try s.tvArgs(["completions", "zsh"], dataDir: false).out)
            let fishCheck = try s.tool("fish", ["-n", fish])
            #expect(fishCheck.status == 0 && fishCheck.err.isEmpty, "\(fishCheck)")
            let zshCheck = try s.tool("zsh", ["-n", zsh])
            #expect(zshCheck.status == 0 && zshCheck.err.isEmpty, "\(zshCheck)")
            func complete(_ line: String) throws -> [String] {
                let r = try s.tool("fish", ["--no-config", "-c", "source \(fish); complete -C'\(line)'"])
                try #require(r.status == 0, "\(r)")
                return r.out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            }
            #expect(try complete("tv ca cr") == ["create"])
            #expect(try complete("tv --data-dir /x se") == ["setup", "settings", "service"].sorted())
            #expect(try complete("tv run --lis") == ["--listen"])
            #expect(try complete("tv service install --") .contains("--user"))
            #expect(try complete("tv run --mode t") == ["transparent", "tun"])
            #expect(try complete("tv completions ") == ["bash", "fish", "zsh"])
            #expect(try complete("tv settings get history.") == ["history.maxAge"])
        }
    }
}
