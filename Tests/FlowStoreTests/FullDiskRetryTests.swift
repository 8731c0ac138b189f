import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowStore
import FlowTerms

/// The flow writer on a real full disk (a tmpfs the test mounts and fills), as a new-user trial
/// met it: 16,384 flows waiting in memory, then some room made. Needs root (mount); skipped
/// otherwise. Every path unmounts.
@Suite("the flow writer on a full tmpfs: freed room goes to rows, not to the WAL", .serialized,
       .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct FullDiskRetryTests {
    /// Polls `done` every 50 ms for up to 60 s; false when it never held.
    func wait(_ done: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(60)
        repeat {
            if try done() { return true }
            usleep(50_000)
        } while Date() < deadline
        return false
    }

    func flow(_ n: Int) -> FlowRecord {
        sampleFlow(start: 1_800_000_000_000_000 + Int64(n) * 1_000, host: "host\(n % 400).example")
    }

    @Test("4 MiB freed on a full disk: the waiting flows go in, in parts, the WAL emptied between them, and the room goes to rows (the WAL took all 4 MiB and saved none); the rest freed: all are written, the WAL is left empty and new flows go in")
    func freedRoomGoesToRows() throws {
        let disk = try SmallDisk(megabytes: 30)
        defer { disk.unmount() }
        let store = try FlowStore(path: disk.path + "/tunnelvision.sqlite3")
        defer { store.close() }
        let writer = try store.makeWriter()
        defer { writer.close() }
        for n in 0..<1_000 { writer.open(flow(n)) }
        writer.flush()
        #expect(try store.count(FlowQuery()) == 1_000)

        // Full, with 4 MiB of it in one file; then 16,384 flows, every one waiting in memory.
        #expect(disk.fill("four", bytes: 4 << 20) == 4 << 20)
        disk.fill("rest")
        #expect(disk.freeBytes == 0)
        writer.pauseForTesting()
        for n in 1_000..<(1_000 + 16_384) { writer.open(flow(n)) }
        writer.resumeForTesting()
        writer.flush()
        var counters = writer.counters
        #expect(counters.failing && counters.unwrittenFlows == 16_384 && counters.flowsNotSaved == 0, "\(counters)")
        #expect(counters.lastError == .diskFull(path: disk.path + "/tunnelvision.sqlite3"))

        // 4 MiB back: two retries later, rows have taken the room and the WAL holds none of it.
        let failed = counters.failedWrites
        disk.free("four")
        #expect(wait { writer.counters.failedWrites >= failed + 2 || writer.counters.unwrittenFlows == 0 })
        counters = writer.counters
        let saved = try store.count(FlowQuery()) - 1_000
        let wal = disk.size("tunnelvision.sqlite3-wal")
        print("after 4 MiB freed: \(saved) flows saved, \(counters.unwrittenFlows) waiting, WAL \(wal) B, \(disk.freeBytes) B free, database \(disk.size("tunnelvision.sqlite3")) B")
        // Before: none saved, the WAL took all 4 MiB (4,874,240 bytes). Now (measured): 10,496 or
        // 11,008 saved, in whole parts; what a part could not fit in is free, or holds the last
        // part's frames in the WAL when the database could not grow to take them.
        #expect(saved > 8_192, "\(saved) of the waiting flows saved in the 4 MiB freed")
        #expect(saved % FullDiskWrites.partItems == 0, "\(saved) is not whole parts")
        #expect(saved + counters.unwrittenFlows == 16_384 && counters.flowsNotSaved == 0, "saved \(saved), \(counters)")
        #expect(wal + disk.freeBytes < 1 << 20, "the WAL keeps \(wal) bytes of the room freed, \(disk.freeBytes) bytes are free")

        // The rest back: everything is written, and the WAL is left empty.
        disk.free("rest")
        #expect(wait { !writer.counters.failing && writer.counters.unwrittenFlows == 0 })
        #expect(try store.count(FlowQuery()) == 17_384)
        #expect(writer.counters.flowsNotSaved == 0 && writer.counters.flowUpdatesNotSaved == 0)
        print("after the rest freed: WAL \(disk.size("tunnelvision.sqlite3-wal")) B, database \(disk.size("tunnelvision.sqlite3")) B, \(disk.freeBytes) B free")
        #expect(disk.size("tunnelvision.sqlite3-wal") == 0)
        for n in 17_384..<18_384 { writer.open(flow(n)) }
        writer.flush()
        #expect(try store.count(FlowQuery()) == 18_384)
        #expect(!writer.counters.failing)
    }

    @Test("the flow writer's standing for the other writers (`HistoryFirst`): clear while it writes; flows waiting once a write failed for the full disk; short of room once freed room took them, the disk still short of `FullDiskWrites.roomToLeave`")
    func standingForTheOtherWriters() throws {
        let disk = try SmallDisk(megabytes: 8)
        defer { disk.unmount() }
        let store = try FlowStore(path: disk.path + "/tunnelvision.sqlite3")
        defer { store.close() }
        let writer = try store.makeWriter()
        defer { writer.close() }
        for n in 0..<10 { writer.open(flow(n)) }
        writer.flush()
        #expect(writer.historyFirst.standing == .clear)

        disk.fill("rest")
        for n in 10..<1_010 { writer.open(flow(n)) }
        writer.flush()
        #expect(writer.counters.failing && writer.counters.unwrittenFlows > 0, "\(writer.counters)")
        #expect(writer.historyFirst.standing == .flowsWaiting)

        disk.free("rest")
        #expect(wait { writer.counters.unwrittenFlows == 0 && !writer.counters.failing })
        #expect(try store.count(FlowQuery()) == 1_010)
        #expect(disk.freeBytes < FullDiskWrites.roomToLeave)
        // Nothing waits: the others write again while they leave `HistoryFirst.reserveBytes`.
        #expect(writer.historyFirst.standing == .clear)
    }
}
