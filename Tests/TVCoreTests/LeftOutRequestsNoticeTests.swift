import FlowStore
import FlowTerms
import Foundation
import Testing
import TVHome
@testable import TVCore

/// What `tv requests` and `tv export har` say of the flows they show whose requests were counted
/// without rows (only `tv flow` said it: a hostile-input trial's flood listed its last rows as if
/// they were the connection's all).
@Suite(.serialized) struct LeftOutRequestsNoticeTests {
    static let bounds = "tv writes a connection's first 10,000 requests, then 10 a second (far more than a browser makes; a flood such as"
        + " HTTP/2's rapid reset is held to that), and follows at most 256 of its HTTP/2 streams at once (a stream opened while that"
        + " many wait for their responses is counted)"

    @Test("one flow, several, more than ten, none: one sentence each, a JSON list, the HAR's part of its comment")
    func sentences() {
        let one = LeftOutRequestsNotice([(flow: 12, count: 5_000)])
        #expect(one.sentence == "Flow 12 had 5,000 requests read and counted without rows: " + Self.bounds + "; `tv flow 12` says how many have rows.")
        #expect(one.json.serialized() == "[{\"flow\":12,\"count\":5000}]")
        #expect(one.harNote == "flow 12 (5,000) had 5,000 requests read and counted without rows, so no entry here holds them unless kept content does: " + Self.bounds)
        let two = LeftOutRequestsNotice([(flow: 15, count: 1), (flow: 12, count: 5_000), (flow: 20, count: 0)])
        #expect(two.sentence == "Flows 12 (5,000) and 15 (1) had 5,001 requests read and counted without rows: " + Self.bounds + "; `tv flow ID` says how many have rows.")
        #expect(two.json.serialized() == "[{\"flow\":12,\"count\":5000},{\"flow\":15,\"count\":1}]")
        let single = LeftOutRequestsNotice([(flow: 3, count: 1)])
        #expect(single.harNote?.hasPrefix("flow 3 (1) had 1 request read and counted without rows, so no entry here holds it unless") == true)
        let many = LeftOutRequestsNotice((1...12).map { (flow: Int64($0), count: Int64(2)) })
        #expect(many.sentence?.hasPrefix("Flows 1 (2), 2 (2), 3 (2), 4 (2), 5 (2), 6 (2), 7 (2), 8 (2), 9 (2), 10 (2) and 2 more had 24 requests") == true)
        // The shared store's (`tv requests --store`): each flow as its lists name it, with its instance.
        let a = InstanceIdentity(id: "aaaaaaaa-1111", machine: "vm"), b = InstanceIdentity(id: "bbbbbbbb-2222", machine: "vm")
        let c = InstanceIdentity(id: "cccccccc-3333", machine: "laptop")
        let shared = LeftOutRequestsNotice(shared: [(instance: c, flow: 4, count: 3), (instance: a, flow: 12, count: 5_000)])
        #expect(shared.sentence == "Flows laptop:4 (3) and vm:12 (5,000) had 5,003 requests read and counted without rows: " + Self.bounds
                + "; `tv flow ID --store URL` says how many have rows.")
        #expect(shared.json.serialized() == #"[{"flow":4,"count":3,"instance":{"id":"cccccccc-3333","machine":"laptop"}},"#
                + #"{"flow":12,"count":5000,"instance":{"id":"aaaaaaaa-1111","machine":"vm"}}]"#)
        let twoVMs = LeftOutRequestsNotice(shared: [(instance: b, flow: 12, count: 1), (instance: a, flow: 12, count: 2)])
        #expect(twoVMs.sentence?.hasPrefix("Flows vm/aaaaaaaa:12 (2) and vm/bbbbbbbb:12 (1) had 3 requests") == true, "\(twoVMs.sentence ?? "")")
        #expect(LeftOutRequestsNotice(shared: [(instance: c, flow: 4, count: 3)]).sentence?.hasSuffix("; `tv flow laptop:4 --store URL` says how many have rows.") == true)
        let none = LeftOutRequestsNotice([])
        #expect(none.sentence == nil && none.harNote == nil && none.json.serialized() == "[]")
    }

    @Test("the store gives the counts of the flows asked about, once each, by id; tv export har notes them and puts them in its log comment")
    func fromTheStore() throws {
        let folder = try KeptContentFolder()
        defer { folder.remove() }
        let store = try FlowStore(path: folder.home.databasePath)
        let writer = try store.makeWriter()
        var flooded = FlowRecord(startTime: 1_764_471_900_000_000, clientAddress: "127.0.0.1", clientPort: 50_006, serverAddress: "192.0.2.6",
                                 serverPort: 443, host: "rows.test", hostOrigin: .sni, status: .inspected)
        flooded.requestsLeftOut = 5_000
        let six = writer.open(flooded)
        let plain = writer.open(FlowRecord(startTime: 1_764_471_900_000_000, clientAddress: "127.0.0.1", clientPort: 50_007,
                                           serverAddress: "192.0.2.6", serverPort: 443, host: "rows.test", hostOrigin: .sni, status: .inspected))
        for flow in [six.id, plain.id] {
            writer.enqueue(.exchange(ExchangeRecord(flowID: flow, sequence: 1, httpVersion: "HTTP/2", method: "GET", scheme: "https",
                                                    authority: "rows.test", path: "/one", status: 200, requestTime: 1_764_471_910_000_000,
                                                    endTime: 1_764_471_910_000_100, state: .complete)))
        }
        writer.close()
        let found = try store.requestsLeftOut(flows: [plain.id, six.id, six.id, 999] + Array(repeating: plain.id, count: 600) + (1_000...1_700).map { Int64($0) })
        #expect(found.map(\.flow) == [six.id] && found.map(\.count) == [5_000])
        store.close()

        let file = folder.path + "/out.har"
        let output = RecordedOutput()
        try HARReading(flowIDs: [six.id, plain.id], file: .path(file), creatorVersion: "9.9").run(home: folder.home, to: output)
        let sentence = "tv: Flow \(six.id) had 5,000 requests read and counted without rows: " + Self.bounds + "; `tv flow \(six.id)` says how many have rows."
        #expect(output.pieces.first == .note(sentence), "\(output.pieces)")
        let data = try #require(FileManager.default.contents(atPath: file))
        let log = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        #expect(log["comment"] as? String == "2 entries from 2 flows; 2 from exchange rows alone (no content kept: no headers, bodies or query strings)"
                + "; flow \(six.id) (5,000) had 5,000 requests read and counted without rows, so no entry here holds them unless kept content does: " + Self.bounds)
    }
}
