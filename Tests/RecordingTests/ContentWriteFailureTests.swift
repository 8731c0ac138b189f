import Foundation
import Synchronization
import Testing
import FlowStore
@testable import Recording
import FlowTerms

@Suite struct ContentWriteFailureTests {
    @Test("a segment's error is the segment's, the index's is the index's, anything else is unexpected; the sentence is the error's own")
    func kinds() {
        let full = ContentError.diskFull(path: "/d/content/content-00000003.seg")
        #expect(ContentWriteFailure(full) == .segment(full))
        #expect(ContentWriteFailure(full).message == full.message)
        let index = FlowStoreError.cannotOpen(path: "/d/tunnelvision.sqlite3", reason: "unable to open database file")
        #expect(ContentWriteFailure(index) == .index(index))
        #expect(ContentWriteFailure(index).message == index.message)
        #expect(ContentWriteFailure(CocoaError(.fileWriteUnknown)) == .unexpected(String(describing: CocoaError(.fileWriteUnknown))))
        #expect(ContentWriteFailure.unexpected("E").message == "Storing decrypted content failed (E).")
    }

    @Test("a content folder removed under a running writer: the turn is lost and the counters hold the segment's typed failure, not its text")
    func removedFolder() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        let session = ContentRecorder(writer: try ContentWriter(home.configuration(), clock: clock), policy: ContentPolicy(keep: true))
        try FileManager.default.removeItem(atPath: home.contentPath)
        let flow = try #require(session.recorder(flow: 7))
        flow.record(.clientToServer, at: 0, Array("GET / HTTP/1.1\r\n\r\n".utf8))
        flow.finish()
        session.writer.flush()
        #expect(session.counters.turnsLost == 1)
        #expect(session.counters.turnsWritten == 0)
        #expect(session.counters.failing)
        #expect(session.counters.lastError == .segment(.cannotWrite(path: home.contentPath + "/" + SegmentName.newFileName(1),
                                                                     reason: "No such file or directory")))
        session.writer.close()
    }
}

/// The content writer with the flow history first (`HistoryFirst`): held while the flow writer's
/// flows wait for room, its turns take none and are counted as not saved, said once; written
/// again once the flows are (trial 43: kept content took the room freed on a full disk first).
@Suite struct ContentHeldForHistoryTests {
    /// What `onHealthChange` heard, in order.
    final class Heard: Sendable {
        let changes = Mutex<[(WriteHealth.Change, ContentCounters)]>([])
    }

    @Test("flows waiting: two turns held (not written, counted, no segment made, no failed write), said once with the hold's sentence; the flows written: the next turn is written and recording resumes")
    func heldThenResumed() throws {
        let home = TestHome()
        defer { home.clean() }
        let signal = HistoryFirstSignal()
        var configuration = home.configuration()
        configuration.historyFirst = signal
        let heard = Heard()
        let writer = try ContentWriter(configuration, clock: ManualContentClock(start: testEpoch)) { change, counters in
            heard.changes.withLock { $0.append((change, counters)) }
        }
        let session = ContentRecorder(writer: writer, policy: ContentPolicy(keep: true))
        signal.set(.flowsWaiting)
        let flow = try #require(session.recorder(flow: 7))
        flow.record(.clientToServer, at: 0, Array("GET / HTTP/1.1\r\n\r\n".utf8))
        flow.record(.serverToClient, at: 10, Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        flow.finish()
        writer.flush()
        var counters = session.counters
        #expect(counters.turnsLost == 2 && counters.turnsWritten == 0 && counters.bytesWritten == 0)
        #expect(counters.failing && counters.failedWrites == 0)
        #expect(counters.lastError == .heldForHistory(.flowsWaiting))
        #expect(counters.lastError?.message == HistoryFirst.Hold.flowsWaiting.sentence("decrypted content"))
        #expect(home.files().isEmpty)
        #expect(heard.changes.withLock { $0.map(\.0) } == [.startedFailing])
        #expect(heard.changes.withLock { $0.first?.1.lastError } == .heldForHistory(.flowsWaiting))

        signal.set(.clear)
        let next = try #require(session.recorder(flow: 8))
        next.record(.clientToServer, at: 0, Array("GET /again HTTP/1.1\r\n\r\n".utf8))
        next.finish()
        writer.flush()
        counters = session.counters
        #expect(counters.turnsLost == 2 && counters.turnsWritten == 1 && !counters.failing)
        #expect(heard.changes.withLock { $0.map(\.0) } == [.startedFailing, .resumed])
        #expect(home.files() == ["content-00000001.seg"])
        writer.close()
    }
}
