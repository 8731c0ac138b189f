@testable import ControlChannel
import CSQLite
@testable import FlowStore
import Foundation
import LocalCA
@testable import Settings
import Testing
@testable import TVCore
@testable import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// EMFILE and ENFILE where tv turns an errno into a sentence at start: one kind,
/// `TooManyOpenFiles`, said as "too many open files" and the limit, never as the advice of the
/// failure it stood in for (a new-user trial under `ulimit -n 16`…`32`: "no PEM certificate could
/// be read" of a good CA file, "check the data folder's permissions" of the control socket,
/// "check that its folder exists" of the flow database, "make it a readable file again" of the
/// settings).
@Suite("Too many open files: one kind, one sentence")
struct TooManyOpenFilesTests {
    /// This process's soft limit, as the kind reads it.
    static var limit: UInt64 {
        var value = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &value)
        return UInt64(value.rlim_cur)
    }

    static func processSentence(_ opening: String) -> String {
        "tv could not open \(opening): too many open files (tv may have \(limit) open at once); raise the limit with `ulimit -n` "
            + "(e.g. `ulimit -n 4096` in the shell that starts tv) and try again."
    }

    @Test("EMFILE is this process's limit, ENFILE the system's; every other errno keeps its own sentence")
    func kinds() throws {
        let process = try #require(TooManyOpenFiles(errno: EMFILE, opening: "the control socket /d/run/control.sock"))
        #expect(process.scope == .process(limit: Self.limit))
        #expect(process.message == Self.processSentence("the control socket /d/run/control.sock"))
        let system = try #require(TooManyOpenFiles(errno: ENFILE, opening: "the flow database at /d/tunnelvision.sqlite3"))
        #expect(system.message == "tv could not open the flow database at /d/tunnelvision.sqlite3: too many open files in the system "
                + "(the kernel's table of open files, fs.file-max, is full); close some programs and try again.")
        #expect(TooManyOpenFiles(errno: EACCES, opening: "x") == nil)
        #expect(TooManyOpenFiles(errno: ENOENT, opening: "x") == nil)
        #expect(TooManyOpenFiles(opening: "x", scope: .process(limit: 0)).message
                == "tv could not open x: too many open files; raise the limit with `ulimit -n` (e.g. `ulimit -n 4096` in the shell that starts tv) and try again.")
    }

    @Test("the control socket: no descriptor for socket(2) is not a permissions problem")
    func controlSocket() {
        let failure = ControlServer.failure(EMFILE, path: "/d/run/control.sock")
        #expect((failure as? TooManyOpenFiles)?.message == Self.processSentence("the control socket /d/run/control.sock"))
        #expect(failure as? ControlError == nil)
        #expect(ControlServer.failure(EACCES, path: "/d/run/control.sock") as? ControlError
                == .socket(path: "/d/run/control.sock", reason: "Permission denied"))
    }

    @Test("the flow database: SQLite's system errno EMFILE, and open(2) of its files, say too many open files")
    func flowDatabase() {
        let path = "/d/tunnelvision.sqlite3"
        let fromSQLite = FlowStoreError.from(code: SQLITE_CANTOPEN, message: "unable to open database file", path: path, systemErrno: EMFILE)
        #expect(fromSQLite == .tooManyOpenFiles(TooManyOpenFiles(opening: "the flow database at \(path)", scope: .process(limit: Self.limit))))
        #expect(fromSQLite.message == Self.processSentence("the flow database at \(path)"))
        // Also when SQLite calls it an I/O error (the WAL's shared memory file).
        #expect(FlowStoreError.from(code: SQLITE_IOERR, message: "disk I/O error", path: path, systemErrno: ENFILE)
                == .tooManyOpenFiles(TooManyOpenFiles(opening: "the flow database at \(path)", scope: .system)))
        #expect(FlowStoreError.from(code: SQLITE_CANTOPEN, message: "unable to open database file", path: path, systemErrno: ENOENT)
                == .cannotOpen(path: path, reason: "unable to open database file"))
        #expect(FlowStoreError.opening(EMFILE, path: path + "-writer-3.lock", what: "the flow writer's lock \(path)-writer-3.lock").message
                == Self.processSentence("the flow writer's lock \(path)-writer-3.lock"))
        #expect(FlowStoreError.opening(EACCES, path: path) == .cannotOpen(path: path, reason: "Permission denied"))
    }

    @Test("a database in a missing folder is ENOENT: cannot open, said as before")
    func missingFolderStillCannotOpen() throws {
        let path = "/nonexistent-\(UUID().uuidString)/tunnelvision.sqlite3"
        #expect(throws: FlowStoreError.cannotOpen(path: path, reason: "No such file or directory")) {
            _ = try SQLiteDatabase(path: path)
        }
    }

    @Test("the settings file, a secret file and a CA file: the shortage is carried by each kind and said as it")
    func settingsSecretAndCA() {
        let settings = SettingsError.tooManyOpenFiles(TooManyOpenFiles(opening: "the settings file /d/settings.json", scope: .process(limit: 28)))
        #expect(settings.message == "tv could not open the settings file /d/settings.json: too many open files (tv may have 28 open at once); "
                + "raise the limit with `ulimit -n` (e.g. `ulimit -n 4096` in the shell that starts tv) and try again.")
        #expect(SecretFile.Failure.opening(EMFILE) == .tooManyOpenFiles(.process(limit: Self.limit)))
        #expect(SecretFile.Failure.opening(ENOENT) == .cannotOpen(reason: "No such file or directory"))
        let shortage = TooManyOpenFiles(opening: "the CA file /d/ca/root.pem", scope: .system)
        #expect(CADoubt(path: "/d/ca/root.pem", problem: "cannot be read (Too many open files in system)", shortage: shortage).message == shortage.message)
    }

    @Test("the banner says the connection cap when the descriptor limit made it small (under 256), and only then")
    func bannerCap() {
        #expect(RunBanner.connectionCapLine(cap: 4, configured: 10_000, limit: 64)
                == "at most 4 at once, as the open-file limit is 64; more are refused until some close (raise the limit with `ulimit -n` before starting tv)")
        #expect(RunBanner.connectionCapLine(cap: 255, configured: 10_000, limit: 829) != nil)
        #expect(RunBanner.connectionCapLine(cap: 256, configured: 10_000, limit: 832) == nil)
        #expect(RunBanner.connectionCapLine(cap: 1_348, configured: 10_000, limit: 4_096) == nil)
        // A cap asked for is not the limit's doing.
        #expect(RunBanner.connectionCapLine(cap: 4, configured: 4, limit: 1_048_576) == nil)
        var banner = RunBanner(listen: "127.0.0.1:8080", mode: "explicit proxy (HTTP CONNECT and plain HTTP)", caFingerprint: nil, caPath: nil,
                               inspecting: false, inspectionNote: "off", dataFolder: "/d", keylogPath: nil)
        banner.connectionCap = RunBanner.connectionCapLine(cap: 4, configured: 10_000, limit: 64)
        #expect(banner.lines.filter { $0.hasPrefix("  connections ") }
                == ["  connections at most 4 at once, as the open-file limit is 64; more are refused until some close (raise the limit with `ulimit -n` before starting tv)"])
    }
}
