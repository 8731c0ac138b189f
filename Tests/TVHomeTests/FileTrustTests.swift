import Foundation
import Testing
@testable import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// Issue 12 §8: which files and folders tv trusts with TLS secrets and the CA (pure rules, exact
/// values), and the sentences their refusals are rendered into.
@Suite("File trust rules")
struct FileTrustRuleTests {
    let root = FileOwner(id: 0, name: "root")
    let alice = FileOwner(id: 1001, name: "alice")

    func file(_ kind: FileFacts.Kind = .regular, _ owner: FileOwner, _ mode: UInt32) -> FileFacts {
        FileFacts(kind: kind, owner: owner, mode: mode)
    }

    @Test("a secret file: yours, regular, not a link, nothing for group or others")
    func secretFile() {
        #expect(FileTrust.secretFile(file(.regular, root, 0o600), you: root) == nil)
        #expect(FileTrust.secretFile(file(.regular, root, 0o400), you: root) == nil)
        #expect(FileTrust.secretFile(file(.regular, alice, 0o666), you: root) == .ownedBy(alice, you: root))
        #expect(FileTrust.secretFile(file(.regular, alice, 0o600), you: root) == .ownedBy(alice, you: root))
        #expect(FileTrust.secretFile(file(.regular, root, 0o644), you: root) == .openToOthers(mode: 0o644))
        #expect(FileTrust.secretFile(file(.regular, root, 0o640), you: root) == .openToOthers(mode: 0o640))
        #expect(FileTrust.secretFile(file(.regular, root, 0o602), you: root) == .openToOthers(mode: 0o602))
        #expect(FileTrust.secretFile(file(.symbolicLink, root, 0o777), you: root) == .symbolicLink)
        #expect(FileTrust.secretFile(file(.symbolicLink, alice, 0o777), you: root) == .symbolicLink)
        #expect(FileTrust.secretFile(file(.directory, root, 0o700), you: root) == .notRegularFile)
        #expect(FileTrust.secretFile(file(.other, root, 0o600), you: root) == .notRegularFile)
    }

    @Test("the data folder and ca/: yours and not writable by group or others (sticky does not help)")
    func ownFolder() {
        #expect(FileTrust.ownFolder(file(.directory, root, 0o700), you: root) == nil)
        #expect(FileTrust.ownFolder(file(.directory, root, 0o755), you: root) == nil)
        #expect(FileTrust.ownFolder(file(.directory, alice, 0o700), you: root) == .ownedBy(alice, you: root))
        #expect(FileTrust.ownFolder(file(.directory, root, 0o700), you: alice) == .ownedBy(root, you: alice))
        #expect(FileTrust.ownFolder(file(.directory, root, 0o770), you: root) == .writableByOthers(mode: 0o770))
        #expect(FileTrust.ownFolder(file(.directory, root, 0o1777), you: root) == .writableByOthers(mode: 0o1777))
        #expect(FileTrust.ownFolder(file(.regular, alice, 0o666), you: root) == nil, "a file there is said by makeDirectory")
    }

    @Test("a folder above: yours or root's, and not writable by others unless sticky")
    func folderAbove() {
        #expect(FileTrust.folderAbove(file(.directory, root, 0o755), you: alice) == nil)
        #expect(FileTrust.folderAbove(file(.directory, alice, 0o700), you: alice) == nil)
        #expect(FileTrust.folderAbove(file(.directory, root, 0o1777), you: alice) == nil)
        #expect(FileTrust.folderAbove(file(.directory, alice, 0o755), you: root) == .ownedBy(alice, you: root))
        #expect(FileTrust.folderAbove(file(.directory, root, 0o777), you: alice) == .writableByOthers(mode: 0o777))
        #expect(FileTrust.folderAbove(file(.directory, root, 0o757), you: root) == .writableByOthers(mode: 0o757))
        #expect(FileTrust.folderAbove(file(.directory, alice, 0o775), you: alice) == nil, "a user private group's write")
        #expect(FileTrust.folderAbove(file(.directory, root, 0o2775), you: alice) == nil, "Debian's /usr/local, root:staff")
    }

    @Test("the owner rule: the effective user's, whatever the mode, for a file, a folder and a secret file alike")
    func ownerRule() {
        #expect(FileTrust.owner(file(.regular, root, 0o644), you: root) == nil)
        #expect(FileTrust.owner(file(.regular, alice, 0o600), you: root) == .ownedBy(alice, you: root))
        #expect(FileTrust.owner(file(.regular, root, 0o600), you: alice) == .ownedBy(root, you: alice))
        #expect(FileTrust.owner(file(.directory, alice, 0o700), you: alice) == nil)
        #expect(FileTrust.owner(file(.symbolicLink, alice, 0o777), you: root) == .ownedBy(alice, you: root))
        // One rule under each of the others.
        #expect(FileTrust.secretFile(file(.regular, alice, 0o600), you: root) == FileTrust.owner(file(.regular, alice, 0o600), you: root))
        #expect(FileTrust.ownFolder(file(.directory, alice, 0o700), you: root) == FileTrust.owner(file(.directory, alice, 0o700), you: root))
    }

    @Test("the CA's one sentence for another user's file or folder, or one others may write")
    func caClause() {
        #expect(FileTrustProblem.ownedBy(alice, you: root).caClause
                == "belongs to alice, not to you (root), so the user alice could have replaced the CA")
        #expect(FileTrustProblem.writableByOthers(mode: 0o770).caClause
                == "can be written by other users (mode 0770), so they could have replaced the CA")
        #expect(FileTrustProblem.openToOthers(mode: 0o666).caClause
                == "can be read and written by other users (mode 0666), so they could have replaced the CA")
        #expect(FileTrustProblem.symbolicLink.caClause == "is a symbolic link")
        #expect(FileTrustProblem.notRegularFile.caClause == "is not a regular file")
    }

    @Test("tightening a folder of ours: bits only taken away, never given")
    func tightened() {
        #expect(FileModes.tightened(0o755, to: 0o700) == 0o700)
        #expect(FileModes.tightened(0o750, to: 0o700) == 0o700)
        #expect(FileModes.tightened(0o711, to: 0o700) == 0o700)
        #expect(FileModes.tightened(0o555, to: 0o700) == 0o500)
        #expect(FileModes.tightened(0o2755, to: 0o700) == 0o700)
        #expect(FileModes.tightened(0o700, to: 0o700) == nil)
        #expect(FileModes.tightened(0o500, to: 0o700) == nil)
    }

    @Test("clauses and octal modes")
    func clauses() {
        #expect(FileTrust.octal(0o644) == "0644")
        #expect(FileTrust.octal(0o1777) == "1777")
        #expect(FileTrust.octal(0) == "0000")
        #expect(FileTrustProblem.symbolicLink.clause == "is a symbolic link")
        #expect(FileTrustProblem.notRegularFile.clause == "is not a regular file")
        #expect(FileTrustProblem.ownedBy(alice, you: root).clause == "belongs to alice, not to you (root)")
        #expect(FileTrustProblem.openToOthers(mode: 0o644).clause == "can be read by other users (mode 0644)")
        #expect(FileTrustProblem.openToOthers(mode: 0o666).clause == "can be read and written by other users (mode 0666)")
        #expect(FileTrustProblem.openToOthers(mode: 0o620).clause == "can be written by other users (mode 0620)")
        #expect(FileTrustProblem.writableByOthers(mode: 0o777).clause == "can be written by other users (mode 0777)")
        #expect(alice.sudoHint == "sudo -u alice tv …")
        #expect(root.sudoHint == "sudo tv …")
    }

    @Test("the data folder's refusals, one sentence each: what, why, and what to do")
    func dataFolderSentences() {
        #expect(TVHomeError.untrusted(path: "/d", place: .dataFolder, problem: .ownedBy(alice, you: root)).message
                == "The data folder /d belongs to alice, not to you (root), so the user alice could change what tv trusts in it (such as the CA); run tv as alice (sudo -u alice tv …) to use it, or pass --data-dir with a folder of your own.")
        #expect(TVHomeError.untrusted(path: "/d", place: .dataFolder, problem: .ownedBy(root, you: alice)).message
                == "The data folder /d belongs to root, not to you (alice), and its sessions, flows and CA are root's; run tv as root (sudo tv …) to use it, or pass --data-dir with a folder of your own.")
        #expect(TVHomeError.untrusted(path: "/d", place: .dataFolder, problem: .writableByOthers(mode: 0o777)).message
                == "The data folder /d can be written by other users (mode 0777), so they could change what tv trusts in it (such as the CA); check what is in it, then `chmod 700 /d`, or pass --data-dir with a folder of your own.")
        #expect(TVHomeError.untrusted(path: "/d/ca", place: .caFolder, problem: .ownedBy(alice, you: root)).message
                == "The CA folder /d/ca belongs to alice, not to you (root), so the user alice could have replaced the CA; move that folder aside (`tv ca create` then makes a new CA), or run tv as alice (sudo -u alice tv …).")
        #expect(TVHomeError.untrusted(path: "/d/ca", place: .caFolder, problem: .writableByOthers(mode: 0o770)).message
                == "The CA folder /d/ca can be written by other users (mode 0770), so they could have replaced the CA; move that folder aside (`tv ca create` then makes a new CA), or, if you are sure the CA in it is yours, `chmod 700 /d/ca`.")
        #expect(TVHomeError.untrusted(path: "/a", place: .above(dataFolder: "/a/d"), problem: .ownedBy(alice, you: root)).message
                == "The folder /a above the data folder /a/d belongs to alice, not to you (root), so the user alice could put another data folder in its place; pass --data-dir with a folder of your own in a place only you and root control.")
        #expect(TVHomeError.untrusted(path: "/a", place: .above(dataFolder: "/a/d"), problem: .writableByOthers(mode: 0o777)).message
                == "The folder /a above the data folder /a/d can be written by other users (mode 0777) and is not sticky, so they could put another data folder in its place; `chmod o-w /a`, or pass --data-dir with a folder of your own elsewhere.")
        #expect(TVHomeError.unreachable(path: "/r/d", closedFolder: "/r", owner: root, you: alice).message
                == "The data folder /r/d cannot be reached by you (alice): the folder /r on the way is closed to you (it belongs to root); run tv as root (sudo tv …) to use it, or pass --data-dir with a folder of your own.")
    }
}

/// The same rules against real folders and files (ownership by another user needs root: chown).
@Suite("File trust on disk")
struct FileTrustDiskTests {
    static let isRoot = geteuid() == 0
    let you = FileOwner.current

    @Test("FileModes.makeDirectory: missing parents made with the mode; a file system that takes no new folders (/proc) said in words, not Foundation's")
    func makeDirectory() throws {
        let base = try temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileModes.makeDirectory(base + "/a/b/c", mode: 0o700)
        for path in [base + "/a", base + "/a/b", base + "/a/b/c"] { #expect(FileModes.permissions(of: path) == 0o700, "\(path)") }
        #expect(throws: TVHomeError.cannotCreate(path: "/proc/tv-nope-\(getpid())", reason: "the folder takes no new files")) {
            try FileModes.makeDirectory("/proc/tv-nope-\(getpid())", mode: 0o700)
        }
        // A file where a folder goes (a trial's `captures`): named as such, with what to do.
        _ = FileManager.default.createFile(atPath: base + "/captures", contents: Data())
        #expect(throws: TVHomeError.fileWhereFolderGoes(path: base + "/captures")) { try FileModes.makeDirectory(base + "/captures", mode: 0o700) }
        #expect(TVHomeError.fileWhereFolderGoes(path: "/d/captures").message
                == "/d/captures is a file where tv keeps a folder; move that file aside (tv makes the folder again) or pass --data-dir.")
        // A folder of ours is tightened; a link's target keeps its mode (a trial's `captures`
        // linked to a sticky 1777 folder, as /tmp is, left it 0700 for everyone).
        try FileManager.default.createDirectory(atPath: base + "/open", withIntermediateDirectories: false)
        chmod(base + "/open", 0o755)
        try FileModes.makeDirectory(base + "/open", mode: 0o700)
        #expect(FileModes.permissions(of: base + "/open") == 0o700)
        for target in [0o1777, 0o755] as [mode_t] {
            try FileManager.default.createDirectory(atPath: base + "/disk-\(target)", withIntermediateDirectories: false)
            chmod(base + "/disk-\(target)", target)
            #expect(symlink(base + "/disk-\(target)", base + "/linked-\(target)") == 0)
            try FileModes.makeDirectory(base + "/linked-\(target)", mode: 0o700)
            #expect(FileModes.permissions(of: base + "/disk-\(target)") == target, "\(String(target, radix: 8))")
        }
    }

    @Test("FileModes.tightenFolder: a 0755 folder of ours becomes 0700; a 0700 one, a link's target and another user's folder are left as they are")
    func tightenFolder() throws {
        let base = try temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/ca", withIntermediateDirectories: false)
        chmod(base + "/ca", 0o755)
        #expect(FileModes.tightenFolder(base + "/ca", to: 0o700) == 0o700)
        #expect(FileModes.permissions(of: base + "/ca") == 0o700)
        #expect(FileModes.tightenFolder(base + "/ca", to: 0o700) == nil)
        try FileManager.default.createDirectory(atPath: base + "/elsewhere", withIntermediateDirectories: false)
        chmod(base + "/elsewhere", 0o755)
        #expect(symlink(base + "/elsewhere", base + "/link") == 0)
        #expect(FileModes.tightenFolder(base + "/link", to: 0o700) == nil)
        #expect(FileModes.permissions(of: base + "/elsewhere") == 0o755)
        #expect(FileModes.tightenFolder(base + "/missing", to: 0o700) == nil)
        if Self.isRoot {
            chown(base + "/elsewhere", 65534, 65534)
            #expect(FileModes.tightenFolder(base + "/elsewhere", to: 0o700) == nil)
            #expect(FileModes.permissions(of: base + "/elsewhere") == 0o755)
        }
    }

    func temporary() throws -> String {
        let base = (NSTemporaryDirectory() as NSString).appendingPathComponent("tvtrust-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        chmod(base, 0o700)
        return base
    }

    @Test("checkTrust: a missing data folder and a 0700 one pass; group/other-writable ones and ca/ are refused; a sticky folder above passes, a non-sticky writable one does not")
    func dataFolderModes() throws {
        let base = try temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let home = TVHome(path: base + "/data")
        try home.checkTrust()
        try home.ensureExists()
        try home.checkTrust()
        chmod(home.path, 0o770)
        #expect(throws: TVHomeError.untrusted(path: home.path, place: .dataFolder, problem: .writableByOthers(mode: 0o770))) {
            try home.checkTrust()
        }
        #expect(throws: TVHomeError.untrusted(path: home.path, place: .dataFolder, problem: .writableByOthers(mode: 0o770))) {
            try home.ensureExists()
        }
        #expect(FileModes.permissions(of: home.path) == 0o770, "a refused folder's mode is left as it is")
        chmod(home.path, 0o700)
        mkdir(home.caDirectory, 0o700)
        chmod(home.caDirectory, 0o757)
        #expect(throws: TVHomeError.untrusted(path: home.caDirectory, place: .caFolder, problem: .writableByOthers(mode: 0o757))) {
            _ = try home.requireExisting()
        }
        chmod(home.caDirectory, 0o700)
        chmod(base, 0o1777)
        try home.checkTrust()
        chmod(base, 0o777)
        #expect(throws: TVHomeError.untrusted(path: base, place: .above(dataFolder: home.path), problem: .writableByOthers(mode: 0o777))) {
            try home.checkTrust()
        }
        // Through a symbolic link: the folders above the real path count too.
        chmod(base, 0o700)
        let open = base + "/open"
        mkdir(open, 0o700)
        chmod(open, 0o777)
        mkdir(open + "/real", 0o700)
        let link = TVHome(path: base + "/link")
        symlink(open + "/real", link.path)
        #expect(throws: TVHomeError.untrusted(path: open, place: .above(dataFolder: link.path), problem: .writableByOthers(mode: 0o777))) {
            try link.checkTrust()
        }
    }

    @Test("checkTrust: a data folder or ca/ of another user is refused and left as it is", .enabled(if: isRoot))
    func otherOwner() throws {
        let base = try temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let nobody = FileOwner.named(65534)
        let home = TVHome(path: base + "/data")
        mkdir(home.path, 0o755)
        chown(home.path, 65534, 65534)
        #expect(throws: TVHomeError.untrusted(path: home.path, place: .dataFolder, problem: .ownedBy(nobody, you: you))) {
            try home.ensureExists()
        }
        #expect(FileModes.permissions(of: home.path) == 0o755, "root did not chmod another user's folder")
        chown(home.path, 0, 0)
        mkdir(home.caDirectory, 0o700)
        chown(home.caDirectory, 65534, 65534)
        #expect(throws: TVHomeError.untrusted(path: home.caDirectory, place: .caFolder, problem: .ownedBy(nobody, you: you))) {
            try home.ensureExists()
        }
    }

    @Test("KeyLogText: a key log starts with a comment or LABEL HEX HEX; anything else, or a first line too long, is not one")
    func keyLogText() {
        func looks(_ text: String, limit: Int = 512) -> Bool { KeyLogText.looksLikeKeyLog(ArraySlice(Array(text.utf8)), limit: limit) }
        #expect(looks(""))
        #expect(looks("\n\n"))
        #expect(looks("# SSL/TLS secrets log file, generated by NSS\n"))
        #expect(looks("CLIENT_RANDOM abcdef 0123\n"))
        #expect(looks("\r\nCLIENT_HANDSHAKE_TRAFFIC_SECRET 00FF 11\r\n"))
        #expect(looks("EXPORTER_SECRET 00 11"), "a last line without its newline")
        #expect(!looks("{\"a\": 1}\n"))
        #expect(!looks("-----BEGIN PRIVATE KEY-----\n"))
        #expect(!looks("root:x:0:0:root:/root:/bin/bash\n"))
        #expect(!looks("client_random ab cd\n"), "labels are capitals")
        #expect(!looks("CLIENT_RANDOM ab\n"))
        #expect(!looks("CLIENT_RANDOM ab cd ef\n"))
        #expect(!looks("CLIENT_RANDOM ab  cd\n"))
        #expect(!looks("CLIENT_RANDOM xyz cd\n"))
        // Every line counts, not the first alone: a script or a Markdown file with a `#` first
        // line took secrets (a re-check).
        #expect(!looks("#!/bin/sh\necho important\n"))
        #expect(!looks("# My Project\n\nSome text.\n"))
        #expect(looks("# SSL/TLS secrets log file\nCLIENT_RANDOM ab cd\nSERVER_TRAFFIC_SECRET_0 ab cd\n"))
        #expect(!looks("CLIENT_RANDOM ab cd\nnot a key line\n"))
        // A read that cut the last line: judged by the whole lines before it.
        #expect(looks("CLIENT_RANDOM ab cd\nCLIENT_RAN", limit: 30))
        #expect(!looks(String(repeating: "A", count: 320), limit: 320), "a first line longer than any key log line")
    }

    @Test("SecretFile: created 0600; a symbolic link, a file others can read, another user's file and a FIFO are refused and nothing is written")
    func secretFile() throws {
        let base = try temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let fresh = base + "/keys.log"
        let line1 = "CLIENT_RANDOM " + String(repeating: "ab", count: 32) + " " + String(repeating: "01", count: 48) + "\n"
        let line2 = "SERVER_TRAFFIC_SECRET_0 " + String(repeating: "CD", count: 32) + " " + String(repeating: "02", count: 48) + "\n"
        let fd = try SecretFile.openKeyLogForAppend(fresh)
        #expect(write(fd, line1, line1.utf8.count) == line1.utf8.count)
        close(fd)
        #expect(FileModes.permissions(of: fresh) == 0o600)
        let again = try SecretFile.openKeyLogForAppend(fresh)
        #expect(write(again, line2, line2.utf8.count) == line2.utf8.count)
        close(again)
        #expect(try String(contentsOfFile: fresh, encoding: .utf8) == line1 + line2, "appends")

        // A file that holds something else is refused before its mode is judged, and kept as it
        // was (tv's own settings and the CA's key took secrets: a new-user trial).
        for (name, text, mode) in [("settings.json", "{\n  \"capture.enabled\": true\n}\n", 0o600),
                                   ("root-key.pem", "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----\n", 0o600),
                                   ("passwd", "root:x:0:0:root:/root:/bin/bash\n", 0o644)] {
            let path = base + "/" + name
            FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            chmod(path, mode_t(mode))
            #expect(throws: SecretFile.KeyLogFailure.notAKeyLog) { _ = try SecretFile.openKeyLogForAppend(path) }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text, "\(name)")
        }

        let target = base + "/target"
        let link = base + "/link.log"
        symlink(target, link)
        #expect(throws: SecretFile.KeyLogFailure.secretFile(.refused(.symbolicLink))) { _ = try SecretFile.openKeyLogForAppend(link) }
        #expect(!FileManager.default.fileExists(atPath: target), "the link was not followed")

        let readable = base + "/readable.log"
        FileManager.default.createFile(atPath: readable, contents: Data("# SSL/TLS secrets log file\n".utf8))
        chmod(readable, 0o644)
        #expect(throws: SecretFile.KeyLogFailure.secretFile(.refused(.openToOthers(mode: 0o644)))) { _ = try SecretFile.openKeyLogForAppend(readable) }

        let fifo = base + "/fifo"
        mkfifo(fifo, 0o600)
        #expect(throws: SecretFile.KeyLogFailure.secretFile(.refused(.notRegularFile))) { _ = try SecretFile.openKeyLogForAppend(fifo) }

        #expect(throws: SecretFile.KeyLogFailure.secretFile(.cannotOpen(reason: "No such file or directory"))) {
            _ = try SecretFile.openKeyLogForAppend(base + "/missing/keys.log")
        }

        if Self.isRoot {
            let theirs = base + "/theirs.log"
            FileManager.default.createFile(atPath: theirs, contents: nil)
            chmod(theirs, 0o666)
            chown(theirs, 65534, 65534)
            #expect(throws: SecretFile.KeyLogFailure.secretFile(.refused(.ownedBy(FileOwner.named(65534), you: you)))) {
                _ = try SecretFile.openKeyLogForAppend(theirs)
            }
            #expect(FileManager.default.contents(atPath: theirs) == Data())
        }
    }
}
