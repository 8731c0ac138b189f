import CTVShims
import Foundation
import Testing
@testable import Recording
import FlowTerms

/// What deleted turns leave in a segment that still holds other turns: cleared at the next sweep
/// (a trial read a request deleted by history.maxAge with `strings`, twelve minutes later, in the
/// segment being written).
@Suite struct SegmentHolesTests {
    @Test("the gaps no reference covers, merged and in order")
    func gaps() {
        #expect(SegmentHoles.gaps(referenced: [], size: 100) == [0..<100])
        #expect(SegmentHoles.gaps(referenced: [0..<100], size: 100) == [])
        #expect(SegmentHoles.gaps(referenced: [10..<20, 0..<5], size: 30) == [5..<10, 20..<30])
        // Overlapping and adjacent references, an empty one, one past the end.
        #expect(SegmentHoles.gaps(referenced: [0..<10, 5..<15, 15..<20, 22..<22, 25..<40], size: 30) == [20..<25])
        #expect(SegmentHoles.gaps(referenced: [0..<0], size: 0) == [])
    }

    @Test("a segment is read again only when some of it is unreferenced and its sum or size changed since it was cleared")
    func clearingRemembers() {
        let clearing = SegmentClearing()
        #expect(!clearing.needs(1, bytes: 100, referenced: 100))
        #expect(clearing.needs(1, bytes: 100, referenced: 60))
        clearing.cleared(1, referenced: 60, bytes: 100)
        #expect(!clearing.needs(1, bytes: 100, referenced: 60))
        #expect(clearing.needs(1, bytes: 100, referenced: 40))
        #expect(clearing.needs(1, bytes: 160, referenced: 100))
        // One turn deleted and one of the same size appended: the same sum, a larger file.
        #expect(clearing.needs(1, bytes: 150, referenced: 60))
        #expect(clearing.needs(2, bytes: 100, referenced: 60))
    }

    @Test("a segment's space on disk leaves out its holes; its length stays (turns are read at offsets in it)")
    func diskBytesLeaveOutHoles() throws {
        let home = TestHome()
        defer { home.clean() }
        let directory = ContentDirectory(path: home.contentPath)
        try directory.ensureExists()
        let file = directory.path(of: 1)
        try Data(repeating: 0x61, count: 1 << 20).write(to: URL(fileURLWithPath: file))
        let whole = try #require(directory.segments().first)
        #expect(whole.bytes == 1 << 20 && whole.diskBytes == 1 << 20)
        let fd = open(file, O_RDWR)
        defer { close(fd) }
        #expect(tv_punch_hole(fd, 0, 512 << 10) == 0)
        let punched = try #require(directory.segments().first)
        #expect(punched.bytes == 1 << 20)
        #expect(punched.diskBytes == 512 << 10)
        let store = try home.store()
        defer { store.close() }
        #expect(try store.usage().fileBytes == 512 << 10)
    }

    /// Two flows' turns in one segment; one flow forgotten; the writer's own sweep (the segment
    /// still being written) clears its bytes, keeps the other's, and the file keeps its size.
    @Test("a forgotten flow's bytes are zeros after the next sweep, in the segment being written and in a closed one")
    func forgottenFlowCleared() throws {
        let home = TestHome()
        defer { home.clean() }
        let clock = ManualContentClock(start: testEpoch)
        var configuration = home.configuration()
        configuration.sweepInterval = 3_600
        let session = ContentRecorder(writer: try ContentWriter(configuration, clock: clock), policy: ContentPolicy(keep: true))
        let secret = Array("GET /data.json?secret=1 HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8)
        let kept = Array("GET /kept HTTP/1.1\r\nHost: b.test\r\n\r\n".utf8)
        for (id, text) in [(Int64(1), secret), (2, kept), (3, Array("third flow's request, forgotten later".utf8)),
                           (4, Array("the fourth flow's request".utf8))] {
            let flow = try #require(session.recorder(flow: id))
            flow.record(.clientToServer, at: 0, text)
            flow.finish()
        }
        session.writer.flush()
        let file = home.contentPath + "/content-00000001.seg"
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(before.range(of: Data("secret=1".utf8)) != nil)

        // As history retention does from another connection: the flow's rows go.
        let store = try home.store()
        defer { store.close() }
        #expect(try store.forget(flow: 1) == 1)
        _ = try session.writer.sweep()
        let after = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(after.count == before.count)
        #expect(after.range(of: Data("secret".utf8)) == nil)
        #expect(after.prefix(secret.count).allSatisfy { $0 == 0 })
        #expect(try store.recordedTurns(flow: 2).map(\.bytes) == [kept])
        // A sweep with nothing newly forgotten reads no row of it; one after another flow is
        // forgotten clears that one too (the writer remembers what it cleared by the sum).
        _ = try session.writer.sweep()
        #expect(try store.forget(flow: 4) == 1)
        _ = try session.writer.sweep()
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)).range(of: Data("fourth".utf8)) == nil)
        #expect(try store.recordedTurns(flow: 2).map(\.bytes) == [kept])

        // Closed (the session ended): a command's sweep clears a flow forgotten then.
        session.writer.close()
        #expect(try store.forget(flow: 3) == 1)
        _ = try store.sweep(now: clock.now(), expiry: .oneDay)
        let closed = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(closed.range(of: Data("forgotten".utf8)) == nil && closed.count == before.count)
        #expect(try store.recordedTurns(flow: 2).map(\.bytes) == [kept])
    }
}
