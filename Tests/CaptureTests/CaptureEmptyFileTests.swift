@testable import Capture
import FlowStore
import FlowTerms
import Foundation
import Testing

/// A last capture file no packet went into is not kept at the stop: every `tv exec` whose
/// command sent nothing left a 164-byte file and named it in its closing line (a trial's
/// folder held dozens). A file with packets, and one closed by a rotation, stay.
@Suite("Empty capture files at the stop", .serialized)
struct CaptureEmptyFileTests {
    @Test("a writer that wrote no packet leaves no file and no row, and names none among the files it opened")
    func nothingWritten() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        #expect(FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        writer.stop()
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        #expect(try scratch.catalog().files().isEmpty)
        #expect(writer.counters.sequencesOpened.isEmpty && writer.counters.emptyFilesRemoved == 1)
        // Its number was no file's: the next writer takes it.
        let next = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(next, flow: 2)
        next.stop()
        #expect(try scratch.catalog().files().map(\.seq) == [1])
        #expect(next.counters.sequencesOpened == [1] && next.counters.emptyFilesRemoved == 0)
    }

    @Test("after a rotation, the empty last file goes and the closed one with packets stays")
    func emptyAfterRotation() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(writer, flow: 3)
        writer.flush()
        _ = writer.rotate()
        writer.stop()
        let catalog = try scratch.catalog()
        #expect(try catalog.files().map(\.seq) == [1])
        #expect(try catalog.files().first?.packets == 7)
        #expect(FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(2)))
        #expect(writer.counters.sequencesOpened == [1])
    }
}
