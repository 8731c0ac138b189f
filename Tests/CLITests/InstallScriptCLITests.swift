import Foundation
import Testing

/// `Scripts/install` puts the built `tv` on the PATH: it says what it will do, asks (or takes
/// `--yes`), links or copies, and the installed `tv` runs. Run on the `tv` these tests already
/// built (`--binary`), into a scratch `--prefix`, so nothing is built and nothing outside the
/// sandbox is touched.
@Suite("CLI: Scripts/install", .timeLimit(.minutes(5)))
struct InstallScriptCLITests {
    /// The repository's `Scripts/install`, found from this file's place in `Tests/CLITests/`.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/install").path

    func install(_ s: Sandbox, _ arguments: [String]) throws -> ProcessOutput {
        try Run.process(Self.script, arguments, in: s.work, environment: s.environment)
    }

    @Test("--yes --prefix P links P/bin/tv to the built tv, says so first, and the link runs")
    func linkWithYes() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            let prefix = s.root + "/prefix"
            let bin = prefix + "/bin"
            let version = try s.tvArgs(["--version"], dataDir: false).out
            let result = try install(s, ["--yes", "--prefix", prefix, "--binary", tv])
            #expect(result.status == 0, "\(result)")
            #expect(result.err.isEmpty, "\(result)")
            #expect(result.out == """
                This makes \(bin)/tv a symbolic link to \(tv) (a later release build updates it).
                It creates \(bin) first.
                Installed \(bin)/tv: \(version)\
                \(bin) is not on your PATH: add it (export PATH="\(bin):$PATH" in ~/.profile) and open a new shell, or run \(bin)/tv.

                """)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: bin + "/tv") == tv)
            let installed = try Run.process(bin + "/tv", ["--version"], in: s.work, environment: s.environment)
            #expect(installed.status == 0)
            #expect(installed.out == version)

            // Found on the PATH as plain `tv`.
            var environment = s.environment
            environment["PATH"] = bin + ":" + (environment["PATH"] ?? "")
            let onPath = try Run.process("/bin/sh", ["-c", "command -v tv && tv --version"], in: s.work, environment: environment)
            #expect(onPath.out == bin + "/tv\n" + version, "\(onPath)")

            // Again with --copy: replaces the link with a 0755 copy, and says both.
            let copy = try install(s, ["--yes", "--copy", "--prefix", prefix, "--binary", tv])
            #expect(copy.status == 0, "\(copy)")
            #expect(copy.out.hasPrefix("""
                This copies \(tv) to \(bin)/tv (mode 0755; run Scripts/install again after a rebuild).
                It replaces the existing \(bin)/tv.
                Installed \(bin)/tv: \(version)
                """), "\(copy.out)")
            let attributes = try FileManager.default.attributesOfItem(atPath: bin + "/tv")
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o755)
            #expect(FileManager.default.contents(atPath: bin + "/tv") == FileManager.default.contents(atPath: tv))
            #expect(try Run.process(bin + "/tv", ["--version"], in: s.work, environment: s.environment).out == version)
        }
    }

    @Test("without --yes and without a terminal it does nothing and says how to agree")
    func refusesWithoutTerminal() throws {
        try withSandbox { s in
            let prefix = s.root + "/prefix"
            let result = try install(s, ["--prefix", prefix, "--binary", try TVBinary.require()])
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "Scripts/install: nothing done: there is no terminal to ask on; run again with --yes to agree.\n")
            #expect(!FileManager.default.fileExists(atPath: prefix))
        }
    }

    @Test("on a terminal it asks: n leaves nothing, y installs")
    func asksOnATerminal() throws {
        try withSandbox { s in
            let tv = try TVBinary.require()
            let prefix = s.root + "/prefix"
            // Standard input on a pseudo-terminal, the answer typed into it.
            let pty = try s.write("pty.py", """
                import os, subprocess, sys
                leader, follower = os.openpty()
                p = subprocess.Popen(sys.argv[2:], stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                os.write(leader, sys.argv[1].encode() + b"\\n")
                out, err = p.communicate(timeout=20)
                sys.stdout.write("%d\\n%s" % (p.returncode, out.decode()))
                """)
            let no = try s.tool("python3", [pty, "n", Self.script, "--prefix", prefix, "--binary", tv])
            #expect(no.out == "1\nThis makes \(prefix)/bin/tv a symbolic link to \(tv) (a later release build updates it).\nIt creates \(prefix)/bin first.\nNothing done.\n", "\(no)")
            #expect(!FileManager.default.fileExists(atPath: prefix))
            let yes = try s.tool("python3", [pty, "y", Self.script, "--prefix", prefix, "--binary", tv])
            #expect(yes.out.hasPrefix("0\nThis makes"), "\(yes)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/bin/tv") == tv)
        }
    }

    @Test("an unknown option and a --binary that is not a built tv are refused")
    func refusals() throws {
        try withSandbox { s in
            let bogus = try install(s, ["--bogus"])
            #expect(bogus.status == 2)
            #expect(bogus.err == "Scripts/install: '--bogus' is not an option; see 'Scripts/install --help'.\n")
            let missing = try install(s, ["--yes", "--prefix", s.root + "/p", "--binary", s.root + "/nothing"])
            #expect(missing.status == 1)
            #expect(missing.err == "Scripts/install: \(s.root)/nothing is not a built tv; build it (Scripts/run or swift build -c release) or leave --binary out.\n")
            #expect(!FileManager.default.fileExists(atPath: s.root + "/p"))
        }
    }
}
