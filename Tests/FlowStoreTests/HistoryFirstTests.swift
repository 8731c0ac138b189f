import Testing
@testable import FlowStore

/// `HistoryFirst`: where the flow writer stands after an attempt, and what the content writer and
/// the decrypted capture's writer may do then (trial 43: kept content took the room freed on a
/// full disk before 4,238 waiting flows could, and 1,870 flows were never written).
@Suite("the flow history first on a full disk: the flow writer's standing and the other writers' permission")
struct HistoryFirstTests {
    let full = FlowStoreError.diskFull(path: "/data/tunnelvision.sqlite3")

    @Test("standing: flows waiting after a full disk hold the others; any other failure, or nothing waiting, is clear")
    func standing() {
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: nil) == .clear)
        #expect(HistoryFirst.standing(flowsWaiting: 4_238, failure: full) == .flowsWaiting)
        #expect(HistoryFirst.standing(flowsWaiting: 1, failure: full) == .flowsWaiting)
        // Given up at the stop: nothing waits any more.
        #expect(HistoryFirst.standing(flowsWaiting: 0, failure: full) == .clear)
        // Not the disk's fault: the others' room would not help the flows.
        let other = FlowStoreError.failed(path: "/data/tunnelvision.sqlite3", reason: "database is locked")
        #expect(HistoryFirst.standing(flowsWaiting: 12, failure: other) == .clear)
    }

    @Test("permission: flows waiting hold without asking the disk; clear (from the first write, not only after a full disk: trial 44) holds when the batch would leave less than the 16 MiB reserve, and writes when it leaves it whole or the room cannot be told")
    func permission() {
        var asked = 0
        func free(_ bytes: Int64?) -> () -> Int64? { { asked += 1; return bytes } }
        #expect(HistoryFirst.permission(.flowsWaiting, bytes: 0, freeBytes: free(1 << 30)) == .hold(.flowsWaiting))
        #expect(asked == 0)
        #expect(HistoryFirst.reserveBytes == 16_777_216)
        #expect(HistoryFirst.permission(.clear, bytes: 0, freeBytes: free(16_777_215)) == .hold(.reserve(freeBytes: 16_777_215)))
        #expect(HistoryFirst.permission(.clear, bytes: 0, freeBytes: free(0)) == .hold(.reserve(freeBytes: 0)))
        #expect(HistoryFirst.permission(.clear, bytes: 0, freeBytes: free(16_777_216)) == .write)
        // A 64 KiB batch with 16 MiB + 64 KiB free leaves the reserve whole; one byte less does not.
        #expect(HistoryFirst.permission(.clear, bytes: 65_536, freeBytes: free(16_842_752)) == .write)
        #expect(HistoryFirst.permission(.clear, bytes: 65_536, freeBytes: free(16_842_751)) == .hold(.reserve(freeBytes: 16_842_751)))
        #expect(HistoryFirst.permission(.clear, bytes: 1 << 20, freeBytes: free(nil)) == .write)
        // Held: written again only with 1 MiB more (a small batch between big ones does not resume).
        #expect(HistoryFirst.permission(.clear, bytes: 0, held: true, freeBytes: free(17_825_791)) == .hold(.reserve(freeBytes: 17_825_791)))
        #expect(HistoryFirst.permission(.clear, bytes: 0, held: true, freeBytes: free(17_825_792)) == .write)
        #expect(asked == 8)
    }

    @Test("the sentences a held writer gives as its last error")
    func sentences() {
        #expect(HistoryFirst.Hold.flowsWaiting.sentence("decrypted content")
                == "The disk holding the data folder is full and flows wait in memory to be saved: the flow history comes first, so decrypted content takes no room until they are written; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room).")
        #expect(HistoryFirst.Hold.reserve(freeBytes: 5_452_595).sentence("the decrypted capture")
                == "The disk holding the data folder has 5.2 MiB free, within the 16.0 MiB kept for the flow history: the decrypted capture takes none of it; free some space on it (`tv content delete` deletes the kept decrypted content and decrypted captures, which needs no room; `tv storage` shows what takes the room).")
    }

    @Test("the signal: clear until the flow writer says otherwise; its permission asks the folder's disk unless flows wait")
    func signal() {
        let signal = HistoryFirstSignal()
        #expect(signal.standing == .clear)
        // A folder whose room cannot be told: written.
        #expect(signal.permission(writingIn: "/nonexistent-folder", bytes: 1 << 20) == .write)
        // This machine's disk, asked for more than it holds: held for the reserve.
        if case .hold(.reserve) = signal.permission(writingIn: "/", bytes: Int64.max / 2) {} else { Issue.record("not held") }
        signal.set(.flowsWaiting)
        #expect(signal.standing == .flowsWaiting)
        #expect(signal.permission(writingIn: "/nonexistent-folder", bytes: 0) == .hold(.flowsWaiting))
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
