import Testing
@testable import FlowStore

/// `HistoryFirst`: where the flow writer stands after an attempt, and what the content writer and
/// the decrypted capture's writer may do then (trial 43: kept content took the room freed on a
/// full disk before 4,238 waiting flows could, and 1,870 flows were never written).
@Suite("the flow history first on a full disk: the flow writer's standing and the other writers' permission")
struct HistoryFirstTests {
    let full = FlowStoreError.diskFull(path: "/data/tunnelvision.sqlite3")

    @Test("standing: flows waiting after a full disk hold the others; once written, the disk still short after a full disk asks for the reserve; any other failure or a disk with room again is clear")
    func standing() {
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: nil, fullDisk: false) == .clear)
        #expect(HistoryFirst.standing(flowsWaiting: 4_238, failure: full, fullDisk: false) == .flowsWaiting)
        #expect(HistoryFirst.standing(flowsWaiting: 1, failure: full, fullDisk: true) == .flowsWaiting)
        // Written: the full-disk writes go on until a commit finds `FullDiskWrites.roomToLeave`.
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: nil, fullDisk: true) == .shortOfRoom)
        // Given up at the stop: nothing waits any more.
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: full, fullDisk: true) == .shortOfRoom)
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: full, fullDisk: false) == .clear)
        // Not the disk's fault: the others' room would not help the flows.
        let other = FlowStoreError.failed(path: "/data/tunnelvision.sqlite3", reason: "database is locked")
        #expect(HistoryFirst.standing(flowsWaiting: 12, failure: other, fullDisk: false) == .clear)
        #expect(HistoryFirst.standing(flowsWaiting: 12, failure: other, fullDisk: true) == .shortOfRoom)
    }

    @Test("permission: clear writes and flows waiting hold, neither asking the disk; short of room holds below the 16 MiB reserve and writes from it, or when the room cannot be told")
    func permission() {
        var asked = 0
        func free(_ bytes: Int64?) -> () -> Int64? { { asked += 1; return bytes } }
        #expect(HistoryFirst.permission(.clear, freeBytes: free(0)) == .write)
        #expect(HistoryFirst.permission(.flowsWaiting, freeBytes: free(1 << 30)) == .hold(.flowsWaiting))
        #expect(asked == 0)
        #expect(HistoryFirst.reserveBytes == 16_777_216)
        #expect(HistoryFirst.permission(.shortOfRoom, freeBytes: free(16_777_215)) == .hold(.reserve(freeBytes: 16_777_215)))
        #expect(HistoryFirst.permission(.shortOfRoom, freeBytes: free(0)) == .hold(.reserve(freeBytes: 0)))
        #expect(HistoryFirst.permission(.shortOfRoom, freeBytes: free(16_777_216)) == .write)
        #expect(HistoryFirst.permission(.shortOfRoom, freeBytes: free(nil)) == .write)
        #expect(asked == 4)
    }

    @Test("the sentences a held writer gives as its last error")
    func sentences() {
        #expect(HistoryFirst.Hold.flowsWaiting.sentence("decrypted content")
                == "The disk holding the data folder is full and flows wait in memory to be saved: the flow history comes first, so decrypted content takes no room until they are written; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room).")
        #expect(HistoryFirst.Hold.reserve(freeBytes: 5_452_595).sentence("the decrypted capture")
                == "The disk holding the data folder was full and has 5.2 MiB free, within the 16.0 MiB kept for the flow history: the decrypted capture takes none of it; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room).")
    }

    @Test("the signal: clear until the flow writer says otherwise; its permission asks the folder's disk only while short of room")
    func signal() {
        let signal = HistoryFirstSignal()
        #expect(signal.standing == .clear)
        #expect(signal.permission(writingIn: "/nonexistent-folder") == .write)
        signal.set(.flowsWaiting)
        #expect(signal.standing == .flowsWaiting)
        #expect(signal.permission(writingIn: "/nonexistent-folder") == .hold(.flowsWaiting))
        // A folder whose room cannot be told: written.
        signal.set(.shortOfRoom)
        #expect(signal.permission(writingIn: "/nonexistent-folder") == .write)
        signal.set(.clear)
        #expect(signal.standing == .clear)
    }

    @Test("a held write: failing without counting a failed attempt, said once; the next success resumes")
    func heldHealth() {
        var health = WriteHealth()
        #expect(health.recordHeld() == .startedFailing)
        #expect(health.failing && health.failedAttempts == 0)
        #expect(health.recordHeld() == nil)
        #expect(health.record(succeeded: false) == nil)
        #expect(health.failedAttempts == 1)
        #expect(health.recordHeld() == nil)
        #expect(health.record(succeeded: true) == .resumed)
        #expect(!health.failing && health.failedAttempts == 1)
    }
}
