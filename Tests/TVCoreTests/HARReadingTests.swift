import FlowFilter
import FlowStore
import FlowTerms
import Foundation
import HTTPReading
import Recording
import Synchronization
import Testing
import TVHome
@testable import TVCore

/// `tv export har` from the stores: which flows go in, which are left out and why, and when
/// nothing is written (over `KeptContentFolder`, filled by the real writers).
@Suite(.serialized) struct HARReadingTests {
    func run(_ ids: [Int64], in folder: KeptContentFolder, file: String) throws -> [RecordedOutput.Piece] {
        let output = RecordedOutput()
        try HARReading(flowIDs: ids, file: .path(file), creatorVersion: "9.9").run(home: folder.home, to: output)
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

    /// A plain request tv answered 502 fails its flow: still http://, as its rows say (a trial's
    /// export with content kept wrote https://); a TLS flow that failed is https://.
    @Test func aFailedPlainFlowIsHTTP() {
        var plain = FlowRecord(startTime: 1, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "127.0.0.1",
                               serverPort: 27_999, host: "127.0.0.1", hostOrigin: .connect, status: .failed)
        #expect(HARReading.harFlow(plain, id: 1, conversation: HTTPConversation(version: "HTTP/1.1")).scheme == "http")
        plain.clientVersions = ["TLSv1.3"]
        #expect(HARReading.harFlow(plain, id: 1, conversation: HTTPConversation(version: "HTTP/1.1")).scheme == "https")
    }

    /// Each entry says which program made its request (`_program`, a custom field), as `tv flow
    /// --json` does (a names trial: the HAR had none); nothing when it was not looked up.
    @Test func entriesCarryTheProgram() {
        var record = FlowRecord(startTime: 1, clientAddress: "127.0.0.1", clientPort: 50_000, serverAddress: "127.0.0.1",
                                serverPort: 80, host: "a.test", hostOrigin: .httpHost, status: .notEncrypted)
        let row = ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "http",
                                 authority: "a.test", path: "/", queryRemoved: false, requestTime: 2)
        func program(_ r: FlowRecord) -> String? {
            let flow = HARReading.harFlow(r, id: 1, conversation: HTTPConversation(version: "HTTP/1.1"))
            guard case .object(let fields) = HARRowEntry.entry(row, flow: flow) else { return nil }
            return fields.first { $0.0 == "_program" }.map { $0.1.serialized() }
        }
        #expect(program(record) == nil)
        record.program = .known(ProgramIdentity(pid: 42, command: "curl", executable: "/usr/bin/curl", uid: 1000, user: "u"))
        #expect(program(record) == #"{"known":true,"pid":42,"command":"curl","executable":"/usr/bin/curl","uid":1000,"user":"u","commandDisagrees":false}"#)
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
            try HARReading(flowIDs: [3], file: .path(file), creatorVersion: "9.9").run(home: folder.home, to: output)
        }
        #expect(output.pieces == [
            .note("tv: left out flow 3: Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."),
        ])
        #expect(ContentRefusal.noHTTP.message == "None of these flows holds kept HTTP or exchange rows, so nothing was written.")
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
            .note("tv: left out flow 2: Inspected, and nothing was kept: keeping decrypted content was off for this connection, what was kept has expired or was deleted (`tv content delete`), or it could not be written (a full disk: the session said so then)."),
            .line("Wrote 1 HAR entry from 1 flow to \(file); it holds the kept bodies, so share it with care."),
        ])
    }

    /// Flow 6: inspected, nothing kept, two exchange rows; flow 1 (kept content) gets a row too,
    /// its kept request's (the same method and path, made as its turn began), whose status the
    /// kept response's wins over.
    func addRows(_ folder: KeptContentFolder) throws {
        let store = try FlowStore(path: folder.home.databasePath)
        let writer = try store.makeWriter()
        let start: Int64 = 1_764_471_900_000_000
        let six = writer.open(FlowRecord(startTime: start + 10_000_000, clientAddress: "127.0.0.1", clientPort: 50_006,
                                         serverAddress: "192.0.2.6", serverPort: 443, host: "rows.test", hostOrigin: .sni, status: .inspected))
        #expect(six.id == 6)
        writer.enqueue(.exchange(ExchangeRecord(flowID: 1, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                                authority: "a.test", path: "/hello", status: 500, requestTime: start, state: .complete)))
        writer.enqueue(.exchange(ExchangeRecord(flowID: 6, sequence: 1, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                                authority: "rows.test", path: "/one", queryRemoved: true, status: 200, reason: "OK",
                                                responseBodyBytes: 5, responseWireBytes: 5, requestTime: start + 10_000_000,
                                                responseTime: start + 10_002_000, endTime: start + 10_003_000, state: .complete)))
        writer.enqueue(.exchange(ExchangeRecord(flowID: 6, sequence: 2, httpVersion: "HTTP/1.1", method: "POST", scheme: "https",
                                                authority: "rows.test", path: "/two", status: 404, reason: "Not Found",
                                                requestBodyBytes: 3, requestWireBytes: 3, responseBodyBytes: 0, responseWireBytes: 0,
                                                requestTime: start + 10_004_000, responseTime: start + 10_005_000,
                                                endTime: start + 10_005_000, state: .complete)))
        writer.close()
        store.close()
    }

    @Test func aRequestIDGivenForAFlowIsNamedAsOne() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try addRows(folder)
        let store = try FlowStore(path: folder.home.databasePath)
        defer { store.close() }
        let writer = try store.makeWriter()
        for sequence in 3...7 {
            writer.enqueue(.exchange(ExchangeRecord(flowID: 6, sequence: sequence, httpVersion: "HTTP/1.1", method: "GET", scheme: "https",
                                                    authority: "rows.test", path: "/\(sequence)", requestTime: 1_764_471_910_000_000, state: .complete)))
        }
        writer.close()
        #expect(try store.flow(id: 8) == nil)
        #expect(try store.exchange(id: 8)?.flowID == 6)
        var request = HARSelection()
        try request.add(["8"])
        #expect(throws: ContentRefusal.requestIDNotFlow(8, flow: 6)) { try request.flowIDs(in: store) }
        #expect(ContentRefusal.requestIDNotFlow(8, flow: 6).message
                == "There is no flow 8 in this data folder; 8 is the id of a request of flow 6 (`tv requests` ids are not flow ids), so name flow 6 or pick requests with --filter.")
        var neither = HARSelection()
        try neither.add(["6", "99"])
        #expect(throws: ContentRefusal.noFlow(99)) { try neither.flowIDs(in: store) }
    }

    /// Method, URL and status of each entry in `file`.
    func entries(_ file: String) throws -> [String] {
        let data = try #require(FileManager.default.contents(atPath: file))
        let log = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        return try #require(log["entries"] as? [[String: Any]]).map { entry in
            let request = entry["request"] as? [String: Any] ?? [:], response = entry["response"] as? [String: Any] ?? [:]
            return "\(request["method"] ?? "") \(request["url"] ?? "") \(response["status"] ?? "")"
        }
    }

    @Test func aFlowWithoutKeptContentIsWrittenFromItsExchangeRowsAndKeptContentWins() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try addRows(folder)
        let file = folder.path + "/out.har"
        #expect(try run([1, 6, 3], in: folder, file: file) == [
            .note("tv: left out flow 3: Not inspected: tv passed this connection through without decrypting it, so it never saw what was said."),
            .line("Wrote 3 HAR entries from 2 flows to \(file); 2 are from exchange rows alone (no content was kept: no headers, bodies or query strings); the rest hold the kept bodies, so share it with care."),
        ])
        #expect(try entries(file) == ["GET https://a.test/hello 200", "GET https://rows.test/one 200", "POST https://rows.test/two 404"])
        #expect(try run([6], in: folder, file: file) == [
            .line("Wrote 2 HAR entries from 1 flow to \(file); all are from exchange rows alone (no content was kept: no headers, bodies or query strings)."),
        ])
    }

    @Test func theFilterPicksRowsAsTvRequestsDoes() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try addRows(folder)
        let file = folder.path + "/out.har"
        let output = RecordedOutput()
        try HARReading(flowIDs: [1, 6], file: .path(file), creatorVersion: "9.9", filter: try FilterParser.parse("~c 404"), itemized: false)
            .run(home: folder.home, to: output)
        #expect(output.pieces == [.line("Wrote 1 HAR entry from 1 flow to \(file); it is from exchange rows alone (no content was kept: no headers, bodies or query strings).")])
        #expect(try entries(file) == ["POST https://rows.test/two 404"])
        #expect(throws: HARSelectionError.noRequestMatches) {
            try HARReading(flowIDs: [6], file: .path(file), creatorVersion: "9.9", filter: try FilterParser.parse("~m PUT"), itemized: false)
                .run(home: folder.home, to: RecordedOutput())
        }
    }

    @Test func theSummaryNamesEntriesFromRows() {
        #expect(HARReading.summary(entries: 1, fromRows: 1, flows: 1, file: "/x.har")
                == "Wrote 1 HAR entry from 1 flow to /x.har; it is from exchange rows alone (no content was kept: no headers, bodies or query strings).")
        #expect(HARReading.summary(entries: 4, fromRows: 1, flows: 2, file: "/x.har")
                == "Wrote 4 HAR entries from 2 flows to /x.har; 1 is from exchange rows alone (no content was kept: no headers, bodies or query strings); the rest hold the kept bodies, so share it with care.")
        // Kept content whose segment is gone is not "no content was kept" (a trial).
        #expect(HARReading.summary(entries: 2, unreadable: 2, flows: 1, file: "/x.har")
                == "Wrote 2 HAR entries from 1 flow to /x.har; all are from exchange rows alone (the kept content cannot be read: its segment file is gone or cut).")
    }

    @Test func theHARGoesToStandardOutputAndTheSummaryBesideIt() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let output = RecordedOutput()
        try HARReading(flowIDs: [1], file: .standardOutput, creatorVersion: "9.9").run(home: folder.home, to: output)
        guard case let .bytes(bytes)? = output.pieces.first else {
            Issue.record("\(output.pieces)")
            return
        }
        let log = (try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["log"] as? [String: Any]
        #expect((log?["entries"] as? [Any])?.count == 1)
        #expect(bytes.last == 0x0A)
        #expect(output.pieces.dropFirst() == [.note("tv: Wrote 1 HAR entry from 1 flow to standard output; it holds the kept bodies, so share it with care.")])
    }
}

/// The evidence bundle's HAR, made by several `tv web` threads at once.
@Suite(.serialized) struct EvidenceBundleHARTests {
    @Test("bundles made at once each get their own flows' requests, and leave nothing in the data folder (a file named by process id was shared: one bundle held another session's requests, and verified: a trial)")
    func concurrentBundlesKeepTheirOwnRequests() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        try HARReadingTests().addRows(folder)
        let expected: [[Int64]: String] = [[1]: "/hello", [6]: "/one"]
        let results = Mutex<[(flows: [Int64], har: String)]>([])
        DispatchQueue.concurrentPerform(iterations: 160) { index in
            // Each web request runs its command with stores of its own.
            let flows: [Int64] = index % 2 == 0 ? [1] : [6]
            guard let store = try? FlowStore(path: folder.home.databasePath), let content = try? ContentStore(readingHome: folder.home) else { return }
            defer { store.close() }
            let har = (try? EvidenceBundle.har(home: folder.home, flows: flows, span: 0...Int64.max, store: store, content: content, version: "9.9")) ?? nil
            results.withLock { $0.append((flows, har.map { String(decoding: $0, as: UTF8.self) } ?? "")) }
        }
        let all = results.withLock { $0 }
        #expect(all.count == 160)
        for (flows, har) in all {
            let other = expected[flows == [1] ? [6] : [1]]!
            #expect(har.contains(expected[flows]!) && !har.contains(other), "flows \(flows): \(har.prefix(300))")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.home.path).filter { $0.hasPrefix(".audit-bundle") }
        #expect(left.isEmpty, "\(left)")
    }
}
