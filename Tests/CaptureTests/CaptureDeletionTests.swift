import Capture
import FlowStore
import Foundation
import Testing

@Suite("Deleting a capture: the row is marked before the file goes, and a sweep removes what a crash left")
struct CaptureDeletionTests {
    @Test("The order: after every possible stop the row never names a file that is gone; the old order did")
    func crashWindow() {
        #expect(CaptureDeletion.order == [.markRowDeleted, .unlinkFile, .markRowUnlinked])
        #expect(CaptureDeletion.state(after: 0) == .init(rowDeleted: false, filePresent: true))
        #expect(CaptureDeletion.state(after: 1) == .init(rowDeleted: true, filePresent: true))
        #expect(CaptureDeletion.state(after: 2) == .init(rowDeleted: true, filePresent: false))
        #expect(CaptureDeletion.state(after: 3) == .init(rowDeleted: true, filePresent: false, rowUnlinked: true))
        #expect((0...3).map { CaptureDeletion.state(after: $0).isDangling } == [false, false, false, false])
        // Unlinking first (the order before) leaves a live row without its file after one step.
        let unlinkFirst: [CaptureDeletion.Step] = [.unlinkFile, .markRowDeleted]
        #expect(CaptureDeletion.state(after: 1, of: unlinkFirst) == .init(rowDeleted: false, filePresent: false))
        #expect(CaptureDeletion.state(after: 1, of: unlinkFirst).isDangling)
    }

    @Test("The sweep takes only a file under a deleted row that no writer holds")
    func sweepDecision() {
        let leftover = CaptureDeletion.State(rowDeleted: true, filePresent: true)
        #expect(CaptureDeletion.sweeps(leftover, isRecording: false))
        #expect(!CaptureDeletion.sweeps(leftover, isRecording: true))
        #expect(!CaptureDeletion.sweeps(.init(rowDeleted: false, filePresent: true), isRecording: false))
        #expect(!CaptureDeletion.sweeps(.init(rowDeleted: true, filePresent: false), isRecording: false))
        // What a stop after the first step leaves is what the sweep finishes.
        #expect(CaptureDeletion.sweeps(CaptureDeletion.state(after: 1), isRecording: false))
        // A file put back under a finished deletion's name is not the deletion's (it was swept,
        // silently: a re-check).
        #expect(!CaptureDeletion.sweeps(.init(rowDeleted: true, filePresent: true, rowUnlinked: true), isRecording: false))
    }

    /// Marks capture `seq`'s row deleted as `delete`'s first step does, and stops there (the
    /// crash between the two steps).
    static func markOnly(_ catalog: CaptureCatalog, seq: Int64) throws {
        let update = try catalog.database.prepare("UPDATE captures SET deleted_at = 7, recording = 0 WHERE seq = ?")
        try update.bind([.integer(seq)])
        _ = try update.step()
    }

    @Test("A real folder: a file left under a deleted row is swept by `sweepDeleted` and by the next writer's start; the recording file never")
    func sweepOnDisk() throws {
        let scratch = CaptureScratch()
        let writer = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(writer, flow: 8)
        writer.flush()
        _ = writer.rotate()
        Conversation.record(writer, flow: 9)
        writer.flush()
        _ = writer.rotate()
        let catalog = try scratch.catalog()
        try Self.markOnly(catalog, seq: 1)
        try Self.markOnly(catalog, seq: 3)  // the file being recorded: held, so kept
        #expect(FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        #expect(try catalog.files().map(\.seq) == [2])
        #expect(try catalog.sweepDeleted() == [1])
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(1)))
        #expect(FileManager.default.fileExists(atPath: scratch.folder.filePath(3)))
        #expect(try catalog.sweepDeleted() == [])
        // The packet rows stay: the connection stays in the history, only the bytes go.
        #expect(try catalog.packets(flow: 8).count == 7)
        writer.stop()

        // Stopped between the steps again, then a session starts: its writer sweeps.
        try Self.markOnly(catalog, seq: 2)
        let again = try CaptureWriter(configuration: scratch.configuration())
        Conversation.record(again, flow: 10)  // kept at its stop (an empty last file is not)
        again.stop()
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(2)))
        #expect(!FileManager.default.fileExists(atPath: scratch.folder.filePath(3)))
        #expect(try catalog.files().map(\.seq) == [4])
        catalog.close()
    }

    @Test("A file put back under the name of a finished deletion (from a backup) is left alone by the next writer's start; one under a deletion stopped half way is swept")
    func restoredFileKept() throws {
        let scratch = CaptureScratch()
        do {
            let writer = try CaptureWriter(configuration: scratch.configuration())
            Conversation.record(writer, flow: 8)
            writer.flush()
            _ = writer.rotate()
            writer.stop()
        }
        let catalog = try scratch.catalog()
        defer { catalog.close() }
        let path = scratch.folder.filePath(1)
        let backup = try #require(FileManager.default.contents(atPath: path))
        try catalog.delete(1, nowMicros: 5)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.createFile(atPath: path, contents: backup))
        let next = try CaptureWriter(configuration: scratch.configuration())
        next.stop()
        #expect(FileManager.default.contents(atPath: path) == backup)
        #expect(try catalog.sweepDeleted() == [])
    }
}
