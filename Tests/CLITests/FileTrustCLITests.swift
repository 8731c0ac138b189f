import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §8 and §9 through the built `tv`: files another user controls (a key log, the data
/// folder, its ca/), a folder at the control socket's path, and `--inspect` without a usable CA.
/// The hostile files are made by root and given to a scratch user (as if that user had made them).
@Suite("CLI: files another user controls, and causes named right (issue 12)", .timeLimit(.minutes(5)))
struct FileTrustCLITests {
    /// `tv run --listen 127.0.0.1:<free port> ARGS…` with `environment` added; it must fail.
    func runRefused(_ s: Sandbox, _ arguments: [String], environment: [String: String] = [:],
                    sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessOutput {
        let port = freeLoopbackPort()
        let result = try Run.process(try TVBinary.require(), ["--data-dir", s.dataDir, "run", "--listen", "127.0.0.1:\(port)"] + arguments,
                                     in: s.work, environment: s.environment.merging(environment) { $1 }, timeout: 30,
                                     sourceLocation: sourceLocation)
        #expect(!isListening(port), "nothing listens after a refusal", sourceLocation: sourceLocation)
        return result
    }

    func owner(_ path: String) -> uid_t? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return st.st_uid
    }

    @Test("--keylog FILE owned by another user (0666): refused in one sentence, exit 1, nothing written", .enabled(if: ScratchUser.available))
    func keylogOfAnotherUser() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        try withSandbox { s in
            let file = try s.write("keys.log", "")
            chmod(file, 0o666)
            user.own(file)
            let result = try runRefused(s, ["--keylog", file])
            #expect(result.status == 1, "\(result)")
            #expect(result.err.hasSuffix("tv refuses the key log file \(file): it belongs to \(user.name), not to you (root), and \(user.name) could read the TLS secrets; remove it or pass a path of your own with --keylog (or SSLKEYLOGFILE).\n"), "\(result)")
            #expect(s.read(file).isEmpty)
            #expect(s.mode(file) == 0o666)
            #expect(owner(file) == user.uid)
        }
    }

    @Test("--keylog / SSLKEYLOGFILE through a symbolic link that user planted: refused, the link is not followed", .enabled(if: ScratchUser.available))
    func keylogSymlink() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        try withSandbox { s in
            let target = try s.write("theirs.log", "")
            chmod(target, 0o666)
            user.own(target)
            let link = s.work + "/keys.log"
            let missing = s.work + "/made-through-link.log"
            symlink(target, link)
            user.own(link)
            let dangling = s.work + "/dangling.log"
            symlink(missing, dangling)
            user.own(dangling)
            let expected = { (path: String) in
                "tv refuses the key log file \(path): it is a symbolic link, and tv does not follow a link for TLS secrets; pass the real file's path with --keylog (or SSLKEYLOGFILE).\n"
            }
            let viaOption = try runRefused(s, ["--keylog", link])
            #expect(viaOption.status == 1, "\(viaOption)")
            #expect(viaOption.err.hasSuffix(expected(link)), "\(viaOption)")
            let viaEnvironment = try runRefused(s, ["--quiet"], environment: ["SSLKEYLOGFILE": dangling])
            #expect(viaEnvironment.status == 1, "\(viaEnvironment)")
            #expect(viaEnvironment.err == expected(dangling), "\(viaEnvironment)")
            #expect(s.read(target).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: missing), "the dangling link's target was not created")
        }
    }

    @Test("--keylog FILE of your own that others can read: refused with the chmod, nothing written")
    func keylogReadableByOthers() throws {
        try withSandbox { s in
            let file = try s.write("keys.log", "")
            chmod(file, 0o644)
            let result = try runRefused(s, ["--quiet", "--keylog", file])
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "tv refuses the key log file \(file): it can be read by other users (mode 0644), and others could read the TLS secrets; if it is your key log, `chmod 600 \(file)`, or pass a new path with --keylog (or SSLKEYLOGFILE) (tv creates it 0600).\n", "\(result)")
            #expect(s.read(file).isEmpty)
        }
    }

    @Test("--keylog naming a file that is not a key log (tv's own settings, the CA's key): refused before anything is written, without advice to chmod it")
    func keylogNotAKeyLog() throws {
        try withSandbox { s in
            try s.createCA()
            for file in [s.dataDir + "/ca/root-key.pem", try s.write("notes.txt", "my notes\n")] {
                let before = s.read(file)
                let result = try runRefused(s, ["--quiet", "--keylog", file])
                #expect(result.status == 1, "\(result)")
                #expect(result.err == "tv refuses the key log file \(file): it holds something other than TLS key log lines, and tv appends secrets only to a key log of its own or a new file; pass a new path with --keylog (or SSLKEYLOGFILE).\n", "\(result)")
                #expect(s.read(file) == before)
            }
        }
    }

    @Test("a data folder made by another user: root's `tv ca create` refuses it and writes nothing; so do run and status", .enabled(if: ScratchUser.available))
    func dataFolderOfAnotherUser() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        try withSandbox { s in
            mkdir(s.dataDir, 0o755)
            user.own(s.dataDir)
            let expected = "tv: The data folder \(s.dataDir) belongs to \(user.name), not to you (root), so the user \(user.name) could change what tv trusts in it (such as the CA); run tv as \(user.name) (sudo -u \(user.name) tv …) to use it, or pass --data-dir with a folder of your own.\n"
            let create = try s.tv("ca", "create")
            #expect(create.status == 1, "\(create)")
            #expect(create.err == expected, "\(create)")
            #expect(!FileManager.default.fileExists(atPath: s.caDir))
            #expect(s.mode(s.dataDir) == 0o755, "root did not take the folder over")
            let run = try runRefused(s, ["--quiet"])
            #expect(run.status == 1 && run.err == expected, "\(run)")
            let status = try s.tv("status")
            #expect(status.status == 1 && status.err == expected, "\(status)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: s.dataDir).isEmpty)
        }
    }

    @Test("a ca/ folder another user made (or that others can write) in your data folder: refused before its CA is used", .enabled(if: ScratchUser.available))
    func caFolderOfAnotherUser() throws {
        let user = try ScratchUser()
        defer { user.remove() }
        try withSandbox { s in
            try s.createCA()
            user.own(s.caDir)
            let run = try runRefused(s, ["--quiet", "--inspect"])
            #expect(run.status == 1, "\(run)")
            #expect(run.err == "tv: The CA folder \(s.caDir) belongs to \(user.name), not to you (root), so the user \(user.name) could have replaced the CA; move that folder aside (`tv ca create` then makes a new CA), or run tv as \(user.name) (sudo -u \(user.name) tv …).\n", "\(run)")
            lchown(s.caDir, 0, 0)
            chmod(s.caDir, 0o777)
            let status = try s.tv("ca", "status")
            #expect(status.status == 1, "\(status)")
            #expect(status.err == "tv: The CA folder \(s.caDir) can be written by other users (mode 0777), so they could have replaced the CA; move that folder aside (`tv ca create` then makes a new CA), or, if you are sure the CA in it is yours, `chmod 700 \(s.caDir)`.\n", "\(status)")
            chmod(s.caDir, 0o700)
            #expect(try s.tv("ca", "status").status == 0)
        }
    }

    @Test("a folder at the control socket's path: said as such, not 'Address already in use'; the folder stays")
    func folderAtControlSocket() throws {
        try withSandbox { s in
            let socket = s.dataDir + "/run/control.sock"
            try FileManager.default.createDirectory(atPath: socket, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            chmod(s.dataDir, 0o700)
            let result = try runRefused(s, ["--quiet"])
            #expect(result.status == 1, "\(result)")
            #expect(result.err == "tv: A folder stands where the control socket \(socket) goes, so no session can be reached there; check what is in it, remove it (`rmdir \(socket)`) and run tv again.\n", "\(result)")
            var isDir: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: socket, isDirectory: &isDir) && isDir.boolValue)
        }
    }

    @Test("--inspect with the CA in doubt, or with no CA: refused, exit 1, said even under --quiet")
    func inspectWithoutUsableCA() throws {
        try withSandbox { s in
            let none = try runRefused(s, ["--quiet", "--inspect"])
            #expect(none.status == 1, "\(none)")
            #expect(none.err == "tv: --inspect asks to inspect this session, but there is no CA in \(s.caDir) to inspect with; make one with `tv setup` or `tv ca create` (`tv run --inspect --yes` makes one as it starts), or run without --inspect.\n", "\(none)")
            try s.createCA()
            try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: s.caDir + "/root-key.pem"))
            let doubt = try runRefused(s, ["--quiet", "--inspect"])
            #expect(doubt.status == 1, "\(doubt)")
            #expect(doubt.err == "tv: --inspect asks to inspect this session, but the CA is in doubt (\(s.caDir)/root-key.pem cannot be parsed as a PEM private key); repair or restore that file (`tv ca status` says more), or run without --inspect.\n", "\(doubt)")
        }
    }

    /// Found by a new-user trial: on a read-only file system the data folder (there, mode 0700)
    /// was said to be one tv "could not create"; its mode needs no change, so the command goes on
    /// and what cannot be written is said by what writes.
    @Test("a data folder on a read-only file system: not \"could not create\"; the command goes on to its own step",
          .enabled(if: getuid() == 0, "needs root for a mount namespace"))
    func readOnlyDataFolder() throws {
        let tv = try TVBinary.require()
        try withSandbox { s in
            try FileManager.default.createDirectory(atPath: s.dataDir, withIntermediateDirectories: true)
            chmod(s.dataDir, 0o700)
            let script = "mount --bind -o ro \"$1\" \"$1\" && shift && exec \"$@\""
            let run = try s.tool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", s.dataDir,
                                             tv, "--data-dir", s.dataDir, "exec", "--proxy", "--", "true"])
            #expect(run.status != 0, "\(run)")
            #expect(!run.err.contains("Could not create the data folder"), "\(run)")
            #expect(run.err.contains("there is no CA in \(s.dataDir)/ca yet"), "\(run)")
        }
    }
}
