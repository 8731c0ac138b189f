import Foundation
@testable import Settings
import Testing
import TVHome
#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder, removed when the test ends.
final class TempFolder {
    let path: String
    init() {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("tv-settings-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }
    deinit {
        _ = Child.chattr("-i", path)
        try? FileManager.default.removeItem(atPath: path)
    }
    func write(_ name: String, _ text: String) {
        #expect(FileManager.default.createFile(atPath: path + "/" + name, contents: Data(text.utf8)), "could not write \(name)")
    }
    func read(_ name: String) -> String? { FileManager.default.contents(atPath: path + "/" + name).map { String(decoding: $0, as: UTF8.self) } }
}

extension Child {
    /// Runs chattr(1) on `path`; true when it succeeded (ext4/xfs; tmpfs cannot).
    static func chattr(_ flag: String, _ path: String) -> Bool {
        let finished = Child.run("/usr/bin/chattr", [flag, path], environment: ProcessInfo.processInfo.environment, timeout: 30)
        return finished.startFailure == nil && finished.status == 0
    }
}

/// Records what a live session was told.
final class RecordingSession: LiveSessionNotifier, @unchecked Sendable {
    private let lock = NSLock()
    private var _keys: [String] = []
    var keys: [String] { lock.lock(); defer { lock.unlock() }; return _keys }
    func settingSaved(key: String, record: SettingsRecord) -> LiveSessionDelivery {
        lock.lock(); _keys.append(key); lock.unlock()
        return .applied
    }
}

struct SettingsStoreTests {
    @Test func aMissingFileReadsAsDefaults() throws {
        let dir = TempFolder()
        let record = try SettingsFile(path: dir.path + "/settings.json").load()
        #expect(record[SettingKeys.inspectionEnabled] == false)
        #expect(record[SettingKeys.trustStore] == "system")
        #expect(record[SettingKeys.introSeen] == false)
        #expect(record.values.isEmpty)
    }

    @Test func setIsSavedAtomicallyWithMode0600ThenTheSessionIsTold() throws {
        let dir = TempFolder()
        let session = RecordingSession()
        let store = SettingsStore(file: SettingsFile(path: dir.path + "/home/settings.json"), liveSession: session)
        let change = try store.set(SettingKeys.inspectionEnabled, to: true)
        #expect(change == SettingChange(key: "inspection.enabled", oldText: "off", newText: "on", saved: true, delivery: .applied))
        #expect(dir.read("home/settings.json") == "{\n  \"inspection.enabled\": true\n}\n")
        #expect(FileModes.permissions(of: dir.path + "/home/settings.json") == 0o600)
        #expect(FileModes.permissions(of: dir.path + "/home") == 0o700)
        #expect(session.keys == ["inspection.enabled"])
        // Setting the saved value again writes nothing and tells nobody.
        let again = try store.set(SettingKeys.inspectionEnabled, to: true)
        #expect(again.saved == false)
        #expect(session.keys == ["inspection.enabled"])
    }

    @Test func unknownKeysSurviveASave() throws {
        let dir = TempFolder()
        dir.write("settings.json", #"{"content.keep": true, "future.thing": {"a": [1, 2.5, null]}, "trust.store": "nss:/n"}"#)
        let store = SettingsStore(file: SettingsFile(path: dir.path + "/settings.json"))
        _ = try store.set(SettingKeys.introSeen, to: true)
        #expect(dir.read("settings.json") == """
        {
          "content.keep": true,
          "future.thing": {
            "a": [
              1,
              2.5,
              null
            ]
          },
          "intro.seen": true,
          "trust.store": "nss:/n"
        }

        """)
    }

    @Test(arguments: [
        ("{not json", "it is not valid JSON"),
        ("[true]", "it is not a JSON object"),
        ("", "it is not valid JSON"),
        (#"{"inspection.enabled": "yes"}"#, #"inspection.enabled holds "yes", which is not a value it can take"#),
        (#"{"trust.store": 3}"#, "trust.store holds 3, which is not a value it can take"),
        (#"{"inspection.enabled": 1}"#, "inspection.enabled holds 1, which is not a value it can take"),
    ])
    func aCorruptFileIsAnErrorNamingTheFile(text: String, reason: String) throws {
        let dir = TempFolder()
        dir.write("settings.json", text)
        let path = dir.path + "/settings.json"
        #expect(throws: SettingsError.corrupt(path: path, reason: reason)) { try SettingsFile(path: path).load() }
        // set refuses too, and leaves the file as it was.
        #expect(throws: SettingsError.corrupt(path: path, reason: reason)) {
            try SettingsStore(file: SettingsFile(path: path)).set(SettingKeys.introSeen, to: true)
        }
        #expect(dir.read("settings.json") == text)
    }

    @Test func aFolderInPlaceOfTheFileIsUnreadable() throws {
        let dir = TempFolder()
        try FileManager.default.createDirectory(atPath: dir.path + "/settings.json", withIntermediateDirectories: false)
        let path = dir.path + "/settings.json"
        #expect(throws: SettingsError.unreadable(path: path, reason: "a folder stands where the file should be")) {
            try SettingsFile(path: path).load()
        }
        #expect(throws: SettingsError.saveFailed(path: path, key: "inspection.enabled", reason: "a folder stands where the file should be")) {
            try SettingsStore(file: SettingsFile(path: path)).turnInspectionOff()
        }
    }

    @Test(.enabled(if: immutableFoldersWork(), "needs chattr +i (ext4/xfs), which stops even root"))
    func aFailedSaveKeepsTheOldValueAndTellsNobody() throws {
        let dir = TempFolder()
        let path = dir.path + "/settings.json"
        let session = RecordingSession()
        let store = SettingsStore(file: SettingsFile(path: path), liveSession: session)
        _ = try store.set(SettingKeys.inspectionEnabled, to: true)
        let before = dir.read("settings.json")
        #expect(Child.chattr("+i", dir.path))
        defer { _ = Child.chattr("-i", dir.path) }
        #expect(throws: SettingsError.saveFailed(path: path, key: "inspection.enabled", reason: "Operation not permitted")) {
            try store.set(SettingKeys.inspectionEnabled, to: false)
        }
        #expect(dir.read("settings.json") == before)
        #expect(try store.read()[SettingKeys.inspectionEnabled] == true)
        #expect(session.keys == ["inspection.enabled"])
        // Off always works where the file can still be written: in place, without the key
        // (a full disk's way out; here the folder takes no new file).
        #expect(try store.turnInspectionOff() == .turnedOff(wasOn: true, delivery: .applied))
        #expect(dir.read("settings.json") == "{}\n")
        #expect(try store.read()[SettingKeys.inspectionEnabled] == false)
    }

    @Test func inspectionOffRewritesACorruptFileAndKeepsTheOldBytes() throws {
        let dir = TempFolder()
        dir.write("settings.json", "{\"inspection.enabled\": tru")
        let path = dir.path + "/settings.json"
        let session = RecordingSession()
        let outcome = try SettingsStore(file: SettingsFile(path: path), liveSession: session).turnInspectionOff()
        #expect(outcome == .rewroteUnreadable(reason: "it is not valid JSON", keptCopyAt: path + ".corrupt", delivery: .applied))
        #expect(dir.read("settings.json") == "{\n  \"captures.maxAge\": \"off\",\n  \"captures.maxBytes\": \"off\",\n  \"history.maxAge\": \"off\",\n  \"inspection.enabled\": false\n}\n")
        #expect(dir.read("settings.json.corrupt") == "{\"inspection.enabled\": tru")
        #expect(session.keys == ["inspection.enabled"])
        // A second rewrite keeps the first copy: the next is `.corrupt-2`.
        dir.write("settings.json", "oops")
        let again = try SettingsStore(file: SettingsFile(path: path), liveSession: session).turnInspectionOff()
        #expect(again == .rewroteUnreadable(reason: "it is not valid JSON", keptCopyAt: path + ".corrupt-2", delivery: .applied))
        #expect(dir.read("settings.json.corrupt") == "{\"inspection.enabled\": tru")
        #expect(dir.read("settings.json.corrupt-2") == "oops")
        #expect(outcome.sentence(settingsPath: path) == "Inspection is now off. The settings file \(path) could not be read (it is not valid JSON), so it was rewritten with inspection off and every other setting at its default, except history.maxAge, captures.maxBytes and captures.maxAge: off, so that nothing kept is deleted before you set them again; the old file is kept at \(path).corrupt. The running session applied it.")
    }

    @Test func inspectionOffFromOnAndWhenAlreadyOff() throws {
        let dir = TempFolder()
        let store = SettingsStore(file: SettingsFile(path: dir.path + "/settings.json"))
        // Off by default: nothing to write.
        #expect(try store.turnInspectionOff() == .wasAlreadyOff(delivery: .noSession))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/settings.json"))
        _ = try store.set(SettingKeys.inspectionEnabled, to: true)
        #expect(try store.turnInspectionOff() == .turnedOff(wasOn: true, delivery: .noSession))
        #expect(try store.turnInspectionOff() == .wasAlreadyOff(delivery: .noSession))
        #expect(try store.read()[SettingKeys.inspectionEnabled] == false)
    }

    /// A full disk's way out: the record without the key, written where the longer one was.
    @Test func aShorterRecordIsWrittenInPlaceAndALongerOneRefused() throws {
        let dir = TempFolder()
        let file = SettingsFile(path: dir.path + "/settings.json")
        let on = SettingsRecord().setting(SettingKeys.inspectionEnabled, to: true).setting(SettingKeys.trustStore, to: "file:/b.pem")
        try file.save(on, changing: "inspection.enabled")
        try file.overwriteInPlace(on.removing(SettingKeys.inspectionEnabled), changing: "inspection.enabled")
        #expect(dir.read("settings.json") == "{\n  \"trust.store\": \"file:/b.pem\"\n}\n")
        #expect(try file.load()[SettingKeys.inspectionEnabled] == false)
        #expect(throws: SettingsError.saveFailed(path: file.path, key: "inspection.enabled", reason: "no space left on device")) {
            try file.overwriteInPlace(on, changing: "inspection.enabled")
        }
    }

    @Test func updateSavesSeveralKeysInOneWrite() throws {
        let dir = TempFolder()
        let session = RecordingSession()
        let store = SettingsStore(file: SettingsFile(path: dir.path + "/settings.json"), liveSession: session)
        let (record, deliveries) = try store.update {
            $0.setting(SettingKeys.inspectionEnabled, to: true).setting(SettingKeys.trustStore, to: "nss:/n")
        }
        #expect(record[SettingKeys.trustStore] == "nss:/n")
        #expect(deliveries.map(\.0) == ["inspection.enabled", "trust.store"])
        #expect(session.keys == ["inspection.enabled", "trust.store"])
        #expect(try store.read() == record)
    }

    @Test func settingValuesFromText() {
        #expect(Bool(text: "on") == true)
        #expect(Bool(text: "OFF") == false)
        #expect(Bool(text: "maybe") == nil)
        #expect(Int(text: "60") == 60)
        #expect(SettingKeys.all.map(\.name) == ["inspection.enabled", "trust.store", "intro.seen",
                                                 "content.keep", "content.expiry", "content.flowBudget", "tls.clientCerts", "requests.record", "log.requests",
                                                 "capture.enabled", "capture.snaplen", "capture.rotateBytes", "capture.rotateAge",
                                                 "captures.maxBytes", "captures.maxAge", "history.maxAge", "capture.decrypted", "store.url"])
        #expect(SettingKeys.all.map(\.defaultText) == ["off", "system", "off", "off", "1d", "1048576", "[]", "on", "off",
                                                        "on", "65535", "64MB", "1h", "2GB", "30d", "30d", "off", ""])
        #expect(SettingKeys.all.map(\.defaultJSON) == [.bool(false), .string("system"), .bool(false),
                                                        .bool(false), .string("1d"), .int(1_048_576), .array([]), .bool(true), .bool(false),
                                                        .bool(true), .int(65_535), .string("64MB"), .string("1h"),
                                                        .string("2GB"), .string("30d"), .string("30d"), .bool(false), .string("")])
        #expect([String](text: "") == [])
        #expect([String](text: "a=/f.pem") == ["a=/f.pem"])
        #expect([String](text: "[\"a=/f.pem\", \"b,c=/g.pem\"]") == ["a=/f.pem", "b,c=/g.pem"])
        #expect([String](text: "[1]") == nil)
        #expect([String](text: "[") == nil)
        #expect(["a=/f.pem"].text == "[\"a=/f.pem\"]")
    }
}

/// Whether `chattr +i` works on the temporary folder's file system.
func immutableFoldersWork() -> Bool {
    let dir = TempFolder()
    guard Child.chattr("+i", dir.path) else { return false }
    let blocked = !FileManager.default.createFile(atPath: dir.path + "/probe", contents: Data())
    _ = Child.chattr("-i", dir.path)
    return blocked
}
