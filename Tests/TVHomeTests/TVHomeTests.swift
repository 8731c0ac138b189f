import Foundation
import Testing
@testable import TVHome

/// `$TV_HOME` resolution: --data-dir, then TV_HOME, then $XDG_DATA_HOME/tunnelvision, then
/// ~/.local/share/tunnelvision (DESIGN.md §4; issue 2).
@Suite("TVHome resolution")
struct TVHomeResolutionTests {
    let full = ["TV_HOME": "/env/tv", "XDG_DATA_HOME": "/xdg", "HOME": "/home/u"]

    @Test("--data-dir wins over everything")
    func dataDirFirst() throws {
        #expect(try TVHome.resolve(dataDir: "/given", environment: full).path == "/given")
    }

    @Test("then TV_HOME")
    func tvHomeSecond() throws {
        #expect(try TVHome.resolve(dataDir: nil, environment: full).path == "/env/tv")
        // An empty --data-dir (a script's unset variable) is refused, never the default folder (a trial).
        #expect(throws: TVHomeError.emptyDataDir) { try TVHome.resolve(dataDir: "", environment: full) }
        #expect(TVHomeError.emptyDataDir.exitCode == 2)
    }

    @Test("then $XDG_DATA_HOME/tunnelvision")
    func xdgThird() throws {
        var env = full
        env["TV_HOME"] = nil
        #expect(try TVHome.resolve(dataDir: nil, environment: env).path == "/xdg/tunnelvision")
        env["TV_HOME"] = ""  // set but empty counts as unset
        #expect(try TVHome.resolve(dataDir: nil, environment: env).path == "/xdg/tunnelvision")
    }

    @Test("a relative or empty XDG_DATA_HOME is ignored (XDG Base Directory spec), falling back to HOME")
    func relativeXDGIgnored() throws {
        #expect(try TVHome.resolve(dataDir: nil, environment: ["XDG_DATA_HOME": "rel/data", "HOME": "/home/u"]).path
                == "/home/u/.local/share/tunnelvision")
        #expect(try TVHome.resolve(dataDir: nil, environment: ["XDG_DATA_HOME": "", "HOME": "/home/u"]).path
                == "/home/u/.local/share/tunnelvision")
    }

    @Test("then ~/.local/share/tunnelvision")
    func homeLast() throws {
        #expect(try TVHome.resolve(dataDir: nil, environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/tunnelvision")
    }

    @Test("nothing set is refused with the way out")
    func noHome() {
        #expect(throws: TVHomeError.noHome) { try TVHome.resolve(dataDir: nil, environment: [:]) }
        #expect(throws: TVHomeError.noHome) { try TVHome.resolve(dataDir: nil, environment: ["HOME": ""]) }
        #expect(TVHomeError.noHome.message.contains("--data-dir"))
        #expect(TVHomeError.noHome.exitCode == 1)
    }

    @Test("paths are made absolute and lose trailing slashes")
    func absolute() throws {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(try TVHome.resolve(dataDir: "rel/dir/", environment: [:]).path == cwd + "/rel/dir")
        #expect(try TVHome.resolve(dataDir: nil, environment: ["TV_HOME": "tvh"]).path == cwd + "/tvh")
        #expect(TVHome(path: "/a/b//").path == "/a/b")
        #expect(TVHome(path: "/").path == "/")
    }

    @Test("the layout inside the data folder")
    func layout() {
        let home = TVHome(path: "/d")
        #expect(home.caDirectory == "/d/ca")
        #expect(home.runDirectory == "/d/run")
        #expect(home.contentDirectory == "/d/content")
        #expect(home.databasePath == "/d/tunnelvision.sqlite3")
    }
}

@Suite("TVHome folders and files")
struct TVHomeFileTests {
    func temporary() -> String {
        let path = NSTemporaryDirectory() + "/tvhome-\(UUID().uuidString)"
        return path
    }

    @Test("ensureExists makes the folder and its parents; the folder is 0700, also when it existed")
    func ensureExists() throws {
        let base = temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let home = TVHome(path: base + "/a/b")
        try home.ensureExists()
        #expect(FileModes.permissions(of: home.path) == 0o700)
        chmod(home.path, 0o755)
        try home.ensureExists()
        #expect(FileModes.permissions(of: home.path) == 0o700)
        try home.ensureDirectory(home.runDirectory)
        #expect(FileModes.permissions(of: home.runDirectory) == 0o700)
        // Bits are only taken away: a folder its owner made read-only is said, and stays so.
        chmod(home.path, 0o555)
        #expect(throws: TVHomeError.readOnlyFolder(path: home.path, mode: 0o555)) { try home.ensureExists() }
        #expect(FileModes.permissions(of: home.path) == 0o555)
        #expect(TVHomeError.readOnlyFolder(path: "/d", mode: 0o500).message
                == "The folder /d is read-only (mode 0500) and tv does not change that; make it writable (`chmod u+w /d`) or pass --data-dir with another folder.")
        chmod(home.path, 0o700)
    }

    @Test("requireExisting: a missing folder is refused in one sentence and nothing is made; an existing one passes")
    func requireExisting() throws {
        let base = temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let missing = TVHome(path: base + "/deep")
        #expect(!missing.exists)
        #expect(throws: TVHomeError.missing(path: base + "/deep")) { try missing.requireExisting() }
        #expect(TVHomeError.missing(path: "/nonexistent/deep").message
                == "There is no data folder at /nonexistent/deep yet; `tv run`, `tv exec` or `tv setup` makes one.")
        #expect(!FileManager.default.fileExists(atPath: base))
        try missing.ensureExists()
        #expect(try missing.requireExisting() == missing)
    }

    @Test("a file where the data folder should be is refused")
    func fileInTheWay() throws {
        let base = temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: base))
        let file = TVHome(path: base).path   // as written: the messages name the path given
        #expect(throws: TVHomeError.fileInTheWay(path: file, file: file)) { try TVHome(path: base).ensureExists() }
        // Said before anything reads it (a trial's `ca status` said "CA: none yet"), and for a
        // file above the folder too.
        #expect(throws: TVHomeError.fileInTheWay(path: file, file: file)) { try TVHome(path: base).checkTrust() }
        #expect(throws: TVHomeError.fileInTheWay(path: file + "/sub/x", file: file)) { try TVHome(path: base + "/sub/x").checkTrust() }
        #expect(TVHomeError.fileInTheWay(path: "/d/sub", file: "/d").message
                == "The data folder /d/sub cannot be made: /d is a file, not a folder; pass --data-dir with a folder (tv makes it when it is missing).")
        try TVHome(path: base + ".missing/a").checkTrust()   // nothing there yet: fine
    }

    @Test("writeAtomically sets the mode from the start, replaces whole, and leaves no temporary file")
    func writeAtomically() throws {
        let base = temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileModes.makeDirectory(base, mode: 0o700)
        let path = base + "/key.pem"
        try FileModes.writeAtomically(Array("one".utf8), to: path, mode: 0o600)
        #expect(FileModes.permissions(of: path) == 0o600)
        try FileModes.writeAtomically(Array("two".utf8), to: path, mode: 0o644)
        #expect(FileManager.default.contents(atPath: path) == Data("two".utf8))
        #expect(FileModes.permissions(of: path) == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: base) == ["key.pem"])
    }

    @Test("Spelling.closest: within two edits and a third of the word, no ties, case ignored")
    func spelling() {
        let modes = ["regular", "socks5", "transparent", "tun"]
        #expect(Spelling.closest(to: "sock5", among: modes) == "socks5")
        #expect(Spelling.closest(to: "SOCKS", among: modes) == "socks5")
        #expect(Spelling.closest(to: "transparant", among: modes) == "transparent")
        #expect(Spelling.closest(to: "xyz", among: modes) == nil)
        #expect(Spelling.closest(to: "tu", among: modes) == "tun")
        #expect(Spelling.closest(to: "t", among: modes) == nil)  // two edits: more than a third of "tun"
        #expect(Spelling.closest(to: "flws", among: ["flows", "flow"]) == "flows")
        #expect(Spelling.closest(to: "flo", among: ["flows", "flow"]) == "flow")
        #expect(Spelling.closest(to: "cat", among: ["bat", "cab"]) == nil)  // a tie names nothing
        // Two neighbours swapped are one edit: "hra" is within a third of "har".
        #expect(Spelling.closest(to: "hra", among: ["har"]) == "har")
        #expect(Spelling.closest(to: "stauts", among: ["status", "stop"]) == "status")
        #expect(Spelling.closest(to: "rhe", among: ["har"]) == nil)  // a swap and a substitution: two edits of three letters
        #expect(Spelling.distance(Array("hra"), Array("har")) == 1)
        #expect(Spelling.distance(Array("ab"), Array("ba")) == 1)
        #expect(Spelling.distance(Array("ca"), Array("abc")) == 3)  // restricted: no edit inside a swapped pair
        #expect(Spelling.distance(Array("kitten"), Array("sitting")) == 3)
        #expect(Spelling.suggestion(for: "sock5", among: modes) == " Did you mean 'socks5'?")
        #expect(Spelling.suggestion(for: "xyz", among: modes) == "")
    }

    @Test("the temporary file sits beside the target; a bare file name's in the current folder, never in /")
    func temporaryPath() {
        #expect(FileModes.temporaryPath(for: "/a/b.pem", nonce: "7-9") == "/a/.b.pem.tmp-7-9")
        #expect(FileModes.temporaryPath(for: "root.pem", nonce: "7-9") == "./.root.pem.tmp-7-9")
        #expect(FileModes.temporaryPath(for: "out/root.pem", nonce: "7-9") == "out/.root.pem.tmp-7-9")
        // One character (`-o -`, `-o a`): NSString's path methods trapped here once.
        #expect(FileModes.temporaryPath(for: "-", nonce: "7-9") == "./.-.tmp-7-9")
        #expect(FileModes.temporaryPath(for: "a", nonce: "7-9") == "./.a.tmp-7-9")
        #expect(FileModes.temporaryPath(for: "/a", nonce: "7-9") == "/.a.tmp-7-9")
    }

    @Test("a link, a pipe or a folder at the target is never replaced (as root, -o /dev/stdout was); a regular file is")
    func onlyRegularFilesAreReplaced() throws {
        let folder = temporary()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/target.json", link = folder + "/link.json", fifo = folder + "/fifo"
        try FileModes.writeAtomically(Array("old".utf8), to: target, mode: 0o600)
        #expect(symlink(target, link) == 0)
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [link, fifo, folder] {
            #expect(throws: FileWriteError(path: path, reason: FileWriteError.notRegular)) {
                try FileModes.writeAtomically(Array("new".utf8), to: path, mode: 0o600)
            }
        }
        var st = stat()
        #expect(lstat(link, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(lstat(fifo, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "old")
        #expect(FileWriteError(path: link, reason: FileWriteError.notRegular).message
                == "Did not write \(link): it is a link, a device, a pipe or a folder, which tv does not replace; give the path of a file to create or replace.")
        try FileModes.writeAtomically(Array("new".utf8), to: target, mode: 0o600)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new")
    }

    @Test("writing into a folder that does not exist says so, and what to do")
    func missingFolder() {
        let path = temporary() + "/no-such-folder/x.har"
        #expect(throws: FileWriteError(path: path, reason: FileWriteError.noFolder)) {
            try FileModes.writeAtomically(Array("x".utf8), to: path, mode: 0o600)
        }
        let folder = (path as NSString).deletingLastPathComponent
        #expect(FileWriteError(path: path, reason: FileWriteError.noFolder).message
                == "Could not write \(path): the folder \(folder) does not exist; create it or write somewhere else.")
        // A folder that is there and takes no files (a trial's /proc read "does not exist").
        #expect(throws: FileWriteError(path: "/proc/x.har", reason: FileWriteError.noNewFiles)) {
            try FileModes.writeAtomically(Array("x".utf8), to: "/proc/x.har", mode: 0o600)
        }
        #expect(FileWriteError(path: "/proc/x.har", reason: FileWriteError.noNewFiles).message
                == "Could not write /proc/x.har: the folder /proc takes no new files (a kernel's folder such as /proc or /sys); write somewhere else.")
        // A path ending in "/" names a folder (`-o newdir/`): one that is not there is said so
        // (a trial's read "the folder . takes no new files").
        let named = temporary() + "/newdir/"
        #expect(throws: FileWriteError(path: named, reason: FileWriteError.namedFolderMissing)) {
            try FileModes.writeAtomically(Array("x".utf8), to: named, mode: 0o600)
        }
        #expect(FileWriteError(path: "newdir/", reason: FileWriteError.namedFolderMissing).message
                == "Could not write newdir/: the folder newdir does not exist; create it or write somewhere else.")
    }

    @Test("writeAtomically(exclusive:) never replaces an existing file")
    func exclusive() throws {
        let base = temporary()
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileModes.makeDirectory(base, mode: 0o700)
        let path = base + "/root.pem"
        try FileModes.writeAtomically(Array("first".utf8), to: path, mode: 0o600, exclusive: true)
        #expect(throws: FileWriteError.self) {
            try FileModes.writeAtomically(Array("second".utf8), to: path, mode: 0o600, exclusive: true)
        }
        #expect(FileManager.default.contents(atPath: path) == Data("first".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: base) == ["root.pem"])
    }

    @Test("permissions(of:) is nil for a missing path")
    func missing() {
        #expect(FileModes.permissions(of: "/nonexistent-\(UUID().uuidString)") == nil)
    }
}

@Suite("JSONValue")
struct JSONValueTests {
    @Test("keys keep their order; strings are escaped per RFC 8259 §7")
    func serialization() throws {
        let value = JSONValue.object([("b", .string("a\"b\\c\n\t\u{01}é")), ("a", .int(-3)), ("n", .null),
                                      ("t", .bool(true)), ("d", .double(1.5)), ("inf", .double(.infinity)),
                                      ("list", .array([.int(1), .array([])])), ("o", .object([]))])
        let text = value.serialized()
        #expect(text == #"{"b":"a\"b\\c\n\t\u0001é","a":-3,"n":null,"t":true,"d":1.5,"inf":null,"list":[1,[]],"o":{}}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(value.serialized(pretty: true).utf8)) as? [String: Any]
        #expect(parsed?["b"] as? String == "a\"b\\c\n\t\u{01}é")
        #expect(value.serialized(pretty: true).contains("\n  \"a\": -3,\n"))
    }
}
