import Foundation
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
