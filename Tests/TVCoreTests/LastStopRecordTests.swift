import FlowStore
import Foundation
import Recording
import Testing
import TVHome
@testable import TVCore
#if canImport(Glibc)
import Glibc
#endif

/// `LastStopRecord`: what the last session to stop could not save, for `tv status` and `tv diag`
/// after it (trial 43: 1,870 flows lost to a full disk left no trace once the session ended).
@Suite struct LastStopRecordTests {
    let at: Int64 = 1_796_591_649_000_000

    func lost() -> RecordingLosses {
        var losses = RecordingLosses()
        losses.flowsNotSaved = 1_870
        losses.flowUpdatesNotSaved = 3
        losses.contentTurnsNotSaved = 12_165
        losses.flowWritesFailed = 131
        losses.lastFlowError = "The disk holding the data folder is full (/d/tunnelvision.sqlite3 cannot grow); free some space on it and try again."
        return losses
    }

    @Test("the sentence: each loss as the stop said it, and that lost flows are in no list; nothing lost in the data folder, nothing said")
    func sentence() {
        let record = LastStopRecord(atMicros: at, pid: 29_127, losses: lost())
        #expect(record.sentence == "The last tv session (pid 29127), stopped 2026-12-06 21:14:09 UTC, could not save everything: 1870 flows never written, 3 flows without their last update, 12165 turns of decrypted content never written. Those flows are in no list: `tv flows` and `tv activity` cannot show them.")
        var turnsOnly = RecordingLosses()
        turnsOnly.contentTurnsNotSaved = 1
        #expect(LastStopRecord(atMicros: at, pid: 7, losses: turnsOnly).sentence == "The last tv session (pid 7), stopped 2026-12-06 21:14:09 UTC, could not save everything: 1 turn of decrypted content never written.")
        #expect(LastStopRecord(atMicros: at, pid: 7, losses: RecordingLosses()).sentence == nil)
        var sharedOnly = RecordingLosses()
        sharedOnly.sharedFlowsNotSaved = 5
        #expect(LastStopRecord(atMicros: at, pid: 7, losses: sharedOnly).sentence == nil)
    }

    @Test("the file's bytes: the record's JSON padded with spaces to 4,096, read back whole; an empty reservation or another text is no record")
    func bytes() {
        let record = LastStopRecord(atMicros: at, pid: 29_127, losses: lost())
        let bytes = record.bytes
        #expect(bytes.count == 4_096)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("{\"at\":1796591649000000,\"pid\":29127,\"values\":{\"recording.contentBytesDropped\":\"0\","))
        #expect(bytes.last == UInt8(ascii: " "))
        #expect(LastStopRecord(bytes: bytes) == record)
        #expect(LastStopRecord(bytes: Array("{}".utf8) + [UInt8](repeating: 32, count: 4_094)) == nil)
        #expect(LastStopRecord(bytes: Array("not json".utf8)) == nil)
        #expect(record.json.serialized() == "{\"at\":1796591649000000,\"pid\":29127,\"flowsNotSaved\":1870,\"flowUpdatesNotSaved\":3,\"contentTurnsNotSaved\":12165,\"decryptedPacketsNotSaved\":0,\"sentence\":\"" + (record.sentence ?? "") + "\"}")
    }

    @Test("reserved at the start (the last stop's record kept), written at the stop over the same bytes of the same file, read back; none at first")
    func reservedThenWrittenInPlace() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tv-laststop-\(getpid())-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let home = TVHome(path: root)
        try home.ensureExists()
        #expect(LastStopRecord.read(home) == nil)
        LastStopRecord.reserve(home)
        var info = stat()
        #expect(stat(LastStopRecord.path(home), &info) == 0 && info.st_size == 4_096 && info.st_mode & 0o777 == 0o600)
        let inode = info.st_ino
        #expect(LastStopRecord.read(home) == nil)
        let record = LastStopRecord(atMicros: at, pid: 29_127, losses: lost())
        record.write(home)
        #expect(stat(LastStopRecord.path(home), &info) == 0 && info.st_size == 4_096 && info.st_ino == inode)
        #expect(LastStopRecord.read(home) == record)
        // The next session's start keeps it, until its own stop replaces it.
        LastStopRecord.reserve(home)
        #expect(LastStopRecord.read(home) == record)
        LastStopRecord(atMicros: at + 1, pid: 8, losses: RecordingLosses()).write(home)
        #expect(LastStopRecord.read(home)?.sentence == nil)
        #expect(stat(LastStopRecord.path(home), &info) == 0 && info.st_ino == inode)
    }
}
