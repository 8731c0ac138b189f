import Capture
import FlowStore
import FlowTerms
import Foundation
import Synchronization
import Testing
@testable import Tunnel
#if canImport(Glibc)
import Glibc
#endif

/// The decrypted capture with the flow history first (`HistoryFirst`): while the flow writer's
/// flows wait for room on a full disk, the capture takes none (its file closed whole, what comes
/// counted as not saved, said once); once they are written, a new file opens with the next
/// packets and recording resumes (trial 43: the capture and kept content took the room freed on
/// a full disk before 4,238 waiting flows could).
@Suite("DecryptedCapture held for the flow history", .serialized)
struct DecryptedCaptureHeldTests {
    @Test("held: the open file is closed whole, 20,000 bytes of one flow counted as not saved (no failed write), said once; cleared: a new file opens with the next packets, reopening the stream, and recording resumes")
    func heldThenResumed() throws {
        let files = DecryptedCaptureFilesTests()
        let dir = try files.folder("held")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let heard = DecryptedCaptureFilesTests.Heard()
        let signal = HistoryFirstSignal()
        let capture = DecryptedCapture(path: dir + "/" + DecryptedCapture.fileName(startMicros: DecryptedCaptureFilesTests.start),
                                       lingerMillis: 1, directBufferBytes: 16_384, historyFirst: signal) { change, counters in
            heard.changes.withLock { $0.append((change, counters)) }
        }
        files.begin(capture, 1, port: 50_001)
        files.feed(capture, 1, bytes: 5_000)
        capture.flush()
        let first = try #require(capture.counters.recording)

        signal.set(.flowsWaiting)
        files.feed(capture, 1, bytes: 20_000)
        capture.flush()
        var counters = capture.counters
        #expect(counters.recording == nil && counters.failing && counters.failedWrites == 0)
        #expect(counters.bytesNotSaved == 20_000 && counters.flowsNotSaved == 1 && counters.packetsNotSaved > 0)
        #expect(counters.lastFailure == .heldForHistory(.flowsWaiting))
        #expect(counters.lastFailure?.message == HistoryFirst.Hold.flowsWaiting.sentence("the decrypted capture"))
        #expect(heard.kinds == [.startedFailing])
        #expect(files.files(in: dir) == [dir + "/" + first])

        signal.set(.clear)
        files.feed(capture, 1, bytes: 3_000)
        capture.flush()
        counters = capture.counters
        let second = try #require(counters.recording)
        #expect(second != first && !counters.failing && counters.bytesNotSaved == 20_000 && counters.filesOpened == 2)
        #expect(heard.kinds == [.startedFailing, .resumed])
        capture.flowEnded(flow: 1, end: .closedByClient)
        capture.stop()
        #expect(files.files(in: dir) == [dir + "/" + first, dir + "/" + second].sorted())
        guard DecryptedCaptureFilesTests.tools else {
            Issue.record("tshark and capinfos are needed (Debian package tshark, in Scripts/packages.sh TEST_PACKAGES)")
            return
        }
        for path in files.files(in: dir) { #expect(files.unreadable(path) == nil, "\(path)") }
    }
}
