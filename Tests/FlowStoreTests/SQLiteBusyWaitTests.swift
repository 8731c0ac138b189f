import Foundation
import Testing
@testable import FlowStore

@Suite struct SQLiteBusyWaitTests {
    @Test func shortSleepsFirstThenLongerOnesUpToTheTimeout() {
        #expect(SQLiteBusyWait.delayMicros(attempt: 0, timeoutMilliseconds: 5_000) == 100)
        #expect(SQLiteBusyWait.delayMicros(attempt: 19, timeoutMilliseconds: 5_000) == 100)
        #expect(SQLiteBusyWait.delayMicros(attempt: 20, timeoutMilliseconds: 5_000) == 500)
        #expect(SQLiteBusyWait.delayMicros(attempt: 55, timeoutMilliseconds: 5_000) == 500)
        #expect(SQLiteBusyWait.delayMicros(attempt: 56, timeoutMilliseconds: 5_000) == 2_000)
        #expect(SQLiteBusyWait.sleptMicros(before: 20) == 2_000)
        #expect(SQLiteBusyWait.sleptMicros(before: 56) == 20_000)
        #expect(SQLiteBusyWait.sleptMicros(before: 60) == 28_000)
        // 5 s: 20 ms in the short sleeps, then 2,490 sleeps of 2 ms; the next would pass it.
        #expect(SQLiteBusyWait.delayMicros(attempt: 56 + 2_489, timeoutMilliseconds: 5_000) == 2_000)
        #expect(SQLiteBusyWait.delayMicros(attempt: 56 + 2_490, timeoutMilliseconds: 5_000) == nil)
        // A 1 ms timeout: ten 100 µs sleeps, then give up.
        #expect(SQLiteBusyWait.delayMicros(attempt: 9, timeoutMilliseconds: 1) == 100)
        #expect(SQLiteBusyWait.delayMicros(attempt: 10, timeoutMilliseconds: 1) == nil)
        #expect(SQLiteBusyWait.delayMicros(attempt: 0, timeoutMilliseconds: 0) == nil)
    }

    /// A write waits for another connection's transaction and goes in once it commits.
    @Test func aWriteWaitsForAnotherConnectionsCommit() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let waiter = try SQLiteDatabase(path: path, busyTimeout: 5_000)
        try waiter.execute("CREATE TABLE t (x INTEGER)")
        let began = DispatchSemaphore(value: 0), committed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { committed.signal() }
            guard let holder = try? SQLiteDatabase(path: path) else { began.signal(); return }
            try? holder.execute("BEGIN IMMEDIATE")
            try? holder.execute("INSERT INTO t VALUES (1)")
            began.signal()
            usleep(30_000)
            try? holder.execute("COMMIT")
        }
        began.wait()
        try waiter.execute("INSERT INTO t VALUES (2)")
        committed.wait()
        #expect(try waiter.scalar("SELECT sum(x) FROM t") == .integer(3))
    }

    /// Past the timeout the statement fails as busy (the kind, not a hang).
    @Test func aLockHeldPastTheTimeoutFailsAsBusy() throws {
        let folder = makeTemporaryFolder()
        defer { removeFolder(folder) }
        let path = folder + "/t.sqlite3"
        let holder = try SQLiteDatabase(path: path, busyTimeout: 5_000)
        try holder.execute("CREATE TABLE t (x INTEGER)")
        let waiter = try SQLiteDatabase(path: path, busyTimeout: 40)
        try holder.execute("BEGIN IMMEDIATE")
        defer { try? holder.execute("ROLLBACK") }
        #expect {
            try waiter.execute("INSERT INTO t VALUES (2)")
        } throws: { error in
            guard case FlowStoreError.busy = error else { return false }
            return true
        }
    }
}
