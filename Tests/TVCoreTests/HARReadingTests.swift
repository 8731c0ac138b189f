import Foundation
import Testing
import TVHome
@testable import TVCore

/// `tv export har` from the stores: which flows go in, which are left out and why, and when
/// nothing is written (over `KeptContentFolder`, filled by the real writers).
@Suite(.serialized) struct HARReadingTests {
    func run(_ ids: [Int64], in folder: KeptContentFolder, file: String) throws -> [RecordedOutput.Piece] {
        let output = RecordedOutput()
        try HARReading(flowIDs: ids, file: file, creatorVersion: "9.9").run(home: folder.home, to: output)
        return output.pieces
    }

    @Test func flowsReadAsHTTPAreWrittenAndTheRestAreLeftOutWithTheReason() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let file = folder.path + "/out.har"
        let pieces = try run([1, 2, 3], in: folder, file: file)
        #expect(pieces == [
            .note("tv: left out flow 2: not read as HTTP — Only the server spoke, and not in HTTP/1, so this is not read as HTTP."),
            .note("tv: left out flow 3: Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."),
            .line("Wrote 1 HAR entry from 1 flow to \(file); it holds the kept bodies, so share it with care."),
        ])
        let data = try #require(FileManager.default.contents(atPath: file))
        #expect(data.last == 0x0A)
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let log = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        #expect((log["creator"] as? [String: Any])?["version"] as? String == "9.9")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        #expect((entries.first?["request"] as? [String: Any])?["url"] as? String == "https://a.test/hello")
        #expect(((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])?["text"] as? String == "hello")
    }

    @Test func entriesAndFlowsAreCountedInTheSummary() {
        #expect(HARReading.summary(entries: 1, flows: 1, file: "/x.har")
                == "Wrote 1 HAR entry from 1 flow to /x.har; it holds the kept bodies, so share it with care.")
        #expect(HARReading.summary(entries: 3, flows: 2, file: "/x.har")
                == "Wrote 3 HAR entries from 2 flows to /x.har; it holds the kept bodies, so share it with care.")
    }

    @Test func nothingIsWrittenWhenNoFlowHoldsHTTPOrAFlowIsNotThere() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let file = folder.path + "/out.har"
        let output = RecordedOutput()
        #expect(throws: ContentRefusal.noHTTP) {
            try HARReading(flowIDs: [3], file: file, creatorVersion: "9.9").run(home: folder.home, to: output)
        }
        #expect(output.pieces == [
            .note("tv: left out flow 3: Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."),
        ])
        #expect(ContentRefusal.noHTTP.message == "None of these flows holds kept HTTP, so nothing was written.")
        #expect(throws: ContentRefusal.noFlow(99)) { try run([1, 99], in: folder, file: file) }
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func damagedTurnRowsAreNotedAsTheirFlowIsRead() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try folder.damageTurn("direction", to: "sideways", flow: 2, turn: 1)
        let file = folder.path + "/out.har"
        #expect(try run([2, 1], in: folder, file: file) == [
            .note("tv: The row of turn 1 of flow 2 is damaged (direction is 'sideways'); it is left out."),
            .note("tv: left out flow 2: Inspected, and nothing was kept: keeping decrypted content was off for this connection, or what was kept has expired."),
            .line("Wrote 1 HAR entry from 1 flow to \(file); it holds the kept bodies, so share it with care."),
        ])
    }
}
